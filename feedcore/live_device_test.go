package feedcore

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

// snapshotKeys counts the live feed snapshots stored under s's prefix.
func snapshotKeys(t *testing.T, s *Service) int {
	t.Helper()
	keys, err := storetest.Keys(context.Background(), s.Redis, s.Opts.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range keys {
		if strings.HasPrefix(k, s.Opts.Prefix+"lss:") {
			n++
		}
	}
	return n
}

// A viewer holds one snapshot per device: repeated and concurrent first
// pages replace it or share it, never add to it; a cursor of a replaced
// snapshot is CURSOR_EXPIRED; devices past the cap drop the oldest.
func TestLiveSnapshotPerDevice(t *testing.T) {
	s := testService(t, Options{MaxDevices: 3})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	if err := s.Follow(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.ScheduleLive(ctx, 2, "show", time.Now().Add(time.Duration(i+1)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	first, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1}); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			if _, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := snapshotKeys(t, s); n != 1 {
		t.Fatalf("%d snapshots after 71 first pages of one device, want 1", n)
	}
	// The first page's snapshot was replaced: its cursor is expired, never
	// served from another snapshot.
	if _, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1, After: first.EndCursor}); store.CodeOf(err) != apierr.CursorExpired {
		t.Fatalf("cursor of a replaced snapshot: %v, want CURSOR_EXPIRED", err)
	}
	// The current snapshot's cursors page on.
	cur, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1, Device: "phone"})
	if err != nil {
		t.Fatal(err)
	}
	next, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 2, After: cur.EndCursor, Device: "phone"})
	if err != nil || len(next.Edges) != 2 || next.Edges[0].Session.ID == cur.Edges[0].Session.ID {
		t.Fatalf("second page: %+v, %v", next, err)
	}
	if n := snapshotKeys(t, s); n != 2 {
		t.Fatalf("%d snapshots for two devices, want 2", n)
	}
	for _, d := range []string{"a", "b", "c", "d"} {
		if _, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1, Device: d}); err != nil {
			t.Fatal(err)
		}
	}
	if n := snapshotKeys(t, s); n != 3 {
		t.Fatalf("%d snapshots for six devices, want the cap of 3", n)
	}
	for _, d := range []string{"x y", strings.Repeat("d", 65), "é"} {
		if _, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1, Device: d}); store.CodeOf(err) != apierr.BadInput {
			t.Errorf("device %q: %v, want BAD_USER_INPUT", d, err)
		}
	}
}

// With SnapshotReuse, a first page soon after the last one reads the same
// snapshot; after the window a new one replaces it.
func TestLiveSnapshotReuse(t *testing.T) {
	clk := clockAt(time.Now())
	s := testService(t, Options{SnapshotReuse: 5 * time.Second, Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	if err := s.Follow(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ScheduleLive(ctx, 2, "one", clk.now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	page := func() *LivePage {
		t.Helper()
		pg, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 10})
		if err != nil {
			t.Fatal(err)
		}
		return pg
	}
	a := page()
	if _, err := s.ScheduleLive(ctx, 2, "two", clk.now().Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Second)
	b := page()
	if len(a.Edges) != 1 || len(b.Edges) != 1 {
		t.Fatalf("within the reuse window: %d then %d sessions, want the same snapshot of 1", len(a.Edges), len(b.Edges))
	}
	// Both pages' cursors work: they name the same snapshot.
	if _, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1, After: a.EndCursor}); err != nil {
		t.Fatalf("cursor of the reused snapshot: %v", err)
	}
	clk.advance(5 * time.Second)
	if c := page(); len(c.Edges) != 2 {
		t.Fatalf("after the reuse window: %d sessions, want a new snapshot of 2", len(c.Edges))
	}
	if n := snapshotKeys(t, s); n != 1 {
		t.Fatalf("%d snapshots, want 1", n)
	}
}

// TestLiveFeedRoundTrips: with a rate charge riding, a first live page
// costs at most 3 Redis round trips, built or reused, whether the snapshot
// fills it or replays follow; so does a page after a cursor, in the
// snapshot and in the replays. The viewer follows anchors on several live
// shards. Every lane.
func TestLiveFeedRoundTrips(t *testing.T) {
	for _, reuse := range []time.Duration{0, 3 * time.Second} {
		t.Run("reuse="+reuse.String(), func(t *testing.T) {
			clk := clockAt(time.Now())
			s := testService(t, Options{SnapshotReuse: reuse, Now: clk.now})
			ctx := context.Background()
			const viewer = store.ID(1)
			anchors := []store.ID{2, 3, 4, 5, 6, 7, 8, 9}
			mustUsers(t, s, append([]store.ID{viewer}, anchors...)...)
			shards := map[int]bool{}
			for _, a := range anchors {
				if err := s.Follow(ctx, viewer, a); err != nil {
					t.Fatal(err)
				}
				shards[store.LiveShardOf(a)] = true
			}
			if len(shards) < 3 {
				t.Fatalf("anchors on %d live shards; the test wants several", len(shards))
			}
			// Each anchor: one replay, one LIVE and one PREVIEW session.
			for i, a := range anchors {
				for j := range 3 {
					clk.advance(time.Millisecond)
					l, err := s.ScheduleLive(ctx, a, "show", clk.now().Add(time.Duration(i*3+j+1)*time.Minute))
					if err != nil {
						t.Fatal(err)
					}
					if j < 2 {
						if _, err := s.StartLive(ctx, a, l.ID); err != nil {
							t.Fatal(err)
						}
					}
					if j == 0 {
						if _, err := s.EndLive(ctx, a, l.ID); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			drain(t, s)
			clk.advance(time.Second)
			// Scripts load on first use (a round trip per script): not counted.
			if _, err := s.LiveFeed(ctx, LiveRequest{Viewer: viewer, First: 100, Device: "warm"}); err != nil {
				t.Fatal(err)
			}
			l := RateLimit{Rate: 1000, Burst: 100000}
			page := func(what string, req LiveRequest) *LivePage {
				t.Helper()
				rctx, n := roundtrip.NewContext(ctx)
				ch := s.NewCharge(Subject{Viewer: viewer}, 1, l)
				rctx = WithCharge(rctx, ch)
				pg, err := s.LiveFeed(rctx, req)
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
				if v, err := ch.Settle(rctx); err != nil || v.Err != nil {
					t.Fatalf("%s: charge %+v, %v", what, v, err)
				}
				if n.Trips() > 3 {
					t.Errorf("%s: %d round trips, want at most 3", what, n.Trips())
				}
				t.Logf("%s: %d edges, %d round trips", what, len(pg.Edges), n.Trips())
				return pg
			}
			req := LiveRequest{Viewer: viewer, First: 5}
			first := page("first page, from the snapshot", req)
			if len(first.Edges) != 5 || !first.HasNext || first.Edges[0].State != core.StateLive {
				t.Fatalf("first page: %d edges, next %v", len(first.Edges), first.HasNext)
			}
			again := page("first page again (reused within the window, else rebuilt)", req)
			if reuse > 0 && again.EndCursor != first.EndCursor {
				t.Error("a first page within the reuse window did not reuse the snapshot")
			}
			next := page("page after a cursor, snapshot and replays", LiveRequest{Viewer: viewer, First: 15, After: again.EndCursor})
			if len(next.Edges) != 15 || next.Edges[len(next.Edges)-1].State != core.StateReplay || next.Edges[0].State == core.StateReplay {
				t.Fatalf("second page: %d edges", len(next.Edges))
			}
			last := page("page after a cursor in the replays", LiveRequest{Viewer: viewer, First: 10, After: next.EndCursor})
			if len(last.Edges) != 4 || last.HasNext {
				t.Fatalf("last page: %d edges, next %v; want the 4 replays left", len(last.Edges), last.HasNext)
			}
			clk.advance(reuse + time.Second)
			whole := page("first page with replays", LiveRequest{Viewer: viewer, First: 30, Device: "tablet"})
			if len(whole.Edges) != 24 || whole.HasNext {
				t.Fatalf("whole feed: %d edges, next %v; want 24", len(whole.Edges), whole.HasNext)
			}
		})
	}
}
