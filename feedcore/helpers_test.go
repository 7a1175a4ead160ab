package feedcore

import (
	"context"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// testService is a Service on a fresh store with workers running.
func testService(tb testing.TB, o Options) *Service {
	tb.Helper()
	s := newService(tb, storetest.New(tb), o)
	startWorkers(tb, s, WorkerOptions{})
	return s
}

// newService is a Service on st without workers.
func newService(tb testing.TB, st *storetest.Store, o Options) *Service {
	tb.Helper()
	o.Prefix = st.Prefix
	o.CursorKey = []byte("test-cursor-key-0123456789")
	s, err := New(context.Background(), st.Client, o)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// startWorkers runs s's workers until the returned stop is called (or the
// test ends); stop waits for them to return.
func startWorkers(tb testing.TB, s *Service, wo WorkerOptions) (stop func()) {
	tb.Helper()
	if wo.Block == 0 {
		wo.Block = 50 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.RunWorkers(ctx, wo)
	}()
	stop = func() { cancel(); <-done }
	tb.Cleanup(stop)
	return stop
}

func drain(tb testing.TB, s *Service) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := s.Drain(ctx); err != nil {
		tb.Fatal(err)
	}
}

func mustUsers(tb testing.TB, s *Service, ids ...store.ID) {
	tb.Helper()
	for _, id := range ids {
		if err := s.PutUser(context.Background(), User{ID: id, Handle: "u" + store.FormatID(id)}); err != nil {
			tb.Fatal(err)
		}
	}
}

// itemID is the id of the item an edge is: its repost's, or its post's.
func itemID(e FeedEdge) store.ID {
	if e.Repost != nil {
		return e.Repost.ID
	}
	return e.Post.ID
}

// readAll pages the whole feed with page size n and returns the item ids
// (post ids, and repost ids for reposts).
func readAll(tb testing.TB, s *Service, viewer store.ID, n int) []store.ID {
	tb.Helper()
	var out []store.ID
	after := ""
	for pages := 0; ; pages++ {
		if pages > 10000 {
			tb.Fatal("feed does not end")
		}
		pg, err := s.FollowingFeed(context.Background(), FeedRequest{Viewer: viewer, First: n, After: after})
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range pg.Edges {
			out = append(out, itemID(e))
		}
		if len(pg.Edges) > n {
			tb.Fatalf("page of %d edges for first=%d", len(pg.Edges), n)
		}
		if !pg.HasNext {
			return out
		}
		if pg.EndCursor == "" || pg.EndCursor == after {
			tb.Fatalf("endCursor did not advance (%q)", pg.EndCursor)
		}
		after = pg.EndCursor
	}
}

// idRange is the n ids from, from+1, ...
func idRange(from store.ID, n int) []store.ID {
	out := make([]store.ID, n)
	for i := range out {
		out[i] = from + store.ID(i)
	}
	return out
}

// addUsers stores users ids (handles "u<id>"), 1,000 a batch.
func addUsers(ctx context.Context, s *Service, ids []store.ID) error {
	for len(ids) > 0 {
		n := min(len(ids), 1000)
		us := make([]User, n)
		for i, id := range ids[:n] {
			us[i] = User{ID: id, Handle: "u" + store.FormatID(id)}
		}
		if _, err := s.PutUsers(ctx, us); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// addFollows follows edges through FollowMany, 1,000 a batch.
func addFollows(ctx context.Context, s *Service, edges []Edge) error {
	for len(edges) > 0 {
		n := min(len(edges), 1000)
		if _, err := s.FollowMany(ctx, edges[:n]); err != nil {
			return err
		}
		edges = edges[n:]
	}
	return nil
}

func putUsers(tb testing.TB, s *Service, ids []store.ID) {
	tb.Helper()
	if err := addUsers(context.Background(), s, ids); err != nil {
		tb.Fatal(err)
	}
}

func followEdges(tb testing.TB, s *Service, edges []Edge) {
	tb.Helper()
	if err := addFollows(context.Background(), s, edges); err != nil {
		tb.Fatal(err)
	}
}

// follow makes reader follow targets.
func follow(tb testing.TB, s *Service, reader store.ID, targets []store.ID) {
	tb.Helper()
	edges := make([]Edge, len(targets))
	for i, f := range targets {
		edges[i] = Edge{Follower: reader, Followee: f}
	}
	followEdges(tb, s, edges)
}

// followerEdges are the edges of ids following author.
func followerEdges(ids []store.ID, author store.ID) []Edge {
	edges := make([]Edge, len(ids))
	for i, f := range ids {
		edges[i] = Edge{Follower: f, Followee: author}
	}
	return edges
}
