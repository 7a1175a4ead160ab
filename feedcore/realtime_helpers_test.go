package feedcore

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/store"
)

// Helpers of the realtime tests (realtime_*_test.go).

// rtOptions are fast realtime options for tests: updates coalesced over
// 20ms rather than a second.
var rtOptions = RealtimeOptions{MinInterval: 20 * time.Millisecond}

// startRealtime runs s's realtime until the test ends, and waits until
// it serves subscriptions.
func startRealtime(tb testing.TB, s *Service, o RealtimeOptions) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx, o) }()
	tb.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			tb.Errorf("realtime: %v", err)
		}
	})
	waitFor(tb, "realtime to run", func() bool { return s.RealtimeRunning() })
}

// rtDeadline bounds every wait on a subscription's channel.
const rtDeadline = 20 * time.Second

// followingUpdates subscribes viewer from since, failing the test on an
// error; the subscription ends with the test.
func followingUpdates(tb testing.TB, s *Service, viewer store.ID, since string) <-chan FollowingUpdate {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	ch, err := s.FollowingFeedUpdates(ctx, viewer, since)
	if err != nil {
		tb.Fatal(err)
	}
	return ch
}

// updates keeps the last following update a subscription sent, and
// every post it reported deleted.
type updates struct {
	ch      <-chan FollowingUpdate
	last    FollowingUpdate
	n       int // updates taken
	deleted []store.ID
	closed  bool
}

// take takes what arrived without waiting.
func (u *updates) take() {
	for {
		select {
		case up, ok := <-u.ch:
			if !ok {
				u.closed = true
				return
			}
			u.last, u.n = up, u.n+1
			u.deleted = append(u.deleted, up.DeletedPostIDs...)
		default:
			return
		}
	}
}

// await waits until the updates taken satisfy cond, failing the test
// with what came last after rtDeadline.
func (u *updates) await(tb testing.TB, what string, cond func(*updates) bool) {
	tb.Helper()
	deadline := time.NewTimer(rtDeadline)
	defer deadline.Stop()
	for u.take(); !cond(u); u.take() {
		select {
		case up, ok := <-u.ch:
			if !ok {
				u.closed = true
				if !cond(u) {
					tb.Fatalf("subscription closed waiting for %s; last %+v", what, u.last)
				}
				return
			}
			u.last, u.n = up, u.n+1
			u.deleted = append(u.deleted, up.DeletedPostIDs...)
		case <-deadline.C:
			tb.Fatalf("timed out waiting for %s; last update %+v (%d taken)", what, u.last, u.n)
		}
	}
}

// awaitCount waits for an update of count n with authors (nil: any).
func (u *updates) awaitCount(tb testing.TB, n int, authors []store.ID) {
	tb.Helper()
	u.await(tb, fmt.Sprintf("count %d authors %v", n, authors), func(u *updates) bool {
		return u.last.NewPostCount == n && (authors == nil || slices.Equal(u.last.NewPostAuthors, authors))
	})
}

// newPostsOracle is what the subscription must say: the count and
// authors a last/before page read from since shows.
func newPostsOracle(tb testing.TB, s *Service, viewer store.ID, since string) (int, []store.ID) {
	tb.Helper()
	var edges []FeedEdge
	before := since
	for len(edges) < 100 {
		pg, err := s.FollowingFeed(context.Background(), FeedRequest{Viewer: viewer, Last: 100 - len(edges), Before: before})
		if err != nil {
			tb.Fatal(err)
		}
		edges = append(pg.Edges, edges...) // a later page is newer
		if !pg.HasPrevious || pg.StartCursor == before {
			break
		}
		before = pg.StartCursor
	}
	var authors []store.ID
	for _, e := range edges {
		a := e.Post.Author
		if e.Repost != nil {
			a = e.Repost.Author
		}
		if !slices.Contains(authors, a) && len(authors) < 3 {
			authors = append(authors, a)
		}
	}
	return min(len(edges), 100), authors
}

// topCursor is the cursor of viewer's newest item ("" for an empty feed).
func topCursor(tb testing.TB, s *Service, viewer store.ID) string {
	tb.Helper()
	pg, err := s.FollowingFeed(context.Background(), FeedRequest{Viewer: viewer, First: 1})
	if err != nil {
		tb.Fatal(err)
	}
	return pg.StartCursor
}
