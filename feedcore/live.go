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
	args := []string{"alloc", scoreArg(s.nowMS()), "", "0", "k", jLive, "a", FormatID(anchor)}
	arr, err := s.commit(ctx, logScript, keys, args, logScript.cmd(s.c.B(), keys, args)).ToArray()
	if err != nil || len(arr) != 4 {
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
		return errorf(CodeBadInput, "live session id and anchor must be positive numbers")
	}
	if l.ScheduledStartAt == nil && l.StartedAt == nil {
		return errorf(CodeBadInput, "a live session needs scheduledStartAt or startedAt")
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
	return firstErr(s.doMulti(ctx,
		s.c.B().Zadd().Key(s.k.liveQueue(anchor)).ScoreMember().ScoreMember(float64(it.TS), member(it.ID)).Build(),
		s.c.B().Sadd().Key(s.k.liveAnchors()).Member(member(anchor)).Build()))
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
		var refused *Error
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
		return false, errorf(CodeNotFound, "no live session with id %d", id)
	case "forbidden":
		return false, errorf(CodeForbidden, "only the session's anchor may change it")
	case "ended":
		return false, errorf(CodeBadInput, "the session has ended")
	case "live":
		return false, errorf(CodeBadInput, "the session is live already")
	}
	return res != "ok:", nil
}

// dequeue removes a session from its anchor's queue, and the anchor from
// the index of anchors with sessions when its queue empties. A schedule
// racing with this adds to the queue before the index; the recheck after
// removing from the index puts the anchor back if that happened.
func (s *Service) dequeue(ctx context.Context, anchor, id ID) error {
	rs := s.doMulti(ctx,
		s.c.B().Zrem().Key(s.k.liveQueue(anchor)).Member(member(id)).Build(),
		s.c.B().Zcard().Key(s.k.liveQueue(anchor)).Build())
	if err := firstErr(rs); err != nil {
		return err
	}
	if n, _ := rs[1].AsInt64(); n > 0 {
		return nil
	}
	if err := s.do(ctx, s.c.B().Srem().Key(s.k.liveAnchors()).Member(member(anchor)).Build()).Error(); err != nil {
		return err
	}
	n, err := s.do(ctx, s.c.B().Zcard().Key(s.k.liveQueue(anchor)).Build()).AsInt64()
	if err != nil || n == 0 {
		return err
	}
	return s.do(ctx, s.c.B().Sadd().Key(s.k.liveAnchors()).Member(member(anchor)).Build()).Error()
}

// LiveSessions returns sessions by id in order, nil where none exists. One
// pipelined round trip.
func (s *Service) LiveSessions(ctx context.Context, ids []ID) (_ []*LiveSession, err error) {
	defer wrap(&err, "read live sessions")
	cmds := make([]rueidis.Completed, len(ids))
	for i, id := range ids {
		cmds[i] = s.c.B().Hgetall().Key(s.k.live(id)).Build()
	}
	out := make([]*LiveSession, len(ids))
	for i, r := range s.doMulti(ctx, cmds...) {
		m, err := r.AsStrMap()
		if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			out[i] = parseLive(ids[i], m)
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
		return nil, errorf(CodeNotFound, "no live session with id %d", id)
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
func (s *Service) LiveFeed(ctx context.Context, req LiveRequest) (_ *LivePage, err error) {
	defer wrap(&err, "live feed of user %d", req.Viewer)
	if req.First < 0 || req.First > maxPageSize {
		return nil, errorf(CodeBadInput, "first must be between 1 and 100")
	}
	n := orDefault(req.First)
	var (
		ref   snapshotRef
		found []liveEntry
		pos   *Item // replay position, once the snapshot is used up
	)
	if req.After == "" {
		device, derr := validDevice(req.Device)
		if derr != nil {
			return nil, derr
		}
		if ref, found, err = s.firstLivePage(ctx, req.Viewer, device, n+1); err != nil {
			return nil, err
		}
	} else if ref, found, pos, err = s.fromSnapshot(ctx, req, n+1); err != nil {
		return nil, err
	}
	if pos == nil {
		pos = &Item{TS: ref.taken, ID: math.MaxUint64}
	}
	more := len(found) > n
	var scanned *Item
	if !more {
		replays, sc, m, err := s.replays(ctx, req.Viewer, ref, pos, n+1-len(found))
		if err != nil {
			return nil, err
		}
		found, scanned, more = append(found, replays...), sc, m || len(found)+len(replays) > n
	}
	return s.livePage(req.Viewer, ref, n, found, scanned, more), nil
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
		return "", errorf(CodeBadInput, "a device id is 1 to %d letters, digits, '.', '_', ':' or '-'", maxDeviceLen)
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

// firstLivePage returns the snapshot of viewer's device for a first page,
// with its first need entries. The device's snapshot is reused when taken
// less than Options.SnapshotReuse ago; otherwise a new one replaces it.
// Concurrent first pages of one device in this process (aliases of one
// operation, double taps) share one build.
func (s *Service) firstLivePage(ctx context.Context, viewer ID, device string, need int) (snapshotRef, []liveEntry, error) {
	if s.o.SnapshotReuse > 0 {
		ref, ok, err := s.deviceSnapshot(ctx, viewer, device)
		if err != nil {
			return ref, nil, err
		}
		if ok && s.nowMS()-ref.taken < s.o.SnapshotReuse.Milliseconds() {
			found, err := s.readSnapshot(ctx, viewer, ref, nil, need)
			if err == nil {
				return ref, found, nil
			}
			if CodeOf(err) != CodeCursorExpired {
				return ref, nil, err
			}
		}
	}
	key := FormatID(viewer) + "/" + device
	v, err, _ := s.snapshots.Do(key, func() (any, error) {
		ref, entries, err := s.takeSnapshot(ctx, viewer, device)
		return builtSnapshot{ref, entries}, err
	})
	if err != nil {
		return snapshotRef{}, nil, err
	}
	b := v.(builtSnapshot)
	return b.ref, b.entries[:min(need, len(b.entries))], nil
}

// deviceSnapshot finds the snapshot device of viewer holds, if any.
func (s *Service) deviceSnapshot(ctx context.Context, viewer ID, device string) (snapshotRef, bool, error) {
	ms, err := s.do(ctx, s.c.B().Zrange().Key(s.k.liveDevices(viewer)).Min("0").Max("-1").Build()).AsStrSlice()
	if err != nil {
		return snapshotRef{}, false, err
	}
	for _, m := range ms {
		if len(m) > 16 && m[16:] == device {
			ref, ok := decodeSnapshotRef(m[:16])
			return ref, ok, nil
		}
	}
	return snapshotRef{}, false, nil
}

// takeSnapshot stores the LIVE and PREVIEW sessions of the anchors viewer
// follows under a fresh id as device's snapshot, replacing the one it had,
// and returns it with all its entries. Its cost follows the followed
// anchors that have sessions: one membership check over the followees,
// then their queues and sessions, pipelined.
func (s *Service) takeSnapshot(ctx context.Context, viewer ID, device string) (snapshotRef, []liveEntry, error) {
	ref := snapshotRef{taken: s.nowMS()}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	ref.id = string(rnd[:])
	entries, err := s.liveNow(ctx, viewer)
	if err != nil {
		return ref, nil, err
	}
	key := s.k.snapshot(viewer, ref.encode())
	// A sentinel (id 0, lowest score) keeps an empty snapshot's key alive, so
	// its expiry is always noticed.
	add := s.c.B().Zadd().Key(key).ScoreMember().ScoreMember(math.Inf(-1), member(0))
	for _, e := range entries {
		add = add.ScoreMember(float64(e.it.TS), member(e.it.ID))
	}
	ttl := s.o.SnapshotTTL.Milliseconds()
	if err := firstErr(s.doMulti(ctx, add.Build(),
		s.c.B().Pexpire().Key(key).Milliseconds(ttl).Build(),
		snapSwap.cmd(s.c.B(), []string{s.k.liveDevices(viewer), key}, []string{
			s.k.snapshot(viewer, ""), device, ref.encode(), scoreArg(ref.taken), strconv.FormatInt(ttl, 10), itoa(s.o.MaxDevices)}))); err != nil {
		return ref, nil, err
	}
	return ref, entries, nil
}

// liveNow lists the LIVE and PREVIEW sessions of the anchors viewer follows
// in feed order, checked against the sessions themselves.
func (s *Service) liveNow(ctx context.Context, viewer ID) ([]liveEntry, error) {
	fg, err := s.followingIDs(ctx, viewer)
	if err != nil || len(fg) == 0 {
		return nil, err
	}
	flags, err := s.do(ctx, s.c.B().Smismember().Key(s.k.liveAnchors()).Member(members(fg)...).Build()).ToArray()
	if err != nil {
		return nil, err
	}
	var queues []rueidis.Completed
	for i, f := range flags {
		if on, _ := f.AsBool(); on {
			queues = append(queues, s.newestCmd(s.k.liveQueue(fg[i]), math.MaxInt32))
		}
	}
	var items []Item
	for _, r := range s.doMulti(ctx, queues...) {
		q, err := parseEntries(r)
		if err != nil {
			return nil, err
		}
		items = append(items, q...)
	}
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
		// A queue entry must agree with its session; one left behind by a
		// racing start or end is skipped.
		if l != nil && l.EndedAt == nil && queueScore(l) == items[i].TS {
			out = append(out, liveEntry{it: items[i], state: l.State(), l: l})
		}
	}
	slices.SortFunc(out, func(a, b liveEntry) int {
		if a.it.Before(b.it) {
			return -1
		}
		return 1
	})
	return out, nil
}

// fromSnapshot reads the page after a cursor: from the snapshot while it
// lasts (state 0); pos is where the replays continue (nil: from the top).
func (s *Service) fromSnapshot(ctx context.Context, req LiveRequest, need int) (snapshotRef, []liveEntry, *Item, error) {
	c, err := s.openCursor(ctx, req.After, req.Viewer)
	if err != nil {
		return snapshotRef{}, nil, nil, err
	}
	ref, ok := decodeSnapshotRef(c.Session)
	if !ok {
		return ref, nil, nil, errorf(CodeInvalidCursor, "this cursor belongs to another feed; request the first page without a cursor")
	}
	if c.State == StateTimeline {
		n, err := s.do(ctx, s.c.B().Exists().Key(s.k.snapshot(req.Viewer, ref.encode())).Build()).AsInt64()
		if err != nil {
			return ref, nil, nil, err
		}
		if n == 0 {
			return ref, nil, nil, errSnapshotExpired
		}
		return ref, nil, &Item{TS: c.TS, ID: c.LastID}, nil
	}
	found, err := s.readSnapshot(ctx, req.Viewer, ref, &Item{TS: c.TS, ID: c.LastID}, need)
	return ref, found, nil, err
}

var errSnapshotExpired = errorf(CodeCursorExpired, "the live feed snapshot behind this cursor has expired or was replaced by a newer first page on this device; request the first page again")

// readSnapshot reads up to need entries of snapshot ref after pos (nil:
// from the top), or CURSOR_EXPIRED when the snapshot is gone (expired, or
// replaced by a newer one of its device).
func (s *Service) readSnapshot(ctx context.Context, viewer ID, ref snapshotRef, pos *Item, need int) ([]liveEntry, error) {
	key := s.k.snapshot(viewer, ref.encode())
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
	items = slices.DeleteFunc(items, func(it Item) bool { return it.ID == 0 })
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
		if l != nil { // the node shows its current state; the edge, the snapshot's
			out = append(out, liveEntry{it: items[i], state: state, l: l})
		}
	}
	return out, nil
}

// replays pages viewer's replay timeline from pos (at most the snapshot
// time, so a session live in the snapshot cannot show again as a replay).
func (s *Service) replays(ctx context.Context, viewer ID, ref snapshotRef, pos *Item, need int) ([]liveEntry, *Item, bool, error) {
	v, err := s.loadView(ctx, s.replaysTL(), viewer, older, pos, need)
	if err != nil {
		return nil, nil, false, err
	}
	found, scanned, more, err := collect(ctx, s, v, older, pos, need, s.visibleReplays(s.k.snapshot(viewer, ref.encode())))
	if err != nil {
		return nil, nil, false, err
	}
	out := make([]liveEntry, len(found))
	for i, e := range found {
		out[i] = liveEntry{it: e.it, state: StateReplay, l: e.val}
	}
	return out, scanned, more, nil
}

// visibleReplays keeps ended sessions of anchors the viewer follows that
// are not in the snapshot: one that ended in the very millisecond the
// snapshot was taken may be in both, and is shown once, from the snapshot.
func (s *Service) visibleReplays(snapshot string) loader[LiveSession] {
	return func(ctx context.Context, v *view, items []Item) ([]*LiveSession, error) {
		ids := make([]ID, len(items))
		cmds := append([]rueidis.Completed(nil), v.extra...)
		for i, it := range items {
			ids[i] = it.ID
			cmds = append(cmds, s.c.B().Hgetall().Key(s.k.live(it.ID)).Build())
		}
		if len(ids) > 0 {
			cmds = append(cmds, s.c.B().Zmscore().Key(snapshot).Member(members(ids)...).Build())
		}
		rs := s.doMulti(ctx, cmds...)
		if err := firstErr(rs); err != nil {
			return nil, err
		}
		rs = rs[len(v.extra):]
		v.extra = nil
		out := make([]*LiveSession, len(ids))
		if len(ids) == 0 {
			return out, nil
		}
		inSnapshot, _ := rs[len(ids)].ToArray()
		for i, id := range ids {
			m, err := rs[i].AsStrMap()
			if err != nil {
				return nil, err
			}
			if len(m) == 0 || !inSnapshot[i].IsNil() {
				continue
			}
			l := parseLive(id, m)
			if l.StartedAt != nil && l.EndedAt != nil && l.EndedAt.UnixMilli() == items[i].TS && v.follows[l.Anchor] {
				out[i] = l
			}
		}
		return out, nil
	}
}

func (s *Service) livePage(viewer ID, ref snapshotRef, n int, found []liveEntry, scanned *Item, more bool) *LivePage {
	seal := func(e liveEntry) string {
		state := StateTimeline
		if e.state != StateReplay {
			state = StateSnapshot
		}
		return s.cursors().Seal(Cursor{Session: ref.encode(), State: state, LastID: e.it.ID, TS: e.it.TS, Viewer: viewer})
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
