package feedcore

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/roundtrip"
)

// MaxTitleLen is the longest live title, in characters.
const MaxTitleLen = 200

// liveTransition moves the session KEYS[1] of anchor ARGV[1] to started
// (ARGV[2] "b") or ended ("e") at ARGV[3], atomically, so racing requests
// cannot start an ended session or end one twice. It returns "ok:<b>"
// (b: the start time, empty when never started) or a refusal.
var liveTransition = newScript(false, `
local l = redis.call('HMGET', KEYS[1], 'a', 'b', 'e')
if not l[1] then return 'missing' end
if l[1] ~= ARGV[1] then return 'forbidden' end
if l[3] then return 'ended' end
if ARGV[2] == 'b' and l[2] then return 'live' end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return 'ok:' .. (l[2] or '')
`)

// ScheduleLive creates a PREVIEW session of anchor starting at at.
func (s *Service) ScheduleLive(ctx context.Context, anchor ID, title string, at time.Time) (_ *LiveSession, err error) {
	defer wrap(&err, "schedule a live session of user %d", anchor)
	title, err = CheckText("title", title, MaxTitleLen)
	if err != nil {
		return nil, err
	}
	if err := s.checkScheduledStart(at); err != nil {
		return nil, err
	}
	if err := s.usersExist(ctx, anchor); err != nil {
		return nil, err
	}
	// The journal entry takes the session's id from the shard's clock in
	// the same step.
	shard := s.shardOf(anchor)
	keys := []string{s.k.journal(shard), s.k.clock(shard)}
	args := append(logArgs("alloc", s.nowMS(), "", 0, false, nil), "k", jLive, "a", FormatID(anchor))
	arr, err := s.commit(ctx, logScript, keys, args, logScript.cmd(s.c.B(), keys, args)).ToArray()
	if err != nil || len(arr) < 4 {
		return nil, fmt.Errorf("schedule live: journal: %w", err)
	}
	ms, _ := arr[1].AsInt64()
	n, _ := arr[2].AsInt64()
	jid, _ := arr[3].ToString()
	at = at.Truncate(time.Millisecond).UTC()
	l := &LiveSession{ID: composeID(ms, uint64(n), shard), Anchor: anchor, Title: title, ScheduledStartAt: &at}
	if err := s.storeLive(ctx, l); err != nil {
		return nil, fmt.Errorf("schedule live (recorded, a worker finishes it): %w", err)
	}
	s.end(ctx, shard, jid)
	return l, nil
}

// PutLive stores a session with whatever times it has (import, demo,
// ScheduleLive) and files it where its state belongs: an anchor's queue
// while PREVIEW or LIVE, the replay timelines once ended after starting.
func (s *Service) PutLive(ctx context.Context, l *LiveSession) (err error) {
	defer wrap(&err, "store live session %d", l.ID)
	if l.ID == 0 || l.Anchor == 0 {
		return apierr.Errorf(apierr.BadInput, "live session id and anchor must be positive numbers")
	}
	if l.ScheduledStartAt == nil && l.StartedAt == nil {
		return apierr.Errorf(apierr.BadInput, "a live session needs scheduledStartAt or startedAt")
	}
	if err := s.usersExist(ctx, l.Anchor); err != nil {
		return err
	}
	shard := s.shardOf(l.Anchor)
	jid, err := s.begin(ctx, shard, "k", jLive, "a", FormatID(l.Anchor), "p", FormatID(l.ID))
	if err != nil {
		return err
	}
	if err := s.storeLive(ctx, l); err != nil {
		return err
	}
	s.end(ctx, shard, jid)
	return nil
}

// storeLive writes a journaled session's hash, its record of truth, and
// settles the rest from it.
func (s *Service) storeLive(ctx context.Context, l *LiveSession) error {
	hset := s.c.B().Hset().Key(s.k.live(l.ID)).FieldValue().FieldValue("a", FormatID(l.Anchor)).FieldValue("t", l.Title)
	for f, t := range map[string]*time.Time{"s": l.ScheduledStartAt, "b": l.StartedAt, "e": l.EndedAt} {
		if t != nil {
			hset = hset.FieldValue(f, scoreArg(t.UnixMilli()))
		}
	}
	if err := s.commit(ctx, nil, nil, nil, hset.Build()).Error(); err != nil {
		return fmt.Errorf("store live session %d: %w", l.ID, err)
	}
	return s.settleLive(ctx, l.Anchor, l.ID)
}

// queueScore orders an anchor's queue: LIVE by start time (positive, newest
// first), then PREVIEW by scheduled start (negated, so soonest first).
func queueScore(l *LiveSession) int64 {
	if l.StartedAt != nil {
		return l.StartedAt.UnixMilli()
	}
	return -l.ScheduledStartAt.UnixMilli()
}

func (s *Service) enqueue(ctx context.Context, anchor ID, it Item) error {
	return s.do(ctx, s.c.B().Zadd().Key(s.k.liveQueue(anchor)).ScoreMember().ScoreMember(float64(it.TS), member(it.ID)).Build()).Error()
}

// fileReplay adds an ended session to its anchor's replay outbox and queues
// its fan-out to followers' replay inboxes.
func (s *Service) fileReplay(ctx context.Context, anchor ID, it Item) error {
	if err := s.do(ctx, s.c.B().Zadd().Key(s.k.replayOutbox(anchor)).ScoreMember().
		ScoreMember(float64(it.TS), member(it.ID)).Build()).Error(); err != nil {
		return err
	}
	return s.emit(ctx, event{Type: evReplay, User: anchor, Item: it})
}

// StartLive moves anchor's session from PREVIEW to LIVE.
func (s *Service) StartLive(ctx context.Context, anchor, id ID) (_ *LiveSession, err error) {
	defer wrap(&err, "start live session %d", id)
	return s.changeLive(ctx, anchor, id, "b")
}

// EndLive ends anchor's session: a LIVE one becomes a replay, a PREVIEW one
// is cancelled and shown nowhere.
func (s *Service) EndLive(ctx context.Context, anchor, id ID) (_ *LiveSession, err error) {
	defer wrap(&err, "end live session %d", id)
	return s.changeLive(ctx, anchor, id, "e")
}

// changeLive journals a state change, makes it on the session's hash (the
// record of truth, where the transition script refuses what the state
// machine forbids) and settles the rest.
func (s *Service) changeLive(ctx context.Context, anchor, id ID, field string) (*LiveSession, error) {
	shard := s.shardOf(anchor)
	jid, err := s.begin(ctx, shard, "k", jLive, "a", FormatID(anchor), "p", FormatID(id))
	if err != nil {
		return nil, err
	}
	if _, err := s.transition(ctx, anchor, id, field, s.nowMS()); err != nil {
		var refused *apierr.Error
		if errors.As(err, &refused) {
			s.end(ctx, shard, jid) // refused: nothing changed
		}
		return nil, err
	}
	if err := s.settleLive(ctx, anchor, id); err != nil {
		return nil, fmt.Errorf("change live session %d (recorded, a worker finishes it): %w", id, err)
	}
	s.end(ctx, shard, jid)
	return s.liveSession(ctx, id)
}

func (s *Service) transition(ctx context.Context, anchor, id ID, field string, now int64) (started bool, err error) {
	keys, args := []string{s.k.live(id)}, []string{FormatID(anchor), field, scoreArg(now)}
	res, err := s.commit(ctx, liveTransition, keys, args, liveTransition.cmd(s.c.B(), keys, args)).ToString()
	if err != nil {
		return false, err
	}
	switch res {
	case "missing":
		return false, apierr.Errorf(apierr.NotFound, "no live session with id %d", id)
	case "forbidden":
		return false, apierr.Errorf(apierr.Forbidden, "only the session's anchor may change it")
	case "ended":
		return false, apierr.Errorf(apierr.BadInput, "the session has ended")
	case "live":
		return false, apierr.Errorf(apierr.BadInput, "the session is live already")
	}
	return res != "ok:", nil
}

// dequeue removes a session from its anchor's queue. The queues need no
// index of the anchors that have sessions (readers find them by live
// shard, liveQueued), so there is nothing else to settle.
func (s *Service) dequeue(ctx context.Context, anchor, id ID) error {
	return s.do(ctx, s.c.B().Zrem().Key(s.k.liveQueue(anchor)).Member(member(id)).Build()).Error()
}

// LiveSessions returns sessions by id in order, nil where none exists. One
// pipelined round trip.
func (s *Service) LiveSessions(ctx context.Context, ids []ID) (_ []*LiveSession, err error) {
	defer wrap(&err, "read live sessions")
	return parseLives(ids, s.doMulti(ctx, s.liveCmds(nil, ids)...))
}

// liveCmds appends the reads of sessions ids to cmds (parseLives reads
// their replies).
func (s *Service) liveCmds(cmds []rueidis.Completed, ids []ID) []rueidis.Completed {
	for _, id := range ids {
		cmds = append(cmds, s.c.B().Hgetall().Key(s.k.live(id)).Build())
	}
	return cmds
}

// parseLives reads the replies of liveCmds: one session per id, nil where
// none exists.
func parseLives(ids []ID, rs []rueidis.RedisResult) ([]*LiveSession, error) {
	out := make([]*LiveSession, len(ids))
	for i, id := range ids {
		m, err := rs[i].AsStrMap()
		if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			out[i] = parseLive(id, m)
		}
	}
	return out, nil
}

func (s *Service) liveSession(ctx context.Context, id ID) (*LiveSession, error) {
	ls, err := s.LiveSessions(ctx, []ID{id})
	if err != nil {
		return nil, err
	}
	if ls[0] == nil {
		return nil, apierr.Errorf(apierr.NotFound, "no live session with id %d", id)
	}
	return ls[0], nil
}

func parseLive(id ID, m map[string]string) *LiveSession {
	anchor, _ := strconv.ParseUint(m["a"], 10, 64)
	l := &LiveSession{ID: id, Anchor: anchor, Title: m["t"]}
	at := func(f string) *time.Time {
		ms, err := strconv.ParseInt(m[f], 10, 64)
		if err != nil {
			return nil
		}
		t := time.UnixMilli(ms).UTC()
		return &t
	}
	l.ScheduledStartAt, l.StartedAt, l.EndedAt = at("s"), at("b"), at("e")
	return l
}

// snapshotRef is what a live cursor's session field carries: the
// snapshot's key suffix and the time it was taken.
type snapshotRef struct {
	id    string // 8 random bytes
	taken int64  // ms
}

func (r snapshotRef) encode() string {
	return r.id + string(binary.BigEndian.AppendUint64(nil, uint64(r.taken)))
}

func decodeSnapshotRef(s string) (snapshotRef, bool) {
	if len(s) != 16 {
		return snapshotRef{}, false
	}
	return snapshotRef{id: s[:8], taken: int64(binary.BigEndian.Uint64([]byte(s[8:])))}, true
}

// liveEntry is a session found for a live page and the state it is shown in.
type liveEntry struct {
	it    Item
	state LiveState
	l     *LiveSession
}

// LiveFeed returns a page of viewer's live feed: the LIVE and PREVIEW
// sessions of followed anchors from a snapshot taken at the first page,
// then their replays that ended by the snapshot, newest first.
//
// Round trips: a first page costs 3 (the viewer's graph and replay view,
// with the device's recent snapshot when reuse is on; the followed
// anchors' queues, one script per live shard, while the first replays are
// read; the sessions, read as the snapshot is stored), and a page after a
// cursor 3 at most (the snapshot and the replay view; the sessions and the
// replays). The replay view is read before it is known to be needed, so a
// page never waits for it in turn. More only in rare cases: a queue entry
// left behind by a racing start or end (one more, to take it out of the
// stored snapshot), a replay scan that crosses its inbox's horizon or reads
// on past filtered entries (as followingFeed does).
func (s *Service) LiveFeed(ctx context.Context, req LiveRequest) (_ *LivePage, err error) {
	defer wrap(&err, "live feed of user %d", req.Viewer)
	if req.First < 0 || req.First > MaxPageSize {
		return nil, apierr.Errorf(apierr.BadInput, "first must be between 1 and %d", MaxPageSize)
	}
	n := orDefault(req.First)
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
	found   []liveEntry
	scanned *Item
	more    bool
}

// loadReplayView reads what a replay read needs of viewer (loadView) for a
// scan from pos. It goes without the request's rate charge: it is sent at
// the same time as the read that carries it, and must not wait for its
// verdict (a refused request fails on that read; this one only reads, bar
// the throttled activity touch any refused read may carry).
func (s *Service) loadReplayView(ctx context.Context, tl timeline, viewer ID, pos *Item, need int) (*view, error) {
	return s.loadView(withoutCharge(ctx), tl, viewer, older, pos, need)
}

// collectReplays reads up to need replays visible to v's viewer from pos,
// leaving out those in the stored snapshot (empty: none stored yet).
func (s *Service) collectReplays(ctx context.Context, v *view, pos *Item, need int, snapshot string) (replayRead, error) {
	found, scanned, more, err := collect(ctx, s, v, older, pos, need, s.visibleReplays(snapshot))
	if err != nil {
		return replayRead{}, err
	}
	out := make([]liveEntry, len(found))
	for i, e := range found {
		out[i] = liveEntry{it: e.it, state: StateReplay, l: e.val}
	}
	return replayRead{found: out, scanned: scanned, more: more}, nil
}

// finishLivePage makes a page of n edges of the snapshot's entries snap
// (from the cursor on, up to n+1 of them), followed, when they fall short,
// by the replays rp (read for a need of n+1 from where they begin).
func (s *Service) finishLivePage(viewer ID, ref snapshotRef, n int, snap []liveEntry, rp replayRead) *LivePage {
	found := slices.Clip(snap) // a snapshot build's entries may be shared: append copies
	more := len(found) > n
	var scanned *Item
	if !more {
		r := rp.found[:min(len(rp.found), n+1-len(found))]
		found = append(found, r...)
		scanned, more = rp.scanned, rp.more || len(found) > n
	}
	return s.livePage(viewer, ref, n, found, scanned, more)
}

// firstLivePage serves a first page from the device's snapshot: reused
// when taken less than Options.SnapshotReuse ago, otherwise a new one that
// replaces it. Concurrent first pages of one device in this process
// (aliases of one operation, double taps) share one build.
func (s *Service) firstLivePage(ctx context.Context, viewer ID, device string, n int) (*LivePage, error) {
	now := s.nowMS()
	top := &Item{TS: now, ID: math.MaxUint64}
	tl := s.replaysTL().withFollowees() // a new snapshot files the followed anchors' sessions
	var (
		v      *view
		reused *snapshotRead
		err    error
	)
	if s.o.SnapshotReuse > 0 {
		err = roundtrip.Parallel(ctx,
			func(ctx context.Context) (err error) {
				reused, err = s.recentSnapshot(ctx, viewer, device, now-s.o.SnapshotReuse.Milliseconds(), n+1)
				return err
			},
			func(ctx context.Context) (err error) {
				v, err = s.loadReplayView(ctx, tl, viewer, top, n+1)
				return err
			})
	} else {
		v, err = s.loadView(ctx, tl, viewer, older, top, n+1)
	}
	if err != nil {
		return nil, err
	}
	if reused != nil {
		return s.pageFromSnapshot(ctx, viewer, v, reused.ref, reused.items, n)
	}
	// The snapshot is built while the first replays are read: until it is
	// stored nobody can tell which replays it holds, so those are left out
	// once both are known, below.
	var (
		ref  snapshotRef
		snap []liveEntry
		rp   replayRead
	)
	err = roundtrip.Parallel(ctx,
		func(ctx context.Context) error {
			got, err, _ := s.snapshots.Do(FormatID(viewer)+"/"+device, func() (any, error) {
				ref, entries, err := s.takeSnapshot(ctx, viewer, device, now, v.followees)
				return builtSnapshot{ref, entries}, err
			})
			if err != nil {
				return err
			}
			b := got.(builtSnapshot)
			ref, snap = b.ref, b.entries
			return nil
		},
		func(ctx context.Context) (err error) { rp, err = s.collectReplays(ctx, v, top, n+1, ""); return err })
	if err != nil {
		return nil, err
	}
	// A session that ended in the very millisecond the snapshot was taken
	// may be in both: it is shown once, from the snapshot. A build shared
	// with a concurrent first page may be a little older than this request:
	// its replays begin at its time.
	in := make(map[ID]bool, len(snap))
	for _, e := range snap {
		in[e.it.ID] = true
	}
	rp.found = slices.DeleteFunc(rp.found, func(e liveEntry) bool { return in[e.it.ID] || e.it.TS > ref.taken })
	return s.finishLivePage(viewer, ref, n, snap, rp), nil
}

// nextLivePage reads the page after a cursor: from the snapshot while it
// lasts (state 0), then the replays.
func (s *Service) nextLivePage(ctx context.Context, req LiveRequest, n int) (*LivePage, error) {
	c, err := s.openCursor(ctx, req.After, req.Viewer)
	if err != nil {
		return nil, err
	}
	ref, ok := decodeSnapshotRef(c.Session)
	if !ok {
		return nil, apierr.Errorf(apierr.InvalidCursor, "this cursor belongs to another feed; request the first page without a cursor")
	}
	key := s.k.snapshot(req.Viewer, ref.encode())
	pos := &Item{TS: c.TS, ID: c.LastID}
	var v *view
	if c.State == StateTimeline {
		var exists int64
		err := roundtrip.Parallel(ctx,
			func(ctx context.Context) (err error) {
				exists, err = s.do(ctx, s.c.B().Exists().Key(key).Build()).AsInt64()
				return err
			},
			func(ctx context.Context) (err error) {
				v, err = s.loadReplayView(ctx, s.replaysTL(), req.Viewer, pos, n+1)
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
	var items []Item
	err = roundtrip.Parallel(ctx,
		func(ctx context.Context) (err error) { items, err = s.snapshotItems(ctx, key, pos, n+1); return err },
		func(ctx context.Context) (err error) {
			v, err = s.loadReplayView(ctx, s.replaysTL(), req.Viewer, &Item{TS: ref.taken, ID: math.MaxUint64}, n+1)
			return err
		})
	if err != nil {
		return nil, err
	}
	return s.pageFromSnapshot(ctx, req.Viewer, v, ref, items, n)
}

// pageFromSnapshot serves a page from items, the snapshot's next entries
// (up to n+1), and, when they fall short, the replays from the top (those
// are read at the same time as the sessions).
func (s *Service) pageFromSnapshot(ctx context.Context, viewer ID, v *view, ref snapshotRef, items []Item, n int) (*LivePage, error) {
	key := s.k.snapshot(viewer, ref.encode())
	top := &Item{TS: ref.taken, ID: math.MaxUint64}
	var (
		snap []liveEntry
		rp   replayRead
	)
	sessions := func(ctx context.Context) (err error) { snap, err = s.snapshotEntries(ctx, items); return err }
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
	if full && len(snap) <= n {
		// A session hash gone from under the snapshot left it short.
		if err := replays(ctx); err != nil {
			return nil, err
		}
	}
	return s.finishLivePage(viewer, ref, n, snap, rp), nil
}

// DefaultDevice is the device of a live feed request that names none.
const DefaultDevice = "default"

const maxDeviceLen = 64

// validDevice checks a device id: 1 to 64 ASCII letters, digits, '.', '_',
// ':' or '-'; empty is DefaultDevice.
func validDevice(d string) (string, error) {
	if d == "" {
		return DefaultDevice, nil
	}
	ok := len(d) <= maxDeviceLen
	for i := 0; ok && i < len(d); i++ {
		c := d[i]
		ok = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("._:-", c) >= 0
	}
	if !ok {
		return "", apierr.Errorf(apierr.BadInput, "a device id is 1 to %d letters, digits, '.', '_', ':' or '-'", maxDeviceLen)
	}
	return d, nil
}

// snapSwap records KEYS[2], the snapshot just stored (ref ARGV[3], taken
// at ARGV[4]), as device ARGV[2]'s in viewer's index of devices KEYS[1]
// (zset, score: taken, member: ref .. device), deletes the snapshot the
// device had before, and, past ARGV[6] devices, the oldest devices'
// snapshots. ARGV[1] is the prefix of the viewer's snapshot keys (same
// hash tag), ARGV[5] the snapshot TTL (ms). So a viewer holds at most
// ARGV[6] snapshots, one per device, whatever the requests.
var snapSwap = newScript(false, `
local prefix, device, ref, taken, ttl, most = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5]), tonumber(ARGV[6])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. (taken - ttl))
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(m, 17) == device and string.sub(m, 1, 16) ~= ref then
    redis.call('ZREM', KEYS[1], m)
    redis.call('DEL', prefix .. string.sub(m, 1, 16))
  end
end
redis.call('ZADD', KEYS[1], taken, ref .. device)
local over = redis.call('ZCARD', KEYS[1]) - most
if over > 0 then
  for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, over - 1)) do
    if m ~= ref .. device then
      redis.call('ZREM', KEYS[1], m)
      redis.call('DEL', prefix .. string.sub(m, 1, 16))
    end
  end
end
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
`)

// builtSnapshot is what one build of a snapshot yields.
type builtSnapshot struct {
	ref     snapshotRef
	entries []liveEntry
}

// snapshotRead is a stored snapshot and its first entries.
type snapshotRead struct {
	ref   snapshotRef
	items []Item
}

// recentDevice finds device ARGV[1]'s snapshot in viewer's index of
// devices KEYS[1] and, when it was taken after ARGV[2] (ms) and still
// exists, replies {ref, its first ARGV[4] entries, flat member, score}; else
// {}. ARGV[3] is the prefix of the viewer's snapshot keys (same hash tag),
// so the lookup and the read are one step.
var recentDevice = newScript(true, `
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(m, 17) == ARGV[1] then
    local ref = string.sub(m, 1, 16)
    local key = ARGV[3] .. ref
    if tonumber(redis.call('ZSCORE', KEYS[1], m)) > tonumber(ARGV[2]) and redis.call('EXISTS', key) == 1 then
      return {ref, redis.call('ZRANGE', key, '+inf', '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, tonumber(ARGV[4]), 'WITHSCORES')}
    end
    return {}
  end
end
return {}
`)

// recentSnapshot returns device's snapshot with its first need entries
// when it was taken after since (ms), else nil.
func (s *Service) recentSnapshot(ctx context.Context, viewer ID, device string, since int64, need int) (*snapshotRead, error) {
	arr, err := s.do(ctx, recentDevice.cmd(s.c.B(), []string{s.k.liveDevices(viewer)},
		[]string{device, scoreArg(since), s.k.snapshot(viewer, ""), itoa(need)})).ToArray()
	if err != nil || len(arr) < 2 {
		return nil, err
	}
	raw, _ := arr[0].ToString()
	ref, ok := decodeSnapshotRef(raw)
	if !ok {
		return nil, fmt.Errorf("device snapshot: unreadable ref %q", raw)
	}
	items, err := entriesOf(arr[1])
	if err != nil {
		return nil, fmt.Errorf("device snapshot: %w", err)
	}
	return &snapshotRead{ref: ref, items: dropSentinel(items)}, nil
}

// dropSentinel removes an empty snapshot's sentinel (id 0) from its entries.
func dropSentinel(items []Item) []Item {
	return slices.DeleteFunc(items, func(it Item) bool { return it.ID == 0 })
}

// liveQueues replies the entries of the queues KEYS (of anchors on one live
// shard), flat member, score, each queue newest first.
var liveQueues = newScript(true, `
local out = {}
for _, k in ipairs(KEYS) do
  local q = redis.call('ZRANGE', k, '+inf', '-inf', 'BYSCORE', 'REV', 'WITHSCORES')
  for i = 1, #q do out[#out + 1] = q[i] end
end
return out
`)

// liveQueued lists the queued (LIVE and PREVIEW) sessions of anchors: one
// script per live shard holding any of their queues, in one round trip.
// The queues are not checked against the sessions here.
func (s *Service) liveQueued(ctx context.Context, anchors []ID) ([]Item, error) {
	var byShard [liveShards][]string
	for _, a := range anchors {
		n := liveShardOf(a)
		byShard[n] = append(byShard[n], s.k.liveQueueIn(n, a))
	}
	var cmds []rueidis.Completed
	for _, keys := range byShard {
		if len(keys) > 0 {
			cmds = append(cmds, liveQueues.cmd(s.c.B(), keys, nil))
		}
	}
	var items []Item
	for _, r := range s.doMulti(ctx, cmds...) {
		q, err := parseEntries(r)
		if err != nil {
			return nil, fmt.Errorf("read live queues: %w", err)
		}
		items = append(items, q...)
	}
	return items, nil
}

// takeSnapshot stores the LIVE and PREVIEW sessions of followees under a
// fresh id as device's snapshot of viewer, replacing the one it had, and
// returns it with all its entries, in feed order. Two round trips: the
// queues; then the sessions, read while the snapshot is stored. A queue
// entry must agree with its session; one left behind by a racing start or
// end is not served, and is taken out of the stored snapshot in one more.
func (s *Service) takeSnapshot(ctx context.Context, viewer ID, device string, now int64, followees []ID) (snapshotRef, []liveEntry, error) {
	ref := snapshotRef{taken: now}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	ref.id = string(rnd[:])
	items, err := s.liveQueued(ctx, followees)
	if err != nil {
		return ref, nil, err
	}
	key := s.k.snapshot(viewer, ref.encode())
	ids := make([]ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	cmds := s.liveCmds(make([]rueidis.Completed, 0, len(items)+3), ids)
	// A sentinel (id 0, lowest score) keeps an empty snapshot's key alive, so
	// its expiry is always noticed.
	add := s.c.B().Zadd().Key(key).ScoreMember().ScoreMember(math.Inf(-1), member(0))
	for _, it := range items {
		add = add.ScoreMember(float64(it.TS), member(it.ID))
	}
	ttl := s.o.SnapshotTTL.Milliseconds()
	cmds = append(cmds, add.Build(), s.c.B().Pexpire().Key(key).Milliseconds(ttl).Build(),
		snapSwap.cmd(s.c.B(), []string{s.k.liveDevices(viewer), key}, []string{
			s.k.snapshot(viewer, ""), device, ref.encode(), scoreArg(ref.taken), strconv.FormatInt(ttl, 10), itoa(s.o.MaxDevices)}))
	rs := s.doMulti(ctx, cmds...)
	if err := firstErr(rs); err != nil {
		return ref, nil, fmt.Errorf("store live snapshot: %w", err)
	}
	ls, err := parseLives(ids, rs)
	if err != nil {
		return ref, nil, err
	}
	var out []liveEntry
	var stale []string
	for i, it := range items {
		l := ls[i]
		if l == nil || l.EndedAt != nil || queueScore(l) != it.TS {
			stale = append(stale, member(it.ID))
			continue
		}
		out = append(out, liveEntry{it: it, state: l.State(), l: l})
	}
	if len(stale) > 0 {
		if err := s.do(ctx, s.c.B().Zrem().Key(key).Member(stale...).Build()).Error(); err != nil {
			return ref, nil, fmt.Errorf("store live snapshot: drop stale entries: %w", err)
		}
	}
	slices.SortFunc(out, func(a, b liveEntry) int {
		if a.it.Before(b.it) {
			return -1
		}
		return 1
	})
	return ref, out, nil
}

var errSnapshotExpired = apierr.Errorf(apierr.CursorExpired, "the live feed snapshot behind this cursor has expired or was replaced by a newer first page on this device; request the first page again")

// snapshotItems reads up to need entries of the snapshot key after pos, or
// CURSOR_EXPIRED when the snapshot is gone (expired, or replaced by a newer
// one of its device).
func (s *Service) snapshotItems(ctx context.Context, key string, pos *Item, need int) ([]Item, error) {
	rs := s.doMulti(ctx, s.c.B().Exists().Key(key).Build(), s.seekCmd(older, source{key: key}, pos, need))
	if err := firstErr(rs); err != nil {
		return nil, err
	}
	if n, _ := rs[0].AsInt64(); n == 0 {
		return nil, errSnapshotExpired
	}
	items, _, err := parseSeek(rs[1])
	if err != nil {
		return nil, err
	}
	return dropSentinel(items), nil
}

// snapshotEntries reads the sessions of a snapshot's items. The edge shows
// the state the session had in the snapshot (its score's sign), the node
// its current state.
func (s *Service) snapshotEntries(ctx context.Context, items []Item) ([]liveEntry, error) {
	ids := make([]ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	ls, err := s.LiveSessions(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []liveEntry
	for i, l := range ls {
		state := StatePreview
		if items[i].TS > 0 {
			state = StateLive
		}
		if l != nil {
			out = append(out, liveEntry{it: items[i], state: state, l: l})
		}
	}
	return out, nil
}

// visibleReplays keeps ended sessions of anchors the viewer follows that
// are not in the stored snapshot (empty: not checked here): one that ended
// in the very millisecond the snapshot was taken may be in both, and is
// shown once, from the snapshot.
func (s *Service) visibleReplays(snapshot string) loader[LiveSession] {
	return func(ctx context.Context, v *view, items []Item) ([]*LiveSession, error) {
		ids := make([]ID, len(items))
		for i, it := range items {
			ids[i] = it.ID
		}
		cmds := s.liveCmds(append([]rueidis.Completed(nil), v.extra...), ids)
		check := snapshot != "" && len(ids) > 0
		if check {
			cmds = append(cmds, s.c.B().Zmscore().Key(snapshot).Member(members(ids)...).Build())
		}
		rs := s.doMulti(ctx, cmds...)
		if err := firstErr(rs); err != nil {
			return nil, err
		}
		rs = rs[len(v.extra):]
		v.extra = nil
		var inSnapshot []rueidis.RedisMessage
		if check {
			inSnapshot, _ = rs[len(ids)].ToArray()
		}
		ls, err := parseLives(ids, rs)
		if err != nil {
			return nil, err
		}
		for i, l := range ls {
			visible := l != nil && !(check && !inSnapshot[i].IsNil()) &&
				l.StartedAt != nil && l.EndedAt != nil && l.EndedAt.UnixMilli() == items[i].TS &&
				l.Anchor != v.viewer && !v.unfollowed[l.Anchor]
			if !visible {
				ls[i] = nil
			}
		}
		return ls, nil
	}
}

func (s *Service) livePage(viewer ID, ref snapshotRef, n int, found []liveEntry, scanned *Item, more bool) *LivePage {
	sealer, session := s.cursors(), ref.encode() // once a page
	seal := func(e liveEntry) string {
		state := StateTimeline
		if e.state != StateReplay {
			state = StateSnapshot
		}
		return sealer.Seal(Cursor{Session: session, State: state, LastID: e.it.ID, TS: e.it.TS, Viewer: viewer})
	}
	shown := found[:min(n, len(found))]
	pg := &LivePage{Edges: make([]LiveEdge, len(shown)), HasNext: more}
	for i, e := range shown {
		pg.Edges[i] = LiveEdge{Session: e.l, State: e.state, Cursor: seal(e)}
	}
	if len(shown) > 0 {
		pg.StartCursor, pg.EndCursor = pg.Edges[0].Cursor, pg.Edges[len(shown)-1].Cursor
	}
	// Past everything scanned, when filtering left the page short.
	if len(found) <= n && scanned != nil {
		pg.EndCursor = seal(liveEntry{it: *scanned, state: StateReplay})
	}
	return pg
}
