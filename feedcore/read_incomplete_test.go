package feedcore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

// TestIncompleteReaderPageRoundTrips: a reader whose inbox is incomplete
// (never upgraded) merges its big-V followees' outboxes into every page.
// The first page on a process seeks them once the view has named them;
// a later one seeks them with its view, as this process remembers them,
// so it costs the round trips of a complete reader's page, and shows the
// same posts. A complete reader's page does not read its big-V followees;
// should its inbox be incomplete again, the page reads them in a round
// trip of its own, unless the process saw it complete longer ago than a
// demotion takes (a reader back after the active window).
func TestIncompleteReaderPageRoundTrips(t *testing.T) {
	st := storetest.New(t)
	clk := clockAt(time.Now())
	s := newService(t, st, Options{BigVThreshold: 2, Now: clk.now})
	stop := startWorkers(t, s, WorkerOptions{})
	ctx := context.Background()
	const incomplete, complete, fan = store.ID(1), store.ID(2), store.ID(3)
	stars, plain := idRange(10, 3), store.ID(20)
	mustUsers(t, s, incomplete, complete, fan, plain)
	putUsers(t, s, stars)
	for _, r := range []store.ID{incomplete, complete, fan} {
		follow(t, s, r, append(slices.Clone(stars), plain))
	}
	for i := range store.ID(10) {
		for k, a := range append(slices.Clone(stars), plain) {
			mustPost(t, s, 1000+10*i+store.ID(k), a)
		}
	}
	if err := s.Touch(ctx, complete); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	stop() // no upgrade of the incomplete reader from here on
	for _, c := range []struct {
		r    store.ID
		want string
	}{{incomplete, ""}, {complete, "1"}} {
		if got, _ := s.Do(ctx, s.Redis.B().Hget().Key(s.Keys.Reader(c.r)).Field("c").Build()).ToString(); got != c.want {
			t.Fatalf("reader %d: complete flag %q, want %q", c.r, got, c.want)
		}
	}
	if !isBigV(t, s, stars[0]) {
		t.Fatal("the stars were not promoted")
	}
	page := func(r store.ID) (int, []store.ID) {
		t.Helper()
		rctx, trips := roundtrip.NewContext(ctx)
		pg, err := s.FollowingFeed(rctx, FeedRequest{Viewer: r, First: 20})
		if err != nil {
			t.Fatal(err)
		}
		var ids []store.ID
		for _, e := range pg.Edges {
			ids = append(ids, itemID(e))
		}
		return trips.Trips(), ids
	}
	first, got := page(incomplete)
	next, again := page(incomplete)
	page(complete) // scripts and the client-side cache warm
	done, want := page(complete)
	t.Logf("incomplete reader: %d round trips, then %d; complete reader: %d", first, next, done)
	if len(want) != 20 || !slices.Equal(got, want) || !slices.Equal(again, want) {
		t.Fatalf("pages differ:\nincomplete %v\nthen       %v\ncomplete   %v", got, again, want)
	}
	if next != done || next >= first {
		t.Errorf("an incomplete reader's page costs %d round trips, then %d; a complete reader's %d", first, next, done)
	}

	// The complete reader's pages did not read its big-V followees. Its
	// inbox incomplete now (as after dormancy), the next page reads them
	// in a round trip of its own and shows the same posts (it asks for
	// the reader's upgrade too, as the incomplete reader's first page
	// did); the one after reads them with its view again.
	if err := s.Do(ctx, s.Redis.B().Hdel().Key(s.Keys.Reader(complete)).Field("c").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	back, got := page(complete)
	then, again := page(complete)
	t.Logf("the complete reader made incomplete: %d round trips, then %d", back, then)
	if !slices.Equal(got, want) || !slices.Equal(again, want) {
		t.Fatalf("pages differ:\nmade incomplete %v\nthen            %v\nbefore          %v", got, again, want)
	}
	// One more than an incomplete reader's first page: the big-V
	// followees' read.
	if back != first+1 || then != next {
		t.Errorf("the reader made incomplete: %d round trips, then %d; want %d, then %d", back, then, first+1, next)
	}

	// Back after the active window, the reader is demoted as any reader
	// away that long is. This process's note of its complete inbox is
	// older than a demotion needs, so the page reads the big-V followees
	// with its view: what an incomplete reader's first page costs, not
	// a round trip more.
	if err := s.Do(ctx, s.Redis.B().Hset().Key(s.Keys.Reader(complete)).FieldValue().FieldValue("c", "1").Build()).Error(); err != nil {
		t.Fatal(err) // what its upgrade would write, the workers stopped
	}
	page(complete) // complete again, and noted so
	clk.advance(7*24*time.Hour + 2*core.TouchEvery)
	if _, err := s.Sweep(ctx, 100); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Do(ctx, s.Redis.B().Hget().Key(s.Keys.Reader(complete)).Field("c").Build()).ToString(); got != "" {
		t.Fatalf("the sweep left reader %d complete (%q)", complete, got)
	}
	away, got := page(complete)
	t.Logf("the complete reader back after the active window: %d round trips", away)
	if !slices.Equal(got, want) {
		t.Fatalf("pages differ:\nback after a week %v\nbefore            %v", got, want)
	}
	if away != first {
		t.Errorf("the reader back after the active window: %d round trips, want %d", away, first)
	}
}
