package feedcore

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/roundtrip"
)

// A recount is the feed's own page read: for a post told to a warm,
// active reader it costs what a warm page costs: 2 round trips. The
// subscription's own reads (its follows, its mark, the first count and
// its screen) are logged.
func TestRealtimeRecountCost(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	const reader = 1
	authors := idRange(11, 10)
	mustUsers(t, s, reader)
	putUsers(t, s, authors)
	follow(t, s, reader, authors)
	for _, a := range authors {
		if _, err := s.Publish(ctx, a, "before"); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Touch(ctx, reader); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	since := topCursor(t, s, reader)
	topCursor(t, s, reader) // warms the posts' client-side cache
	startRealtime(t, s, rtOptions)
	rctx, trips := roundtrip.NewContext(ctx)
	rctx, cancel := context.WithCancel(rctx)
	t.Cleanup(cancel)
	ch, err := s.FollowingFeedUpdates(rctx, reader, since)
	if err != nil {
		t.Fatal(err)
	}
	subscribed := trips.Trips()
	t.Logf("subscribing cost %d round trips", subscribed)
	u := &updates{ch: ch}
	for i, a := range authors[:3] {
		recounts, before := s.RealtimeStats().Recounts, trips.Trips()
		if _, err := s.Publish(ctx, a, "new"); err != nil {
			t.Fatal(err)
		}
		u.awaitCount(t, i+1, nil)
		const budget = 2
		// On Redis the viewer channel's first confirmation may recount
		// too (a catch-up), within the same budget.
		n, got := s.RealtimeStats().Recounts-recounts, trips.Trips()-before
		t.Logf("post %d: %d recounts, %d round trips", i+1, n, got)
		if n < 1 || got > budget*int(n) {
			t.Errorf("post %d: %d recounts cost %d round trips, want at least one, each at most %d", i+1, n, got, budget)
		}
	}
}

// Past MaxCount new posts the count is MaxCount, and its authors are the
// newest posts', read from the top: here the second author's one post,
// which came last, is among them, though the hundred posts nearest since
// are all the first's.
func TestRealtimeCountCaps(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	follow(t, s, 1, []store.ID{2, 3})
	if _, err := s.Publish(ctx, 1, "own"); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	since := topCursor(t, s, 1)
	for i := range 105 {
		if _, err := s.Publish(ctx, 2, fmt.Sprint("many ", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Publish(ctx, 3, "last"); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	top, err := s.FollowingFeed(ctx, FeedRequest{Viewer: 1, First: 20})
	if err != nil {
		t.Fatal(err)
	}
	var want []store.ID // the newest posts' authors: 3's among them, in whichever order the ids put it
	for _, e := range top.Edges {
		if !slices.Contains(want, e.Post.Author) {
			want = append(want, e.Post.Author)
		}
	}
	if len(want) != 2 {
		t.Fatalf("the top page's authors %v, want both 2 and 3", want)
	}
	startRealtime(t, s, rtOptions)
	u := &updates{ch: followingUpdates(t, s, 1, since)}
	u.awaitCount(t, 100, want)
}
