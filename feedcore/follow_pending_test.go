package feedcore

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/roundtrip"
)

// heldSettles holds the settles of follows (Options.SettleFollow) until
// the test runs them: follows that settle late, in an order of its
// choosing.
type heldSettles struct {
	mu sync.Mutex
	q  []func(context.Context) error
}

func (h *heldSettles) hold(settle func(context.Context) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.q = append(h.q, settle)
}

func (h *heldSettles) len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.q)
}

// run runs the i-th settle still held (in the order held) and drops it.
func (h *heldSettles) run(tb testing.TB, i int) {
	tb.Helper()
	h.mu.Lock()
	settle := h.q[i]
	h.q = slices.Delete(h.q, i, i+1)
	h.mu.Unlock()
	if err := settle(context.Background()); err != nil {
		tb.Fatalf("a follow's late settle: %v", err)
	}
}

func (h *heldSettles) runAll(tb testing.TB) {
	tb.Helper()
	for h.len() > 0 {
		h.run(tb, 0)
	}
}

// pendingFollows reads viewer's pending follows: followee, marked at (ms).
func pendingFollows(tb testing.TB, s *Service, viewer store.ID) map[store.ID]int64 {
	tb.Helper()
	return zscores(tb, s, s.Keys.PendingFollows(viewer))
}

// followFixture: the reader follows other (settled), and other and the followee
// have 10 posts each, interleaved in time; the inbox cap of 5 holds only
// half of the other's, so pages read below the inbox horizon too.
func followFixture(t *testing.T, o Options) (s *Service, held *heldSettles, all []store.ID) {
	t.Helper()
	held = &heldSettles{}
	o.InboxCap, o.SettleFollow = 5, held.hold
	s = testService(t, o)
	mustUsers(t, s, pfReader, pfFollowee, pfOther)
	if err := s.Follow(context.Background(), pfReader, pfOther); err != nil {
		t.Fatal(err)
	}
	held.runAll(t)
	if err := s.Touch(context.Background(), pfReader); err != nil {
		t.Fatal(err)
	}
	for i := range store.ID(20) {
		author := pfOther
		if i%2 == 0 {
			author = pfFollowee
		}
		mustPost(t, s, 100+i, author)
		all = append(all, 100+i)
	}
	drain(t, s)
	return s, held, all
}

const (
	pfReader   = store.ID(1)
	pfFollowee = store.ID(2)
	pfOther    = store.ID(3)
)

// TestFollowShowsBeforeItSettles: right after followUser answers, before
// its settle (the backfill) has run, the follower's pages show the
// followee's recent posts, paged either way and at any size: they merge
// the followee's outbox while the follow is pending. Once it settles the
// inbox holds them, the mark is gone, and the pages are the same.
func TestFollowShowsBeforeItSettles(t *testing.T) {
	s, held, all := followFixture(t, Options{})
	ctx := context.Background()
	if err := s.Follow(ctx, pfReader, pfFollowee); err != nil {
		t.Fatal(err)
	}
	if held.len() != 1 {
		t.Fatalf("%d settles held, want the follow's", held.len())
	}
	if _, ok := pendingFollows(t, s, pfReader)[pfFollowee]; !ok {
		t.Fatalf("pending follows %v, want %d", pendingFollows(t, s, pfReader), pfFollowee)
	}
	if in := timelineIDs(t, s, s.Keys.Inbox(pfReader)); slices.ContainsFunc(in, func(id store.ID) bool { return id%2 == 0 }) {
		t.Fatalf("inbox %v holds followee's posts before the backfill: the test shows nothing", in)
	}
	want := newestFirst(all)
	pg, err := s.FollowingFeed(ctx, FeedRequest{Viewer: pfReader, First: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got := []store.ID{itemID(pg.Edges[0]), itemID(pg.Edges[1]), itemID(pg.Edges[2])}; !slices.Equal(got, want[:3]) {
		t.Fatalf("the page right after the follow: %v, want %v", got, want[:3])
	}
	check := func(when string) {
		t.Helper()
		for _, n := range []int{1, 3, 7, 100} {
			if got := readAll(t, s, pfReader, n); !slices.Equal(got, want) {
				t.Fatalf("%s, pages of %d: %v, want %v", when, n, got, want)
			}
		}
		if got := readAllBackward(t, s, pfReader, 2); !slices.Equal(got, want) {
			t.Fatalf("%s, backward: %v, want %v", when, got, want)
		}
	}
	check("before the follow settled")

	held.runAll(t)
	if p := pendingFollows(t, s, pfReader); len(p) != 0 {
		t.Fatalf("pending follows %v after the settle, want none", p)
	}
	if in := timelineIDs(t, s, s.Keys.Inbox(pfReader)); !slices.Contains(in, 118) {
		t.Fatalf("inbox %v after the settle: followee's newest post (118) was not backfilled", in)
	}
	check("after the follow settled")
}

// TestPendingFollowNeverBringsBackTheAuthor: an unfollow, block or mute
// made while the follow is pending keeps the followee's posts out of the
// follower's pages, before and after the late settle, which leaves no
// mark behind.
func TestPendingFollowNeverBringsBackTheAuthor(t *testing.T) {
	ctx := context.Background()
	for _, undo := range []struct {
		name string
		do   func(*Service) error
	}{
		{"unfollow", func(s *Service) error { return s.Unfollow(ctx, pfReader, pfFollowee) }},
		{"block", func(s *Service) error { return s.Block(ctx, pfReader, pfFollowee) }},
		{"blocked", func(s *Service) error { return s.Block(ctx, pfFollowee, pfReader) }},
		{"mute", func(s *Service) error { return s.Mute(ctx, pfReader, pfFollowee, 0) }},
	} {
		t.Run(undo.name, func(t *testing.T) {
			s, held, all := followFixture(t, Options{})
			if err := s.Follow(ctx, pfReader, pfFollowee); err != nil {
				t.Fatal(err)
			}
			if err := undo.do(s); err != nil {
				t.Fatal(err)
			}
			var want []store.ID // the other's posts: the odd ones
			for _, id := range newestFirst(all) {
				if id%2 == 1 {
					want = append(want, id)
				}
			}
			// No drain: it would wait for the held settle's journal entry.
			if got := readAll(t, s, pfReader, 3); !slices.Equal(got, want) {
				t.Fatalf("pending follow undone by %s: %v, want %v", undo.name, got, want)
			}
			held.runAll(t)
			drain(t, s)
			if got := readAll(t, s, pfReader, 3); !slices.Equal(got, want) {
				t.Fatalf("after the late settle: %v, want %v", got, want)
			}
			if p := pendingFollows(t, s, pfReader); len(p) != 0 {
				t.Fatalf("pending follows %v after the settle, want none", p)
			}
		})
	}
}

// TestLateSettleKeepsALaterFollowsMark: follow, unfollow and follow again
// before either follow settled; the first follow's settle, run first,
// leaves the second's mark (made later), and the pages show the followee
// throughout; the second's settle clears it.
func TestLateSettleKeepsALaterFollowsMark(t *testing.T) {
	clk := clockAt(time.UnixMilli(1e12 + 1000))
	s, held, all := followFixture(t, Options{Now: clk.now})
	ctx := context.Background()
	if err := s.Follow(ctx, pfReader, pfFollowee); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	if err := s.Unfollow(ctx, pfReader, pfFollowee); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	if err := s.Follow(ctx, pfReader, pfFollowee); err != nil {
		t.Fatal(err)
	}
	want := newestFirst(all)
	held.run(t, 0)
	if p := pendingFollows(t, s, pfReader); p[pfFollowee] != clk.now().UnixMilli() {
		t.Fatalf("pending follows %v after the first follow's settle, want %d at %d", p, pfFollowee, clk.now().UnixMilli())
	}
	if got := readAll(t, s, pfReader, 4); !slices.Equal(got, want) {
		t.Fatalf("after the first settle: %v, want %v", got, want)
	}
	held.runAll(t)
	if p := pendingFollows(t, s, pfReader); len(p) != 0 {
		t.Fatalf("pending follows %v after both settles, want none", p)
	}
	if got := readAll(t, s, pfReader, 4); !slices.Equal(got, want) {
		t.Fatalf("after both settles: %v, want %v", got, want)
	}
}

// TestPendingFollowPageRoundTrips: a page with follows pending costs one
// Redis round trip more than the same page once they settled (every
// pending followee's outbox is sought in one round trip, as an incomplete
// reader's big-V outboxes are), however many are pending, and shows their
// posts.
func TestPendingFollowPageRoundTrips(t *testing.T) {
	held := &heldSettles{}
	s := testService(t, Options{SettleFollow: held.hold})
	ctx := context.Background()
	authors := idRange(10, 4)
	mustUsers(t, s, pfReader, pfOther)
	putUsers(t, s, authors)
	if err := s.Follow(ctx, pfReader, pfOther); err != nil {
		t.Fatal(err)
	}
	held.runAll(t)
	if err := s.Touch(ctx, pfReader); err != nil {
		t.Fatal(err)
	}
	for i := range store.ID(10) {
		mustPost(t, s, 100+i, pfOther)
	}
	for k, a := range authors { // each newer than the last
		for i := range store.ID(3) {
			mustPost(t, s, 200+10*store.ID(k)+i, a)
		}
	}
	drain(t, s)
	page := func() (trips int, top store.ID) {
		t.Helper()
		if _, err := s.FollowingFeed(ctx, FeedRequest{Viewer: pfReader, First: 5}); err != nil {
			t.Fatal(err) // scripts load and caches warm: not counted
		}
		rctx, n := roundtrip.NewContext(ctx)
		pg, err := s.FollowingFeed(rctx, FeedRequest{Viewer: pfReader, First: 5})
		if err != nil {
			t.Fatal(err)
		}
		return n.Trips(), itemID(pg.Edges[0])
	}
	settled, _ := page()
	for k, a := range authors {
		if err := s.Follow(ctx, pfReader, a); err != nil {
			t.Fatal(err)
		}
		got, top := page()
		t.Logf("%d follows pending: %d round trips; settled: %d", k+1, got, settled)
		if want := 200 + 10*store.ID(k) + 2; top != want {
			t.Fatalf("%d follows pending: the page starts at %d, want %d, the newest post of the last followed", k+1, top, want)
		}
		if got > settled+1 {
			t.Errorf("%d follows pending: a page costs %d round trips, want at most %d (settled: %d)", k+1, got, settled+1, settled)
		}
	}
	held.runAll(t)
	if got, top := page(); got != settled || top != 232 {
		t.Errorf("follows settled: a page costs %d round trips and starts at %d, want %d as before, and 232", got, top, settled)
	}
}

// TestFollowAnswersBeforeTheBackfill: followUser of an author with 600
// posts costs 3 Redis round trips before it answers (the users exist
// while the journal records the follow, the commit, the followers side),
// where settling inside the request costs 10; the settle, run later,
// backfills the inbox.
func TestFollowAnswersBeforeTheBackfill(t *testing.T) {
	held := &heldSettles{}
	s := testService(t, Options{SettleFollow: held.hold})
	ctx := context.Background()
	mustUsers(t, s, pfReader, pfFollowee)
	for i := range store.ID(600) {
		mustPost(t, s, 1000+i, pfFollowee)
	}
	drain(t, s)
	rctx, trips := roundtrip.NewContext(ctx)
	if err := s.Follow(rctx, pfReader, pfFollowee); err != nil {
		t.Fatal(err)
	}
	if n := trips.Trips(); n > 3 {
		t.Errorf("followUser cost %d round trips before it answered, want at most 3", n)
	}
	if in := timelineIDs(t, s, s.Keys.Inbox(pfReader)); len(in) != 0 {
		t.Fatalf("inbox %v before the settle ran: the backfill ran inside the request", in)
	}
	counts, err := s.Counts(ctx, []store.ID{pfFollowee})
	if err != nil || counts[0].Followers != 1 {
		t.Fatalf("followee's counts %+v (%v) when the follow answered, want 1 follower", counts, err)
	}
	held.runAll(t)
	if in := timelineIDs(t, s, s.Keys.Inbox(pfReader)); len(in) != 600 {
		t.Fatalf("inbox of %d entries after the settle, want the followee's 600", len(in))
	}
	// The same follow settled before it answers (FollowMany, the import's
	// path and what followUser did before).
	mustUsers(t, s, pfOther)
	rctx, settled := roundtrip.NewContext(ctx)
	if _, err := s.FollowMany(rctx, []Edge{{Follower: pfOther, Followee: pfFollowee}}); err != nil {
		t.Fatal(err)
	}
	t.Logf("followUser: %d round trips; settled in the request: %d", trips.Trips(), settled.Trips())
	if settled.Trips() <= trips.Trips() {
		t.Errorf("settled in the request: %d round trips, not more than followUser's %d: the test measures nothing", settled.Trips(), trips.Trips())
	}
}

// TestFollowOfAMissingUserChangesNothing: the journal records a follow
// while the users are checked, so a follow of a user that does not exist
// (either side) ends its entry: NOT_FOUND, no follow, no entry left for
// a repair, nothing pending.
func TestFollowOfAMissingUserChangesNothing(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, pfReader)
	const missing = store.ID(987654)
	for _, e := range []Edge{{Follower: pfReader, Followee: missing}, {Follower: missing, Followee: pfReader}} {
		err := s.Follow(ctx, e.Follower, e.Followee)
		if store.CodeOf(err) != apierr.NotFound {
			t.Fatalf("follow %d -> %d: %v, want NOT_FOUND", e.Follower, e.Followee, err)
		}
		if n, err := s.Redis.Do(ctx, s.Redis.B().Xlen().Key(s.Keys.Journal(s.ShardOf(e.Follower))).Build()).AsInt64(); err != nil || n != 0 {
			t.Errorf("follow %d -> %d: %d journal entries left (%v), want 0", e.Follower, e.Followee, n, err)
		}
		if f := zscores(t, s, s.Keys.Following(e.Follower)); len(f) != 0 {
			t.Errorf("follow %d -> %d: following %v, want none", e.Follower, e.Followee, f)
		}
		if p := pendingFollows(t, s, e.Follower); len(p) != 0 {
			t.Errorf("follow %d -> %d: pending %v, want none", e.Follower, e.Followee, p)
		}
	}
}
