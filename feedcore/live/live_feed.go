package live

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/ratelimit"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/roundtrip"
)

// LiveEntry is a session found for a live page and the state it is shown in.
type LiveEntry struct {
	It    store.Item
	State core.LiveState
	l     *core.LiveSession
	At    int // a snapshot entry's place in the snapshot (its cursor's)
}

// LiveFeed returns a page of viewer's live feed: the LIVE and PREVIEW
// sessions of followed anchors from a snapshot taken at the first page,
// then their replays that ended by the snapshot, newest first.
//
// Round trips: a first page costs 3 (the viewer's followed anchors and
// replay view, with the device's recent snapshot when reuse is on; their
// queues, read through the client-side cache, so none when warm; the
// sessions the page shows, read as the snapshot is stored, with the first
// replays when the snapshot cannot fill the page), 2 on a warm replica,
// and a page after a cursor 3 at most (the snapshot and the replay view;
// the sessions and the replays). The replay view is read before it is
// known to be needed, so a page never waits for it in turn. More only in
// rare cases: sessions the viewer is not shown (anchors hidden or
// suspended, titles filtered) leaving the page short (one more each time,
// within the read bound), a replay scan that crosses its inbox's horizon
// or reads on past filtered entries (as followingFeed does).
func (s *Service) LiveFeed(ctx context.Context, req core.LiveRequest) (_ *core.LivePage, err error) {
	defer store.Wrap(&err, "live feed of user %d", req.Viewer)
	if req.First < 0 || req.First > timeline.MaxPageSize {
		return nil, apierr.Errorf(apierr.BadInput, "first must be between 1 and %d", timeline.MaxPageSize)
	}
	n := timeline.OrDefault(req.First)
	if req.After == "" {
		device, err := validDevice(req.Device)
		if err != nil {
			return nil, err
		}
		return s.firstLivePage(ctx, req.Viewer, device, n)
	}
	return s.nextLivePage(ctx, req, n)
}

// replayRead is what a read of the replay timeline found: up to its need
// of entries, how far it scanned, and whether more may follow.
type replayRead struct {
	found   []LiveEntry
	scanned *store.Item
	more    bool
}

// loadReplayView reads what a replay read needs of viewer (loadView) for a
// scan from pos. It goes without the request's rate charge: it is sent at
// the same time as the read that carries it, and must not wait for its
// verdict (a refused request fails on that read; this one only reads, bar
// the throttled activity touch any refused read may carry).
func (s *Service) loadReplayView(ctx context.Context, tl core.Timeline, viewer store.ID, pos *store.Item, need int) (*timeline.View, error) {
	return s.LoadView(ratelimit.WithoutCharge(ctx), tl, viewer, core.Older, pos, need)
}

// collectReplays reads up to need replays visible to v's viewer from pos,
// leaving out those in the stored snapshot (empty: none stored yet).
func (s *Service) collectReplays(ctx context.Context, v *timeline.View, pos *store.Item, need int, snapshot string) (replayRead, error) {
	found, scanned, more, err := timeline.FillTimelinePage(ctx, s.Service, v, core.Older, pos, need, s.visibleReplays(snapshot))
	if err != nil {
		return replayRead{}, err
	}
	out := make([]LiveEntry, len(found))
	for i, e := range found {
		out[i] = LiveEntry{It: e.It, State: core.StateReplay, l: e.Val}
	}
	return replayRead{found: out, scanned: scanned, more: more}, nil
}

// finishLivePage makes a page of n edges of the snapshot's entries snap
// (from the cursor on, up to n+1 of them), followed, when they fall short,
// by the replays rp (read for a need of n+1 from where they begin).
func (s *Service) finishLivePage(viewer store.ID, ref snapshotRef, n int, snap []LiveEntry, rp replayRead) *core.LivePage {
	found := snap
	more := len(found) > n
	var scanned *LiveEntry
	if !more {
		r := rp.found[:min(len(rp.found), n+1-len(found))]
		found = append(found, r...)
		more = rp.more || len(found) > n
		if rp.scanned != nil {
			scanned = &LiveEntry{It: *rp.scanned, State: core.StateReplay}
		}
	}
	return s.livePage(viewer, ref, n, found, scanned, more)
}

// firstLivePage serves a first page from the device's snapshot: reused
// when taken less than Options.SnapshotReuse ago, otherwise a new one that
// replaces it. Concurrent first pages of one device in this process
// (aliases of one operation, double taps) share one build.
func (s *Service) firstLivePage(ctx context.Context, viewer store.ID, device string, n int) (*core.LivePage, error) {
	now := s.NowMS()
	top := &store.Item{TS: now, ID: math.MaxUint64}
	tl := s.ReplaysTL().WithFollowees() // a new snapshot files the followed anchors' sessions
	var (
		v      *timeline.View
		reused *snapshotRead
		err    error
	)
	if s.Opts.SnapshotReuse > 0 {
		err = roundtrip.Parallel(ctx,
			func(ctx context.Context) (err error) {
				v, err = s.loadReplayView(ctx, tl, viewer, top, n+1)
				return err
			},
			func(ctx context.Context) (err error) {
				reused, err = s.recentSnapshot(ctx, viewer, device, now-s.Opts.SnapshotReuse.Milliseconds(), n+1)
				return err
			})
	} else {
		v, err = s.LoadView(ctx, tl, viewer, core.Older, top, n+1)
	}
	if err != nil {
		return nil, err
	}
	if reused != nil {
		return s.pageFromSnapshot(ctx, viewer, v, reused.ref, reused.items, 0, n)
	}
	return s.newSnapshotPage(ctx, v, device, now, n)
}

// newSnapshotPage takes a new snapshot of v's viewer for device at now
// (ms) and serves its first page of n.
func (s *Service) newSnapshotPage(ctx context.Context, v *timeline.View, device string, now int64, n int) (*core.LivePage, error) {
	viewer, top := v.Viewer, &store.Item{TS: now, ID: math.MaxUint64}
	// The replays are read while the snapshot is stored, when its entries
	// cannot fill the page alone: until it is stored nobody can tell which
	// replays it holds, so those are left out once both are known, below.
	var (
		rp     replayRead
		readRp bool
	)
	replays := func(ctx context.Context) (err error) {
		rp, err = s.collectReplays(ctx, v, top, n+1, "")
		readRp = true
		return err
	}
	got, err, _ := s.Snapshots.Do(store.FormatID(viewer)+"/"+device, func() (any, error) {
		return s.takeSnapshot(ctx, viewer, device, now, followedAnchors(v), n+1, func(ctx context.Context, items []store.Item) error {
			if len(items) <= n {
				return replays(ctx)
			}
			return s.sendExtra(ctx, v)
		})
	})
	if err != nil {
		return nil, err
	}
	b := got.(builtSnapshot)
	snap, stopped, err := s.headEntries(ctx, v, b, n)
	if err != nil {
		return nil, err
	}
	if stopped != nil {
		return s.livePage(viewer, b.ref, n, snap, stopped, true), nil
	}
	// Sessions the viewer is not shown left the snapshot's entries short,
	// or the build was another request's: the replays now.
	if len(snap) <= n && !readRp {
		if err := replays(ctx); err != nil {
			return nil, err
		}
	}
	if err := s.sendExtra(ctx, v); err != nil {
		return nil, err
	}
	// A session that ended in the very millisecond the snapshot was taken
	// may be in both: it is shown once, from the snapshot. A build shared
	// with a concurrent first page may be a little older than this request:
	// its replays begin at its time.
	// The replays found are at most a page, the snapshot's entries as many
	// as the viewer's anchors queued: the set is of the replays.
	if len(rp.found) > 0 {
		inSnapshot := make(map[store.ID]bool, len(rp.found))
		for _, e := range rp.found {
			inSnapshot[e.It.ID] = false
		}
		for _, it := range b.items {
			if _, ok := inSnapshot[it.ID]; ok {
				inSnapshot[it.ID] = true
			}
		}
		rp.found = slices.DeleteFunc(rp.found, func(e LiveEntry) bool { return inSnapshot[e.It.ID] || e.It.TS > b.ref.taken })
	}
	return s.finishLivePage(viewer, b.ref, n, snap, rp), nil
}

// followedAnchors are the anchors v's viewer follows, and the followees
// whose follow has yet to settle (any of them may be an anchor the
// settle is about to note): a follow shows in the follower's next first
// page, as in its next following feed page.
func followedAnchors(v *timeline.View) []store.ID {
	out := v.Followees
	for _, f := range v.Pending() {
		if !slices.Contains(out, f) {
			out = append(out[:len(out):len(out)], f)
		}
	}
	return out
}

// sendExtra sends the writes v holds for the next round trip (an
// activation due), when no replay read has carried them.
func (s *Service) sendExtra(ctx context.Context, v *timeline.View) error {
	if len(v.Extra) == 0 {
		return nil
	}
	err := store.FirstErr(s.DoMulti(ctx, v.Extra...))
	v.Extra = nil
	return err
}

// nextLivePage reads the page after a cursor: from the snapshot while it
// lasts (state 0), then the replays.
func (s *Service) nextLivePage(ctx context.Context, req core.LiveRequest, n int) (*core.LivePage, error) {
	c, err := s.OpenCursor(ctx, req.After, req.Viewer)
	if err != nil {
		return nil, err
	}
	ref, at, ok := decodeSnapshotRef(c.Session)
	if !ok {
		return nil, apierr.Errorf(apierr.InvalidCursor, "this cursor belongs to another feed; request the first page without a cursor")
	}
	key := s.Keys.Snapshot(req.Viewer, ref.encode())
	pos := &store.Item{TS: c.TS, ID: c.LastID}
	var v *timeline.View
	if c.State == cursor.StateTimeline {
		var exists int64
		err := roundtrip.Parallel(ctx,
			func(ctx context.Context) (err error) {
				v, err = s.loadReplayView(ctx, s.ReplaysTL(), req.Viewer, pos, n+1)
				return err
			},
			func(ctx context.Context) (err error) {
				exists, err = s.Do(ctx, s.Redis.B().Exists().Key(key).Build()).AsInt64()
				return err
			})
		if err != nil {
			return nil, err
		}
		if exists == 0 {
			return nil, errSnapshotExpired
		}
		rp, err := s.collectReplays(ctx, v, pos, n+1, key)
		if err != nil {
			return nil, err
		}
		return s.finishLivePage(req.Viewer, ref, n, nil, rp), nil
	}
	if at < 0 {
		return nil, errSnapshotExpired // a snapshot stored as a sorted set, before its entries had places
	}
	var items []store.Item
	err = roundtrip.Parallel(ctx,
		func(ctx context.Context) (err error) {
			v, err = s.loadReplayView(ctx, s.ReplaysTL(), req.Viewer, &store.Item{TS: ref.taken, ID: math.MaxUint64}, n+1)
			return err
		},
		func(ctx context.Context) (err error) { items, err = s.snapshotItems(ctx, key, at+1, n+1); return err })
	if err != nil {
		return nil, err
	}
	return s.pageFromSnapshot(ctx, req.Viewer, v, ref, items, at+1, n)
}

// pageFromSnapshot serves a page from items, the snapshot's next entries
// (up to n+1, from its entry at), and, when they fall short, the replays
// from the top (those are read at the same time as the sessions).
func (s *Service) pageFromSnapshot(ctx context.Context, viewer store.ID, v *timeline.View, ref snapshotRef, items []store.Item, at, n int) (*core.LivePage, error) {
	key := s.Keys.Snapshot(viewer, ref.encode())
	top := &store.Item{TS: ref.taken, ID: math.MaxUint64}
	var (
		snap []LiveEntry
		rp   replayRead
	)
	sessions := func(ctx context.Context) (err error) { snap, err = s.snapshotEntries(ctx, v, items, at); return err }
	replays := func(ctx context.Context) (err error) { rp, err = s.collectReplays(ctx, v, top, n+1, key); return err }
	full := len(items) > n // the snapshot alone may fill the page
	var err error
	if full {
		err = sessions(ctx)
	} else {
		err = roundtrip.Parallel(ctx, sessions, replays)
	}
	if err != nil {
		return nil, err
	}
	if !full || len(snap) > n {
		return s.finishLivePage(viewer, ref, n, snap, rp), nil
	}
	// Sessions gone from under the snapshot, whose anchors were hidden
	// from the viewer since it was taken (their clean-up still pending), or
	// whose titles its keyword filters match, left it short: read on in
	// it, within the read bound, then the replays.
	for round := 1; full && len(snap) <= n && round < timeline.MaxRounds; round++ {
		at += len(items)
		if items, err = s.snapshotItems(ctx, key, at, n+1); err != nil {
			return nil, err
		}
		more, err := s.snapshotEntries(ctx, v, items, at)
		if err != nil {
			return nil, err
		}
		snap, full = append(snap, more...), len(items) > n
	}
	if full && len(snap) <= n {
		// The read bound ran out inside the snapshot: the page ends short,
		// its cursor past every entry read, and goes on in the snapshot.
		return s.livePage(viewer, ref, n, snap, snapshotEntry(items, at, len(items)-1), true), nil
	}
	if len(snap) <= n {
		if err := replays(ctx); err != nil {
			return nil, err
		}
	}
	return s.finishLivePage(viewer, ref, n, snap, rp), nil
}

// visibleReplays keeps ended sessions of anchors the viewer follows that
// are not in the stored snapshot (empty: not checked here): one that ended
// in the very millisecond the snapshot was taken may be in both, and is
// shown once, from the snapshot. Titles the viewer's keyword filters
// match are left out.
func (s *Service) visibleReplays(snapshot string) timeline.Loader[core.LiveSession] {
	return func(ctx context.Context, v *timeline.View, items []store.Item) ([]*core.LiveSession, error) {
		ids := make([]store.ID, len(items))
		for i, it := range items {
			ids[i] = it.ID
		}
		cmds := s.liveCmds(append([]rueidis.Completed(nil), v.Extra...), ids)
		check := snapshot != "" && len(ids) > 0
		if check {
			cmds = append(cmds, s.Redis.B().Get().Key(snapshot).Build())
		}
		rs := s.DoMulti(ctx, cmds...)
		if err := store.FirstErr(rs); err != nil {
			return nil, err
		}
		rs = rs[len(v.Extra):]
		v.Extra = nil
		var inSnapshot map[store.ID]bool
		if check {
			var err error
			if inSnapshot, err = snapshotIDs(rs[len(ids)]); err != nil {
				return nil, err
			}
		}
		ls, err := parseLives(ids, rs)
		if err != nil {
			return nil, err
		}
		for i, l := range ls {
			visible := l != nil && !inSnapshot[ids[i]] &&
				l.StartedAt != nil && l.EndedAt != nil && l.EndedAt.UnixMilli() == items[i].TS &&
				l.Anchor != v.Viewer && !v.Skip[l.Anchor] && !l.AnchorSuspended && !v.Filtered(l.Title)
			if !visible {
				ls[i] = nil
			}
		}
		return ls, nil
	}
}

// snapshotIDs are the sessions of a stored snapshot read whole (none
// when it is gone).
func snapshotIDs(r rueidis.RedisResult) (map[store.ID]bool, error) {
	raw, err := r.ToString()
	if rueidis.IsRedisNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read live snapshot: %w", err)
	}
	items, err := core.ParseSnapshot(raw)
	if err != nil {
		return nil, err
	}
	in := make(map[store.ID]bool, len(items))
	for _, it := range items {
		in[it.ID] = true
	}
	return in, nil
}

// livePage makes a page of n edges of found (up to n+1 entries); when
// found falls short, its end cursor is scanned, the last entry read (nil:
// the last edge).
func (s *Service) livePage(viewer store.ID, ref snapshotRef, n int, found []LiveEntry, scanned *LiveEntry, more bool) *core.LivePage {
	sealer, session := s.Cursors(), ref.encode() // once a page
	seal := func(e LiveEntry) string {
		c := cursor.Cursor{Session: session, State: cursor.StateTimeline, LastID: e.It.ID, TS: e.It.TS, Viewer: viewer}
		if e.State != core.StateReplay {
			c.Session, c.State = ref.at(e.At), cursor.StateSnapshot
		}
		return sealer.Seal(c)
	}
	shown := found[:min(n, len(found))]
	pg := &core.LivePage{Edges: make([]core.LiveEdge, len(shown)), HasNext: more}
	for i, e := range shown {
		pg.Edges[i] = core.LiveEdge{Session: e.l, State: e.State, Cursor: seal(e)}
	}
	if len(shown) > 0 {
		pg.StartCursor, pg.EndCursor = pg.Edges[0].Cursor, pg.Edges[len(shown)-1].Cursor
	}
	// Past everything scanned, when filtering left the page short.
	if len(found) <= n && scanned != nil {
		pg.EndCursor = seal(*scanned)
	}
	return pg
}
