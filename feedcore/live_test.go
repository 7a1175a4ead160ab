package feedcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// liveModel is the oracle for the live feed.
type liveModel struct {
	sessions map[store.ID]*LiveSession
	follows  map[store.ID]map[store.ID]bool
	grace    time.Duration // Options.PreviewGrace
}

type liveWant struct {
	id    store.ID
	state core.LiveState
}

// The sections of the live feed, in order.
const (
	sectionLive = iota
	sectionPreview
	sectionStale // previews more than the grace past their scheduled start
	sectionReplay
)

// liveRank is where the oracle puts a session: by section, then key
// descending, then id descending.
type liveRank struct {
	section int
	key     int64
	want    liveWant
}

// feed applies the ordering rules to the snapshot at taken: LIVE by start
// desc, timely PREVIEW by scheduled start asc, stale PREVIEW (scheduled
// start more than m.grace before taken) by scheduled start desc, then
// replays ended by taken, by end desc; ties by id desc.
func (m *liveModel) feed(viewer store.ID, taken int64) []liveWant {
	var ranks []liveRank
	for _, l := range m.sessions {
		if !m.follows[viewer][l.Anchor] {
			continue
		}
		if r, ok := m.rank(l, taken); ok {
			ranks = append(ranks, r)
		}
	}
	slices.SortFunc(ranks, func(a, b liveRank) int {
		return cmp.Or(cmp.Compare(a.section, b.section), cmp.Compare(b.key, a.key), cmp.Compare(b.want.id, a.want.id))
	})
	out := make([]liveWant, len(ranks))
	for i, r := range ranks {
		out[i] = r.want
	}
	return out
}

// rank places l in a snapshot taken at taken; false: not in the feed
// (cancelled, or ended after taken).
func (m *liveModel) rank(l *LiveSession, taken int64) (liveRank, bool) {
	switch {
	case l.EndedAt != nil:
		ok := l.StartedAt != nil && l.EndedAt.UnixMilli() <= taken
		return liveRank{sectionReplay, l.EndedAt.UnixMilli(), liveWant{l.ID, core.StateReplay}}, ok
	case l.StartedAt != nil:
		return liveRank{sectionLive, l.StartedAt.UnixMilli(), liveWant{l.ID, core.StateLive}}, true
	}
	at := l.ScheduledStartAt.UnixMilli()
	if taken-at > m.grace.Milliseconds() {
		return liveRank{sectionStale, at, liveWant{l.ID, core.StatePreview}}, true
	}
	return liveRank{sectionPreview, -at, liveWant{l.ID, core.StatePreview}}, true
}

func pageLive(tb testing.TB, s *Service, viewer store.ID, n int, between func()) []liveWant {
	tb.Helper()
	var got []liveWant
	after := ""
	for pages := 0; pages < 10000; pages++ {
		pg, err := s.LiveFeed(context.Background(), LiveRequest{Viewer: viewer, First: n, After: after})
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range pg.Edges {
			got = append(got, liveWant{e.Session.ID, e.State})
		}
		if !pg.HasNext {
			return got
		}
		after = pg.EndCursor
		if between != nil {
			between()
		}
	}
	tb.Fatal("live feed does not end")
	return nil
}

func ms(v int64) *time.Time { t := time.UnixMilli(v).UTC(); return &t }

// TestLiveOrdering: one case per rule, ties included.
func TestLiveOrdering(t *testing.T) {
	// The clock stands just after the times below: no preview is past its
	// start (stale previews: live_stale_test.go).
	s := testService(t, Options{Now: clockAt(time.UnixMilli(1000)).now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	for _, a := range []store.ID{2, 3} {
		if err := s.Follow(ctx, 1, a); err != nil {
			t.Fatal(err)
		}
	}
	sessions := []*LiveSession{
		{ID: 10, Anchor: 2, ScheduledStartAt: ms(100), StartedAt: ms(500)},                 // LIVE, started 500
		{ID: 11, Anchor: 3, ScheduledStartAt: ms(100), StartedAt: ms(700)},                 // LIVE, started 700
		{ID: 12, Anchor: 2, StartedAt: ms(700)},                                            // LIVE, tie on 700: id desc
		{ID: 20, Anchor: 2, ScheduledStartAt: ms(9000)},                                    // PREVIEW, 9000
		{ID: 21, Anchor: 3, ScheduledStartAt: ms(8000)},                                    // PREVIEW, soonest first
		{ID: 22, Anchor: 3, ScheduledStartAt: ms(9000)},                                    // PREVIEW, tie: id desc
		{ID: 30, Anchor: 2, StartedAt: ms(10), EndedAt: ms(300)},                           // REPLAY, ended 300
		{ID: 31, Anchor: 3, StartedAt: ms(10), EndedAt: ms(400)},                           // REPLAY, newest end first
		{ID: 32, Anchor: 3, StartedAt: ms(10), EndedAt: ms(300)},                           // REPLAY, tie: id desc
		{ID: 40, Anchor: 2, ScheduledStartAt: ms(100), EndedAt: ms(200)},                   // cancelled: nowhere
		{ID: 50, Anchor: 1, ScheduledStartAt: ms(100), StartedAt: ms(900)},                 // the viewer's own: not followed
		{ID: 51, Anchor: 3, ScheduledStartAt: ms(100), StartedAt: ms(50), EndedAt: ms(60)}, // REPLAY, oldest
	}
	for _, l := range sessions {
		l.Title = fmt.Sprint("session ", l.ID)
		if err := s.PutLive(ctx, l); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	want := []liveWant{
		{12, core.StateLive}, {11, core.StateLive}, {10, core.StateLive},
		{21, core.StatePreview}, {22, core.StatePreview}, {20, core.StatePreview},
		{31, core.StateReplay}, {32, core.StateReplay}, {30, core.StateReplay}, {51, core.StateReplay},
	}
	for n := 1; n <= len(want)+1; n++ {
		if got := pageLive(t, s, 1, n, nil); !slices.Equal(got, want) {
			t.Fatalf("page size %d:\n got %v\nwant %v", n, got, want)
		}
	}
}

// TestLiveFeedMatchesModel: random schedule, start, end, follow and unfollow,
// with sessions changing between the pages of a paging session, checked
// against the oracle applied to the snapshot at the first page, at every
// page size.
func TestLiveFeedMatchesModel(t *testing.T) {
	seeds := 4
	if testing.Short() {
		seeds = 1
	}
	for seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) { runLiveModel(t, uint64(seed)) })
	}
}

func runLiveModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 99))
	clk := clockAt(testEpoch)
	// A grace of seconds: previews scheduled up to 4s ahead pass it as the
	// clock moves, so snapshots hold stale and timely previews together.
	grace := time.Duration(1+rng.IntN(3)) * time.Second
	s := testService(t, Options{InboxCap: 3 + rng.IntN(4), BigVThreshold: 2, PreviewGrace: grace, Now: clk.now})
	ctx := context.Background()
	const anchors, viewers = 5, 3
	m := &liveModel{sessions: map[store.ID]*LiveSession{}, follows: map[store.ID]map[store.ID]bool{}, grace: grace}
	for u := store.ID(1); u <= anchors+viewers; u++ {
		mustUsers(t, s, u)
		m.follows[u] = map[store.ID]bool{}
	}
	anchor := func() store.ID { return store.ID(1 + rng.IntN(anchors)) }
	inState := func(st core.LiveState) *LiveSession {
		var ids []store.ID
		for id, l := range m.sessions {
			if l.State() == st && !l.Cancelled() {
				ids = append(ids, id)
			}
		}
		if len(ids) == 0 {
			return nil
		}
		slices.Sort(ids)
		return m.sessions[ids[rng.IntN(len(ids))]]
	}
	// change applies one random session change to the service and the oracle.
	change := func() {
		clk.advance(time.Duration(rng.IntN(2)) * time.Millisecond)
		switch rng.IntN(3) {
		case 0:
			a := anchor()
			at := clk.now().Add(time.Duration(rng.IntN(5)) * time.Second)
			l, err := s.ScheduleLive(ctx, a, "t", at)
			if err != nil {
				t.Fatal(err)
			}
			m.sessions[l.ID] = l
		case 1:
			if l := inState(core.StatePreview); l != nil {
				got, err := s.StartLive(ctx, l.Anchor, l.ID)
				if err != nil {
					t.Fatal(err)
				}
				m.sessions[l.ID] = got
			}
		case 2:
			l := inState(core.StateLive)
			if l == nil || rng.IntN(4) == 0 {
				l = inState(core.StatePreview) // a cancellation
			}
			if l != nil {
				got, err := s.EndLive(ctx, l.Anchor, l.ID)
				if err != nil {
					t.Fatal(err)
				}
				m.sessions[l.ID] = got
			}
		}
	}
	for step := 0; step < 120; step++ {
		switch op := rng.IntN(10); {
		case op < 6:
			change()
		case op < 8:
			v, a := store.ID(anchors+1+rng.IntN(viewers)), anchor()
			if err := s.Follow(ctx, v, a); err != nil {
				t.Fatal(err)
			}
			m.follows[v][a] = true
		case op < 9:
			v, a := store.ID(anchors+1+rng.IntN(viewers)), anchor()
			if err := s.Unfollow(ctx, v, a); err != nil {
				t.Fatal(err)
			}
			delete(m.follows[v], a)
		default:
			clk.advance(time.Duration(rng.IntN(3)) * time.Second)
		}
		if step%20 == 19 {
			for v := store.ID(anchors + 1); v <= anchors+viewers; v++ {
				// The previous walk changed sessions; the oracle holds once
				// their fan-out has drained.
				drain(t, s)
				want := m.feed(v, clk.ms.Load())
				n := 1 + rng.IntN(len(want)+1)
				// Sessions keep changing between pages; the walk must not notice.
				between := func() { clk.advance(time.Millisecond); change() }
				if got := pageLive(t, s, v, n, between); !slices.Equal(got, want) {
					for _, w := range want {
						l := m.sessions[w.id]
						t.Logf("session %d anchor %d sched %v start %v end %v", w.id, l.Anchor, l.ScheduledStartAt, l.StartedAt, l.EndedAt)
					}
					in, _ := s.Newest(ctx, s.Keys.ReplayInbox(v), 100)
					rr, _ := s.Redis.Do(ctx, s.Redis.B().Hgetall().Key(s.Keys.ReplayReader(v)).Build()).AsStrMap()
					rs, _ := s.Redis.Do(ctx, s.Redis.B().Hgetall().Key(s.Keys.Reader(v)).Build()).AsStrMap()
					bv, _ := s.Redis.Do(ctx, s.Redis.B().Smembers().Key(s.Keys.BigFollowees(v)).Build()).AsStrSlice()
					t.Logf("taken %d replay inbox %v horizon %q reader %q bigv %q follows %v", clk.ms.Load(), in, rr, rs, bv, m.follows[v])
					t.Fatalf("viewer %d, page size %d:\n got %v\nwant %v", v, n, got, want)
				}
			}
		}
	}
}

func TestLiveCursors(t *testing.T) {
	st := storetest.New(t)
	s := newService(t, st, Options{SnapshotTTL: 200 * time.Millisecond})
	startWorkers(t, s, WorkerOptions{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	if err := s.Follow(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := s.ScheduleLive(ctx, 2, "s", time.Now().Add(time.Duration(i+1)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	pg, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1})
	if err != nil || len(pg.Edges) != 1 || !pg.HasNext {
		t.Fatalf("first page %+v, %v", pg, err)
	}
	code := func(err error) apierr.Code { return store.CodeOf(err) }
	raw := []byte(pg.EndCursor)
	raw[len(raw)/2] ^= 1
	for name, req := range map[string]LiveRequest{
		"tampered": {Viewer: 1, First: 1, After: string(raw)},
		"foreign":  {Viewer: 3, First: 1, After: pg.EndCursor},
		"garbled":  {Viewer: 1, First: 1, After: "not a cursor"},
	} {
		if _, err := s.LiveFeed(ctx, req); code(err) != apierr.InvalidCursor {
			t.Errorf("%s cursor: %v, want INVALID_CURSOR", name, err)
		}
	}
	if _, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 101}); code(err) != apierr.BadInput {
		t.Errorf("first 101: %v, want BAD_USER_INPUT", err)
	}
	// Let the snapshot expire, in real time on every store: the embedded
	// one ages its keys as Redis does.
	deadline := time.Now().Add(10 * time.Second)
	for n := int64(1); n > 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the snapshot did not expire within 10s of its 200ms TTL")
		}
		n, _ = s.Redis.Do(ctx, s.Redis.B().Exists().Key(s.Keys.Snapshot(1, mustRef(t, s, pg.EndCursor))).Build()).AsInt64()
	}
	_, err = s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1, After: pg.EndCursor})
	var fe *apierr.Error
	if !errors.As(err, &fe) || fe.Code != apierr.CursorExpired {
		t.Fatalf("expired snapshot: %v, want CURSOR_EXPIRED", err)
	}
}

func mustRef(tb testing.TB, s *Service, cursor string) string {
	c, err := s.Cursors().Open(cursor, 1)
	if err != nil {
		tb.Fatal(err)
	}
	return c.Session[:16] // the snapshot's ref, less the entry's place
}

func TestLiveTransitions(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	l, err := s.ScheduleLive(ctx, 1, "show", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		op   func() error
		want apierr.Code
	}{
		{"start by another", func() error { _, err := s.StartLive(ctx, 2, l.ID); return err }, apierr.Forbidden},
		{"start missing", func() error { _, err := s.StartLive(ctx, 1, 999); return err }, apierr.NotFound},
		{"start", func() error { _, err := s.StartLive(ctx, 1, l.ID); return err }, ""},
		{"start again", func() error { _, err := s.StartLive(ctx, 1, l.ID); return err }, apierr.BadInput},
		{"end", func() error { _, err := s.EndLive(ctx, 1, l.ID); return err }, ""},
		{"end again", func() error { _, err := s.EndLive(ctx, 1, l.ID); return err }, apierr.BadInput},
		{"empty title", func() error { _, err := s.ScheduleLive(ctx, 1, " ", time.Now()); return err }, apierr.BadInput},
	} {
		err := tc.op()
		if (tc.want == "" && err != nil) || (tc.want != "" && store.CodeOf(err) != tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	got, err := s.LiveSession(ctx, l.ID)
	if err != nil || got.State() != core.StateReplay || got.Cancelled() {
		t.Fatalf("ended session: %+v %v, want a replay", got, err)
	}
}
