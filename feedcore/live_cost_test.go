package feedcore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

// TestFirstLivePageCostFollowsTheAnchors: a first live page costs what the
// anchors the viewer follows cost, not what all its follows cost. Two
// viewers follow the same 5 anchors (each with sessions live, upcoming
// and ended), one among 20 follows, the other among 2,000; their first
// pages are the same, in the same round trips, and neither the bytes sent
// to Redis (every followee's queue named in a script) nor those it sends
// back (the following set) are more than a quarter more for the second;
// on a real Redis, whose queue reads the client-side cache keeps, a warm
// first page costs 2 round trips.
// A page also reads only the sessions it shows: 40 more upcoming sessions
// add their queue entries to the bytes read back, not their sessions.
func TestFirstLivePageCostFollowsTheAnchors(t *testing.T) {
	st := storetest.New(t)
	clk := clockAt(time.Now())
	o := Options{FollowLimit: 2100, Now: clk.now}
	s := newService(t, st, o)
	startWorkers(t, s, WorkerOptions{})
	cs, replies, sent := countedServiceBoth(t, st, o)
	ctx := context.Background()
	const few, many = store.ID(1), store.ID(2)
	anchors := idRange(10, 5)
	others := idRange(100, 1995)
	mustUsers(t, s, few, many)
	putUsers(t, s, anchors)
	putUsers(t, s, others)
	follow(t, s, few, append(slices.Clone(anchors), others[:15]...))
	follow(t, s, many, append(slices.Clone(anchors), others...))
	schedule := func(a store.ID, in time.Duration) *LiveSession {
		t.Helper()
		clk.advance(time.Millisecond)
		l, err := s.ScheduleLive(ctx, a, "show", clk.now().Add(in))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	for i, a := range anchors {
		ended := schedule(a, time.Minute)
		if _, err := s.StartLive(ctx, a, ended.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.EndLive(ctx, a, ended.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.StartLive(ctx, a, schedule(a, time.Minute).ID); err != nil {
			t.Fatal(err)
		}
		schedule(a, time.Duration(i+2)*time.Hour)
	}
	drain(t, s)
	type cost struct{ trips, commands, sent, replies int64 }
	device := 0
	first := func(viewer store.ID) ([]string, cost) {
		t.Helper()
		device++
		sent.Store(0)
		replies.Store(0)
		rctx, trips := roundtrip.NewContext(ctx)
		pg, err := cs.LiveFeed(rctx, LiveRequest{Viewer: viewer, First: 10, Device: "d" + store.Itoa(device)})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range pg.Edges {
			got = append(got, store.FormatID(e.Session.ID)+":"+string(e.State))
		}
		return got, cost{int64(trips.Trips()), int64(trips.Commands()), sent.Load(), replies.Load()}
	}
	// Scripts load, and queues are cached, on first use; a reader's first
	// read notes it as seen: not counted.
	first(few)
	first(many)
	gotFew, cFew := first(few)
	gotMany, cMany := first(many)
	t.Logf("first live page, 20 follows: %+v; 2,000 follows: %+v", cFew, cMany)
	if len(gotFew) != 10 || !slices.Equal(gotFew, gotMany) {
		t.Fatalf("first pages differ:\n 20 follows: %v\n2000 follows: %v", gotFew, gotMany)
	}
	within := func(what string, a, b cost) {
		t.Helper()
		if b.trips > a.trips || b.trips > 3 {
			t.Errorf("%s: %d round trips, against %d (at most 3)", what, b.trips, a.trips)
		}
		if b.commands != a.commands {
			t.Errorf("%s: %d Redis commands, against %d: not the same", what, b.commands, a.commands)
		}
		if b.sent > a.sent*5/4 || b.replies > a.replies*5/4 {
			t.Errorf("%s: %d bytes sent and %d back, against %d and %d: more than a quarter more", what, b.sent, b.replies, a.sent, a.replies)
		}
	}
	within("2,000 follows", cFew, cMany)
	// On a real Redis the anchors' queues come from the client-side cache
	// once read: a warm replica's first page is the view, then the store.
	if st.Real && cFew.trips > 2 {
		t.Errorf("first live page on a warm replica: %d round trips, want 2", cFew.trips)
	}
	// 40 more upcoming sessions, after the page's: the page reads their
	// queue entries (and stores them in the snapshot), not their sessions.
	for i := range 40 {
		schedule(anchors[i%len(anchors)], time.Duration(10+i)*time.Hour)
	}
	drain(t, s)
	first(few) // the changed queues back in the client-side cache, where there is one
	gotMore, cMore := first(few)
	if !slices.Equal(gotMore, gotFew) {
		t.Fatalf("first page changed by later sessions:\n%v\n%v", gotFew, gotMore)
	}
	t.Logf("first live page, 20 follows, 40 more sessions queued: %+v", cMore)
	// A queue entry read back is an id and a score, 40 bytes or so; a
	// session's hash would be more than 64.
	if cMore.trips != cFew.trips || cMore.replies-cFew.replies > 40*64 {
		t.Errorf("40 more sessions queued: %+v, against %+v: more than their queue entries", cMore, cFew)
	}
	// The snapshot stores each entry as a 16-byte record of one string;
	// as a sorted set's member and score (ZADD) each cost about 37 bytes
	// sent, and Redis a listpack insert. 24 a record leaves room for
	// whatever else the connection carries then.
	if cMore.sent-cFew.sent > 40*24 {
		t.Errorf("40 more sessions queued: %d bytes sent, against %d: more than a record each", cMore.sent, cFew.sent)
	}
}

// TestLiveShowsAFollowBeforeItSettles: a viewer who follows an anchor
// sees the anchor's sessions on its next first live page, before the
// follow has settled (the settle notes the anchor among its followed
// anchors), and the same page after it.
func TestLiveShowsAFollowBeforeItSettles(t *testing.T) {
	held := &heldSettles{}
	s := testService(t, Options{SettleFollow: held.hold})
	ctx := context.Background()
	const viewer, anchor, fan = store.ID(1), store.ID(2), store.ID(3)
	mustUsers(t, s, viewer, anchor, fan)
	if err := s.Follow(ctx, fan, anchor); err != nil {
		t.Fatal(err)
	}
	held.runAll(t)
	l, err := s.ScheduleLive(ctx, anchor, "show", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartLive(ctx, anchor, l.ID); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	if err := s.Follow(ctx, viewer, anchor); err != nil {
		t.Fatal(err)
	}
	if held.len() != 1 {
		t.Fatalf("%d follows held, want the viewer's", held.len())
	}
	ids := func(device string) []store.ID {
		t.Helper()
		pg, err := s.LiveFeed(ctx, LiveRequest{Viewer: viewer, First: 5, Device: device})
		if err != nil {
			t.Fatal(err)
		}
		var out []store.ID
		for _, e := range pg.Edges {
			out = append(out, e.Session.ID)
		}
		return out
	}
	if got := ids("before"); !slices.Equal(got, []store.ID{l.ID}) {
		t.Fatalf("first live page before the follow settled: %v, want [%d]", got, l.ID)
	}
	held.runAll(t)
	if got := ids("after"); !slices.Equal(got, []store.ID{l.ID}) {
		t.Fatalf("first live page after the follow settled: %v, want [%d]", got, l.ID)
	}
}

// TestAnchorNotedAgainAtItsNextChange: data from before the followed
// anchors (no mark, no follower noted) heals at the anchor's next session
// change: its followers' first live pages show it from then on.
func TestAnchorNotedAgainAtItsNextChange(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	const viewer, anchor = store.ID(1), store.ID(2)
	mustUsers(t, s, viewer, anchor)
	follow(t, s, viewer, []store.ID{anchor})
	l, err := s.ScheduleLive(ctx, anchor, "show", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	// As an earlier build left it: neither the mark nor the noted follower.
	for _, k := range []string{s.Keys.AnchorMark(anchor), s.Keys.FollowedAnchors(viewer)} {
		if err := s.Redis.Do(ctx, s.Redis.B().Del().Key(k).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	page := func(device string) int {
		t.Helper()
		pg, err := s.LiveFeed(ctx, LiveRequest{Viewer: viewer, First: 5, Device: device})
		if err != nil {
			t.Fatal(err)
		}
		return len(pg.Edges)
	}
	if n := page("before"); n != 0 {
		t.Fatalf("%d sessions with the anchor unnoted: the test proves nothing", n)
	}
	if _, err := s.StartLive(ctx, anchor, l.ID); err != nil {
		t.Fatal(err)
	}
	if n := page("after"); n != 1 {
		t.Fatalf("%d sessions after the anchor's next change, want 1", n)
	}
}
