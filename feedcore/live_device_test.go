package feedcore

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedd/feedd/redisstore/storetest"
)

// snapshotKeys counts the live feed snapshots stored under s's prefix.
func snapshotKeys(t *testing.T, s *Service) int {
	t.Helper()
	keys, err := storetest.Keys(context.Background(), s.c, s.o.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range keys {
		if strings.HasPrefix(k, s.o.Prefix+"lsn:") {
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
	if _, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1, After: first.EndCursor}); CodeOf(err) != CodeCursorExpired {
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
		if _, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1, Device: d}); CodeOf(err) != CodeBadInput {
			t.Errorf("device %q: %v, want BAD_USER_INPUT", d, err)
		}
	}
}

// With SnapshotReuse, a first page soon after the last one reads the same
// snapshot; after the window a new one replaces it.
func TestLiveSnapshotReuse(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(time.Now().UnixMilli())
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
