package feedcore

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// TestStalePreviewOrder: a preview further past its scheduled start than
// Options.PreviewGrace comes after every timely preview and before the
// replays, the longest overdue last (ties by id desc); one exactly at the
// grace is still timely. Every page size gives the same walk.
func TestStalePreviewOrder(t *testing.T) {
	at := func(d time.Duration) *time.Time { t := testEpoch.Add(d); return &t }
	sessions := []*LiveSession{
		{ID: 10, Anchor: 2, StartedAt: at(-10 * time.Minute)},                         // LIVE
		{ID: 20, Anchor: 2, ScheduledStartAt: at(time.Hour)},                          // ahead
		{ID: 21, Anchor: 3, ScheduledStartAt: at(-30 * time.Minute)},                  // due
		{ID: 22, Anchor: 2, ScheduledStartAt: at(-time.Hour)},                         // due by exactly 1h
		{ID: 23, Anchor: 3, ScheduledStartAt: at(-time.Hour - time.Millisecond)},      // 1h and 1ms
		{ID: 24, Anchor: 2, ScheduledStartAt: at(-3 * time.Hour)},                     // 3h
		{ID: 25, Anchor: 3, ScheduledStartAt: at(-5 * time.Hour)},                     // 5h
		{ID: 26, Anchor: 2, ScheduledStartAt: at(-5 * time.Hour)},                     // 5h, tie: id desc
		{ID: 30, Anchor: 3, StartedAt: at(-2 * time.Hour), EndedAt: at(-time.Minute)}, // REPLAY
	}
	for _, tc := range []struct {
		grace    time.Duration // 0: the default, 1h
		previews []store.ID
	}{
		{0, []store.ID{22, 21, 20, 23, 24, 26, 25}},
		{2 * time.Hour, []store.ID{23, 22, 21, 20, 24, 26, 25}},
		{6 * time.Hour, []store.ID{26, 25, 24, 23, 22, 21, 20}},
	} {
		t.Run(fmt.Sprint("grace ", tc.grace), func(t *testing.T) {
			s := testService(t, Options{PreviewGrace: tc.grace, Now: clockAt(testEpoch).now})
			ctx := context.Background()
			mustUsers(t, s, 1, 2, 3)
			follow(t, s, 1, []store.ID{2, 3})
			for _, l := range sessions {
				l := *l // a copy: the cases share the table
				l.Title = fmt.Sprint("session ", l.ID)
				if err := s.PutLive(ctx, &l); err != nil {
					t.Fatal(err)
				}
			}
			drain(t, s)
			want := []liveWant{{10, core.StateLive}}
			for _, id := range tc.previews {
				want = append(want, liveWant{id, core.StatePreview})
			}
			want = append(want, liveWant{30, core.StateReplay})
			for n := 1; n <= len(want)+1; n++ {
				if got := pageLive(t, s, 1, n, nil); !slices.Equal(got, want) {
					t.Fatalf("page size %d:\n got %v\nwant %v", n, got, want)
				}
			}
		})
	}
}

// TestStalePreviewStartsAtTheTop: a stale preview that starts is LIVE at
// the top of the next first page; one that is ended (cancelled) leaves the
// feed.
func TestStalePreviewStartsAtTheTop(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	follow(t, s, 1, []store.ID{2})
	schedule := func(in time.Duration) store.ID {
		t.Helper()
		l, err := s.ScheduleLive(ctx, 2, "show", clk.now().Add(in))
		if err != nil {
			t.Fatal(err)
		}
		return l.ID
	}
	a, b := schedule(time.Minute), schedule(2*time.Minute)
	clk.advance(3 * time.Hour) // both 3h overdue, a the longer
	c := schedule(10 * time.Minute)
	first := func(want ...liveWant) {
		t.Helper()
		if got := pageLive(t, s, 1, 10, nil); !slices.Equal(got, want) {
			t.Fatalf("first page:\n got %v\nwant %v", got, want)
		}
	}
	first(liveWant{c, core.StatePreview}, liveWant{b, core.StatePreview}, liveWant{a, core.StatePreview})
	clk.advance(time.Minute)
	if _, err := s.StartLive(ctx, 2, a); err != nil {
		t.Fatal(err)
	}
	first(liveWant{a, core.StateLive}, liveWant{c, core.StatePreview}, liveWant{b, core.StatePreview})
	if _, err := s.EndLive(ctx, 2, b); err != nil {
		t.Fatal(err)
	}
	first(liveWant{a, core.StateLive}, liveWant{c, core.StatePreview})
}

// TestStalePreviewHoldsItsPlaceInASnapshot: previews that turn stale while
// a snapshot is paged keep the places they had in it (pages neither jump
// nor repeat); the next first page puts them after the timely ones.
func TestStalePreviewHoldsItsPlaceInASnapshot(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprint("page size ", n), func(t *testing.T) {
			clk := clockAt(testEpoch)
			s := testService(t, Options{Now: clk.now})
			ctx := context.Background()
			mustUsers(t, s, 1, 2)
			follow(t, s, 1, []store.ID{2})
			var timely []liveWant // P1..P6, due in 1..6 minutes
			for i := range 6 {
				l, err := s.ScheduleLive(ctx, 2, fmt.Sprint("P", i+1), clk.now().Add(time.Duration(i+1)*time.Minute))
				if err != nil {
					t.Fatal(err)
				}
				timely = append(timely, liveWant{l.ID, core.StatePreview})
			}
			// After the first page, P1..P3 pass the grace (P4 is 59.5
			// minutes overdue: still timely).
			moved := false
			between := func() {
				if !moved {
					clk.advance(time.Hour + 3*time.Minute + 30*time.Second)
					moved = true
				}
			}
			if got := pageLive(t, s, 1, n, between); !slices.Equal(got, timely) {
				t.Fatalf("walk of the first snapshot:\n got %v\nwant %v", got, timely)
			}
			if !moved {
				t.Fatal("the walk ended on its first page: nothing turned stale while paging")
			}
			want := append(slices.Clone(timely[3:]), timely[2], timely[1], timely[0])
			if got := pageLive(t, s, 1, n, nil); !slices.Equal(got, want) {
				t.Fatalf("walk of a new snapshot:\n got %v\nwant %v", got, want)
			}
		})
	}
}
