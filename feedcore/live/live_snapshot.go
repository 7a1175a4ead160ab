package live

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/roundtrip"
)

// snapshotRef is what a live cursor's session field carries: the
// snapshot's key suffix and the time it was taken.
type snapshotRef struct {
	id    string // 8 random bytes
	taken int64  // ms
}

func (r snapshotRef) encode() string {
	return r.id + string(binary.BigEndian.AppendUint64(nil, uint64(r.taken)))
}

// at is the session of a cursor at the snapshot's entry i: the ref and
// the entry's place, so the next page reads the records after it.
func (r snapshotRef) at(i int) string {
	return r.encode() + string(binary.BigEndian.AppendUint32(nil, uint32(i)))
}

// decodeSnapshotRef reads a live cursor's session: the snapshot's ref and,
// for a cursor at one of its entries, the entry's place (else -1).
func decodeSnapshotRef(s string) (snapshotRef, int, bool) {
	if len(s) != 16 && len(s) != 20 {
		return snapshotRef{}, -1, false
	}
	ref, at := snapshotRef{id: s[:8], taken: int64(binary.BigEndian.Uint64([]byte(s[8:16])))}, -1
	if len(s) == 20 {
		at = int(binary.BigEndian.Uint32([]byte(s[16:])))
	}
	return ref, at, true
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
var snapSwap = store.NewScript(false, `
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

// builtSnapshot is what one build of a snapshot yields: its entries in
// feed order, and the sessions of the first of them, read with the build
// (heads[i] is items[i]'s).
type builtSnapshot struct {
	ref   snapshotRef
	items []store.Item
	heads []*core.LiveSession
}

// snapshotRead is a stored snapshot and its first entries (cleared ones
// included: id 0).
type snapshotRead struct {
	ref   snapshotRef
	items []store.Item
}

// recentDevice finds device ARGV[1]'s snapshot in viewer's index of
// devices KEYS[1] and, when it was taken after ARGV[2] (ms) and still
// exists, replies {ref, its bytes 0 to ARGV[4]: its first records}; else
// {}. ARGV[3] is the prefix of the viewer's snapshot keys (same hash tag),
// so the lookup and the read are one step.
var recentDevice = store.NewScript(true, `
for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
  if string.sub(m, 17) == ARGV[1] then
    local ref = string.sub(m, 1, 16)
    local key = ARGV[3] .. ref
    if tonumber(redis.call('ZSCORE', KEYS[1], m)) > tonumber(ARGV[2]) and redis.call('EXISTS', key) == 1 then
      return {ref, redis.call('GETRANGE', key, 0, tonumber(ARGV[4]))}
    end
    return {}
  end
end
return {}
`)

// recentSnapshot returns device's snapshot with its first need entries
// when it was taken after since (ms), else nil.
func (s *Service) recentSnapshot(ctx context.Context, viewer store.ID, device string, since int64, need int) (*snapshotRead, error) {
	arr, err := s.Do(ctx, recentDevice.Cmd(s.Redis.B(), []string{s.Keys.LiveDevices(viewer)},
		[]string{device, store.ScoreArg(since), s.Keys.Snapshot(viewer, ""), store.Itoa(need*core.SnapshotRecordLen - 1)})).ToArray()
	if err != nil || len(arr) < 2 {
		return nil, err
	}
	raw, _ := arr[0].ToString()
	ref, _, ok := decodeSnapshotRef(raw)
	if !ok || len(raw) != 16 {
		return nil, fmt.Errorf("device snapshot: unreadable ref %q", raw)
	}
	raw, _ = arr[1].ToString()
	items, err := core.ParseSnapshot(raw)
	if err != nil {
		return nil, fmt.Errorf("device snapshot: %w", err)
	}
	return &snapshotRead{ref: ref, items: items}, nil
}

// takeSnapshot stores the queued (LIVE and PREVIEW) sessions of followees
// under a fresh id as device's snapshot of viewer, replacing the one it
// had, and returns its entries in feed order (stale previews last of the
// previews: filedScore) with the sessions of the first head of them. Two
// round trips: the queues; then the first sessions, read while the
// snapshot is stored.
//
// Only the sessions a page shows are read, and judged as every page after
// a cursor judges them (snapshotEntries): the snapshot is the queues as
// they were, and a session found changed since (started, ended, its anchor
// hidden or suspended) is shown or left out by the same rule on every
// page, so the first page costs what the page shows, not what the viewer's
// anchors have queued.
//
// alongside, when not nil, runs at the same time as the second round
// trip, given the entries: what the page needs besides them is read
// while they are stored.
func (s *Service) takeSnapshot(ctx context.Context, viewer store.ID, device string, now int64, followees []store.ID, head int, alongside func(context.Context, []store.Item) error) (builtSnapshot, error) {
	b := builtSnapshot{ref: snapshotRef{taken: now}}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	b.ref.id = string(rnd[:])
	items, err := s.liveQueued(ctx, followees)
	if err != nil {
		return b, err
	}
	for i := range items {
		items[i].TS = s.filedScore(items[i].TS, now)
	}
	slices.SortFunc(items, func(a, b store.Item) int {
		if a.Before(b) {
			return -1
		}
		return 1
	})
	b.items = items
	ids := make([]store.ID, min(head, len(items)))
	for i := range ids {
		ids[i] = items[i].ID
	}
	key := s.Keys.Snapshot(viewer, b.ref.encode())
	cmds := s.liveCmds(make([]rueidis.Completed, 0, len(ids)+2), ids)
	// An empty snapshot is an empty string: its key exists, so its expiry
	// is noticed as any other's.
	blob := core.AppendSnapshot(make([]byte, 0, len(items)*core.SnapshotRecordLen), items)
	ttl := s.Opts.SnapshotTTL.Milliseconds()
	cmds = append(cmds, s.Redis.B().Set().Key(key).Value(rueidis.BinaryString(blob)).PxMilliseconds(ttl).Build(),
		snapSwap.Cmd(s.Redis.B(), []string{s.Keys.LiveDevices(viewer), key}, []string{
			s.Keys.Snapshot(viewer, ""), device, b.ref.encode(), store.ScoreArg(b.ref.taken), strconv.FormatInt(ttl, 10), store.Itoa(s.Opts.MaxDevices)}))
	var rs []rueidis.RedisResult
	err = roundtrip.Parallel(ctx,
		func(ctx context.Context) error {
			rs = s.DoMulti(ctx, cmds...)
			if err := store.FirstErr(rs); err != nil {
				return fmt.Errorf("store live snapshot: %w", err)
			}
			return nil
		},
		func(ctx context.Context) error {
			if alongside == nil {
				return nil
			}
			return alongside(ctx, items)
		})
	if err != nil {
		return b, err
	}
	b.heads, err = parseLives(ids, rs)
	return b, err
}

// headEntries is a first page's share of the new snapshot b: its first
// n+1 entries v shows, judged from the sessions read with the build, then,
// when those fall short, from more read after them, within the read
// bound. stopped is the last entry read when the bound ran out short of
// n+1 (nil otherwise): the page ends there and goes on in the snapshot.
func (s *Service) headEntries(ctx context.Context, v *timeline.View, b builtSnapshot, n int) (snap []LiveEntry, stopped *LiveEntry, err error) {
	at, heads := 0, b.heads
	for round := 1; ; round++ {
		snap = appendVisible(snap, v, b.items[at:], heads, at)
		at += len(heads)
		if len(snap) > n || at == len(b.items) {
			return snap, nil, nil
		}
		if round == timeline.MaxRounds {
			return snap, snapshotEntry(b.items, 0, at-1), nil
		}
		ids := make([]store.ID, min(n+1, len(b.items)-at))
		for i := range ids {
			ids[i] = b.items[at+i].ID
		}
		if heads, err = s.LiveSessions(ctx, ids); err != nil {
			return nil, nil, err
		}
	}
}

// snapshotEntry is items[i], of a snapshot's entries from its entry at,
// as the place a page that read no further ends at: its cursor goes on in
// the snapshot.
func snapshotEntry(items []store.Item, at, i int) *LiveEntry {
	return &LiveEntry{It: items[i], State: core.StatePreview, At: at + i}
}

// staleBase is taken off a stale preview's scheduled start to file it in
// a snapshot: it puts the score below every timely preview's
// (-scheduledStart, at least -2.6e14 for any start RFC 3339 can spell,
// up to the year 9999), keeps it negative (a preview, as snapshotEntries
// reads the sign) and above the sentinel's -inf, and exact in a float64
// (well within ±2^53).
const staleBase = 1_000_000_000_000_000

// filedScore is the score a queue entry (QueueScore: +startedAt LIVE,
// -scheduledStart PREVIEW) is filed at in a snapshot taken at now (ms).
// LIVE and timely PREVIEW keep it. A stale PREVIEW, whose scheduled start
// is more than Options.PreviewGrace before now, gets scheduledStart -
// staleBase: after every timely preview and before the replays, the most
// recently due first, the longest overdue last, ties by id as ever. It is
// decided once, when the snapshot is taken, from what the queue read
// already holds: no extra read, and a preview that turns stale while its
// snapshot is paged neither jumps nor repeats.
func (s *Service) filedScore(queued, now int64) int64 {
	if queued > 0 || now+queued <= s.Opts.PreviewGrace.Milliseconds() {
		return queued
	}
	return -queued - staleBase
}

var errSnapshotExpired = apierr.Errorf(apierr.CursorExpired, "the live feed snapshot behind this cursor has expired or was replaced by a newer first page on this device; request the first page again")

// snapshotItems reads up to need entries of the snapshot key from its
// entry at on, or CURSOR_EXPIRED when the snapshot is gone (expired, or
// replaced by a newer one of its device). Cleared entries (id 0) are
// among them, so each keeps its place.
func (s *Service) snapshotItems(ctx context.Context, key string, at, need int) ([]store.Item, error) {
	from := int64(at * core.SnapshotRecordLen)
	rs := s.DoMulti(ctx, s.Redis.B().Exists().Key(key).Build(),
		s.Redis.B().Getrange().Key(key).Start(from).End(from+int64(need*core.SnapshotRecordLen)-1).Build())
	if err := store.FirstErr(rs); err != nil {
		return nil, err
	}
	if n, _ := rs[0].AsInt64(); n == 0 {
		return nil, errSnapshotExpired
	}
	raw, err := rs[1].ToString()
	if err != nil {
		return nil, fmt.Errorf("read live snapshot: %w", err)
	}
	return core.ParseSnapshot(raw)
}

// snapshotEntries reads the sessions of a snapshot's items, which begin
// at its entry at, and keeps those v shows (visibleEntries).
func (s *Service) snapshotEntries(ctx context.Context, v *timeline.View, items []store.Item, at int) ([]LiveEntry, error) {
	ids := make([]store.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	ls, err := s.LiveSessions(ctx, ids)
	if err != nil {
		return nil, err
	}
	return visibleEntries(v, items, ls, at), nil
}

// visibleEntries is the rule every page of a snapshot applies to its
// entries items, which begin at its entry at and whose sessions are ls
// (ls[i] items[i]'s, nil where gone or cleared; items past ls are not
// judged): it leaves out those of anchors v skips (hidden from the viewer
// since the snapshot was taken; the clean-up clears them from it), of
// anchors suspended, and those whose titles v's keyword filters match
// (kept in it: a filter removed shows them again). The edge shows the
// state the session had in the snapshot (its score's sign), the node its
// current state.
func visibleEntries(v *timeline.View, items []store.Item, ls []*core.LiveSession, at int) []LiveEntry {
	return appendVisible(nil, v, items, ls, at)
}

// appendVisible is visibleEntries appending to out.
func appendVisible(out []LiveEntry, v *timeline.View, items []store.Item, ls []*core.LiveSession, at int) []LiveEntry {
	out = slices.Grow(out, len(ls))
	for i, l := range ls {
		state := core.StatePreview
		if items[i].TS > 0 {
			state = core.StateLive
		}
		if l != nil && items[i].ID != 0 && shows(v, l) {
			out = append(out, LiveEntry{It: items[i], State: state, l: l, At: at + i})
		}
	}
	return out
}

// shows is the rule a snapshot's pages apply to a filed session l: not
// of an anchor v skips or suspended, nor titled as v's keyword filters
// match.
func shows(v *timeline.View, l *core.LiveSession) bool {
	return !v.Skip[l.Anchor] && !l.AnchorSuspended && !v.Filtered(l.Title)
}

// ShownSessions returns, in place, the sessions of ls viewer's live feed
// would show now, nil for the others: those of anchors it follows (or
// whose follow has yet to settle) less those hidden from it, by the rule
// every snapshot page applies (shows). For a realtime subscription,
// which hears of a session's change and must tell only those its live
// feed would show it to. One round trip (the viewer's view).
func (s *Service) ShownSessions(ctx context.Context, viewer store.ID, ls []*core.LiveSession) (_ []*core.LiveSession, err error) {
	defer store.Wrap(&err, "sessions shown to user %d", viewer)
	top := &store.Item{TS: s.NowMS(), ID: math.MaxUint64}
	v, err := s.LoadView(ctx, s.ReplaysTL().WithFollowees(), viewer, core.Older, top, 1)
	if err != nil {
		return nil, err
	}
	followed := followedAnchors(v)
	for i, l := range ls {
		if l != nil && (l.Anchor == viewer || !slices.Contains(followed, l.Anchor) || !shows(v, l)) {
			ls[i] = nil
		}
	}
	return ls, nil
}
