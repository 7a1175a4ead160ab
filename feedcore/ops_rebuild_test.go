package feedcore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore"
)

// rebuildFixture is a random state built through the service: publishes
// (ties and old posts), deletes, follows, unfollows, reads and demotions,
// big-V crossings and live sessions in every state, drained.
type rebuildFixture struct {
	s     *Service
	m     *oracle
	users int
	feeds map[store.ID][]store.ID // every reader's following feed, paged to the end
	lives map[store.ID][]liveWant // and live feed
}

func newRebuildFixture(t *testing.T, seed uint64) *rebuildFixture {
	rng := rand.New(rand.NewPCG(seed, 99))
	clk := clockAt(testEpoch)
	s := testService(t, Options{InboxCap: 5, BigVThreshold: 3, ActiveWindow: time.Hour, Now: clk.now})
	ctx := context.Background()
	const users = 10
	m := newOracle(clk.now)
	for u := store.ID(1); u <= users; u++ {
		mustUsers(t, s, u)
		m.follows[u] = map[store.ID]bool{}
	}
	user := func() store.ID { return store.ID(1 + rng.IntN(users)) }
	// User 1 is the big-V: most follow it.
	for u := store.ID(2); u <= users; u++ {
		if u%3 != 0 {
			if err := s.Follow(ctx, u, 1); err != nil {
				t.Fatal(err)
			}
			m.follows[u][1] = true
		}
	}
	var sessions []*LiveSession
	next := store.ID(1000)
	for step := 0; step < 300; step++ {
		switch op := rng.IntN(100); {
		case op < 40:
			p := &content.Post{ID: next, Author: user(), Text: "p", CreatedAt: clk.now().Add(-time.Duration(rng.IntN(3)) * time.Second)}
			if rng.IntN(5) == 0 {
				p.CreatedAt = clk.now().Add(-time.Duration(rng.IntN(3000)) * time.Second)
			}
			next++
			if err := s.PutPost(ctx, p); err != nil {
				t.Fatal(err)
			}
			m.posts[p.ID] = p
		case op < 46:
			for _, id := range slices.Sorted(func(yield func(store.ID) bool) {
				for id := range m.posts {
					if !yield(id) {
						return
					}
				}
			}) {
				if p := m.posts[id]; !p.Deleted && rng.IntN(3) == 0 {
					if err := s.Delete(ctx, p.Author, p.ID); err != nil {
						t.Fatal(err)
					}
					p.Deleted = true
					break
				}
			}
		case op < 62:
			if a, b := user(), user(); a != b {
				if err := s.Follow(ctx, a, b); err != nil {
					t.Fatal(err)
				}
				m.follows[a][b] = true
			}
		case op < 68:
			if a, b := user(), user(); a != b && b != 1 {
				if err := s.Unfollow(ctx, a, b); err != nil {
					t.Fatal(err)
				}
				delete(m.follows[a], b)
			}
		case op < 78:
			if err := s.Touch(ctx, user()); err != nil {
				t.Fatal(err)
			}
		case op < 80:
			clk.advance(time.Duration(rng.IntN(90)) * time.Minute)
			if _, err := s.Sweep(ctx, 100); err != nil {
				t.Fatal(err)
			}
		case op < 90: // live sessions: schedule, start, end, cancel
			var err error
			var l *LiveSession
			switch k := rng.IntN(4); {
			case k == 0 || len(sessions) == 0:
				l, err = s.ScheduleLive(ctx, user(), "t", clk.now().Add(time.Duration(1+rng.IntN(50))*time.Minute))
				if err == nil {
					sessions = append(sessions, l)
				}
			default:
				i := rng.IntN(len(sessions))
				l = sessions[i]
				switch {
				case l.EndedAt != nil:
				case l.StartedAt == nil && k == 1:
					l, err = s.EndLive(ctx, l.Anchor, l.ID) // cancel
				case l.StartedAt == nil:
					l, err = s.StartLive(ctx, l.Anchor, l.ID)
				default:
					l, err = s.EndLive(ctx, l.Anchor, l.ID)
				}
				if err == nil {
					sessions[i] = l
				}
			}
			if err != nil {
				t.Fatal(err)
			}
		default:
			clk.advance(time.Duration(1+rng.IntN(3)) * time.Second)
		}
	}
	drain(t, s)
	f := &rebuildFixture{s: s, m: m, users: users, feeds: map[store.ID][]store.ID{}, lives: map[store.ID][]liveWant{}}
	for v := store.ID(1); v <= users; v++ {
		f.feeds[v] = readAll(t, s, v, 3)
		if want := m.feed(v); !slices.Equal(f.feeds[v], want) {
			t.Fatalf("before rebuild, viewer %d:\n got %v\nwant %v", v, f.feeds[v], want)
		}
		f.lives[v] = pageLive(t, s, v, 2, nil)
	}
	return f
}

// check compares every reader's feeds with the recorded ones.
func (f *rebuildFixture) check(t *testing.T, when string) {
	t.Helper()
	for v := store.ID(1); v <= store.ID(f.users); v++ {
		for _, n := range []int{1, 4, 100} {
			if got := readAll(t, f.s, v, n); !slices.Equal(got, f.feeds[v]) {
				t.Fatalf("%s, viewer %d, page size %d:\n got %v\nwant %v", when, v, n, got, f.feeds[v])
			}
		}
		if got := pageLive(t, f.s, v, 2, nil); !slices.Equal(got, f.lives[v]) {
			t.Fatalf("%s, viewer %d live feed:\n got %v\nwant %v", when, v, got, f.lives[v])
		}
	}
}

// derivedPatterns are the key prefixes of every derived structure.
var derivedPatterns = []string{"fr:{", "ac:{", "pm:{", "i:{", "o:{", "ri:{", "ro:{", "rr:{", "lq:{", "lss:{", "lsd:{", "bf:{", "fa:{", "an:{"}

// dropDerived deletes every derived key, and the horizon fields of the
// readers' hashes (their complete flag is a record).
func dropDerived(t *testing.T, s *Service) int {
	t.Helper()
	ctx := context.Background()
	n := 0
	for _, p := range derivedPatterns {
		err := redisstore.ScanPrefix(ctx, s.Redis, s.Keys.Prefix+p, func(keys []string) error {
			for _, k := range keys {
				if err := s.Redis.Do(ctx, s.Redis.B().Unlink().Key(k).Build()).Error(); err != nil {
					return err
				}
				n++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	err := redisstore.ScanPrefix(ctx, s.Redis, s.Keys.Prefix+"rs:{", func(keys []string) error {
		for _, k := range keys {
			if err := s.Redis.Do(ctx, s.Redis.B().Hdel().Key(k).Field("ht", "hm").Build()).Error(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRebuildFromRecords(t *testing.T) {
	for seed := range uint64(2) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			f := newRebuildFixture(t, seed)
			if n := dropDerived(t, f.s); n == 0 {
				t.Fatal("no derived key to drop")
			}
			broken := 0
			for v := store.ID(1); v <= store.ID(f.users); v++ {
				if !slices.Equal(readAll(t, f.s, v, 100), f.feeds[v]) {
					broken++
				}
			}
			if broken == 0 {
				t.Fatal("dropping the derived keys changed no feed: the test proves nothing")
			}
			st, err := f.s.Rebuild(context.Background(), RebuildOptions{Batch: 3})
			if err != nil {
				t.Fatal(err)
			}
			if st.Readers != int64(f.users) || st.InboxEntries == 0 || st.BigV == 0 || st.Sessions == 0 {
				t.Fatalf("stats %+v", st)
			}
			f.check(t, "after rebuild from records")
		})
	}
}

// TestRebuildRepairsInboxes corrupts inboxes (entries dropped, a foreign
// post added) and rebuilds over them.
func TestRebuildRepairsInboxes(t *testing.T) {
	f := newRebuildFixture(t, 7)
	s, ctx := f.s, context.Background()
	corrupted := 0
	stale := map[store.ID]store.ID{}
	for v := store.ID(1); v <= store.ID(f.users); v++ {
		in, err := s.Newest(ctx, s.Keys.Inbox(v), 100)
		if err != nil {
			t.Fatal(err)
		}
		for i, it := range in {
			if i%2 == 0 {
				if err := s.Do(ctx, s.Redis.B().Zrem().Key(s.Keys.Inbox(v)).Member(store.Member(it.ID)).Build()).Error(); err != nil {
					t.Fatal(err)
				}
			}
		}
		for _, p := range f.m.posts { // a post by someone v does not follow
			if p.Author != v && !f.m.follows[v][p.Author] && !p.Deleted {
				if err := s.Do(ctx, s.Redis.B().Zadd().Key(s.Keys.Inbox(v)).ScoreMember().ScoreMember(float64(p.CreatedAt.UnixMilli()+10_000_000), store.Member(p.ID)).Build()).Error(); err != nil {
					t.Fatal(err)
				}
				// and that author among v's big-V followees
				if err := s.Do(ctx, s.Redis.B().Sadd().Key(s.Keys.BigFollowees(v)).Member(store.Member(p.Author)).Build()).Error(); err != nil {
					t.Fatal(err)
				}
				stale[v] = p.Author
				corrupted += 2
				break
			}
		}
	}
	if corrupted == 0 {
		t.Fatal("no foreign post to add")
	}
	st, err := s.Rebuild(ctx, RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Removed < int64(corrupted) {
		t.Fatalf("removed %d entries, corrupted %d", st.Removed, corrupted)
	}
	for v, a := range stale {
		if in, _ := s.Do(ctx, s.Redis.B().Sismember().Key(s.Keys.BigFollowees(v)).Member(store.Member(a)).Build()).AsBool(); in {
			t.Errorf("user %d still lists %d, whom it does not follow, among its big-V followees", v, a)
		}
	}
	f.check(t, "after repairing corrupt inboxes")
}

// TestRebuildResumes stops a rebuild part way through the inboxes and
// finishes it with a second run from the checkpoint.
func TestRebuildResumes(t *testing.T) {
	f := newRebuildFixture(t, 3)
	dropDerived(t, f.s)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err := f.s.Rebuild(ctx, RebuildOptions{Batch: 2, Progress: func(p RebuildProgress) {
		if p.Phase == "inboxes" && p.Done >= 4 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	st, err := f.s.Rebuild(context.Background(), RebuildOptions{Batch: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Resumed || st.Readers != int64(f.users-4) || st.Follows != 0 {
		t.Fatalf("second run did not resume where the first stopped: %+v", st)
	}
	f.check(t, "after a resumed rebuild")
	if n, err := f.s.Redis.Do(context.Background(), f.s.Redis.B().Exists().Key(f.s.Keys.Rebuild()).Build()).AsInt64(); err != nil || n != 0 {
		t.Fatalf("checkpoint left after a finished rebuild: %d %v", n, err)
	}
}
