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

func decodeSnapshotRef(s string) (snapshotRef, bool) {
	if len(s) != 16 {
		return snapshotRef{}, false
	}
	return snapshotRef{id: s[:8], taken: int64(binary.BigEndian.Uint64([]byte(s[8:])))}, true
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

// builtSnapshot is what one build of a snapshot yields.
type builtSnapshot struct {
	ref     snapshotRef
	entries []LiveEntry
}

// snapshotRead is a stored snapshot and its first entries.
type snapshotRead struct {
	ref   snapshotRef
	items []store.Item
}

// recentDevice finds device ARGV[1]'s snapshot in viewer's index of
// devices KEYS[1] and, when it was taken after ARGV[2] (ms) and still
// exists, replies {ref, its first ARGV[4] entries, flat member, score}; else
// {}. ARGV[3] is the prefix of the viewer's snapshot keys (same hash tag),
// so the lookup and the read are one step.
var recentDevice = store.NewScript(true, `
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
func (s *Service) recentSnapshot(ctx context.Context, viewer store.ID, device string, since int64, need int) (*snapshotRead, error) {
	arr, err := s.Do(ctx, recentDevice.Cmd(s.Redis.B(), []string{s.Keys.LiveDevices(viewer)},
		[]string{device, store.ScoreArg(since), s.Keys.Snapshot(viewer, ""), store.Itoa(need)})).ToArray()
	if err != nil || len(arr) < 2 {
		return nil, err
	}
	raw, _ := arr[0].ToString()
	ref, ok := decodeSnapshotRef(raw)
	if !ok {
		return nil, fmt.Errorf("device snapshot: unreadable ref %q", raw)
	}
	items, err := core.EntriesOf(arr[1])
	if err != nil {
		return nil, fmt.Errorf("device snapshot: %w", err)
	}
	return &snapshotRead{ref: ref, items: dropSentinel(items)}, nil
}

// dropSentinel removes an empty snapshot's sentinel (id 0) from its entries.
func dropSentinel(items []store.Item) []store.Item {
	return slices.DeleteFunc(items, func(it store.Item) bool { return it.ID == 0 })
}

// takeSnapshot stores the LIVE and PREVIEW sessions of followees under a
// fresh id as device's snapshot of viewer, replacing the one it had, and
// returns it with all its entries, in feed order (stale previews last of
// the previews: filedScore). Two round trips: the
// queues; then the sessions, read while the snapshot is stored. A queue
// entry must agree with its session; one left behind by a racing start or
// end is not served, and is taken out of the stored snapshot in one more.
func (s *Service) takeSnapshot(ctx context.Context, viewer store.ID, device string, now int64, followees []store.ID) (snapshotRef, []LiveEntry, error) {
	ref := snapshotRef{taken: now}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	ref.id = string(rnd[:])
	items, err := s.liveQueued(ctx, followees)
	if err != nil {
		return ref, nil, err
	}
	key := s.Keys.Snapshot(viewer, ref.encode())
	ids := make([]store.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	cmds := s.liveCmds(make([]rueidis.Completed, 0, len(items)+3), ids)
	// A sentinel (id 0, lowest score) keeps an empty snapshot's key alive, so
	// its expiry is always noticed.
	add := s.Redis.B().Zadd().Key(key).ScoreMember().ScoreMember(math.Inf(-1), store.Member(0))
	for _, it := range items {
		add = add.ScoreMember(float64(s.filedScore(it.TS, ref.taken)), store.Member(it.ID))
	}
	ttl := s.Opts.SnapshotTTL.Milliseconds()
	cmds = append(cmds, add.Build(), s.Redis.B().Pexpire().Key(key).Milliseconds(ttl).Build(),
		snapSwap.Cmd(s.Redis.B(), []string{s.Keys.LiveDevices(viewer), key}, []string{
			s.Keys.Snapshot(viewer, ""), device, ref.encode(), store.ScoreArg(ref.taken), strconv.FormatInt(ttl, 10), store.Itoa(s.Opts.MaxDevices)}))
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs); err != nil {
		return ref, nil, fmt.Errorf("store live snapshot: %w", err)
	}
	ls, err := parseLives(ids, rs)
	if err != nil {
		return ref, nil, err
	}
	var out []LiveEntry
	var stale []string
	for i, it := range items {
		l := ls[i]
		// A suspended anchor's session is neither served nor kept.
		if l == nil || l.EndedAt != nil || QueueScore(l) != it.TS || l.AnchorSuspended {
			stale = append(stale, store.Member(it.ID))
			continue
		}
		out = append(out, LiveEntry{It: store.Item{TS: s.filedScore(it.TS, ref.taken), ID: it.ID}, State: l.State(), l: l})
	}
	if len(stale) > 0 {
		if err := s.Do(ctx, s.Redis.B().Zrem().Key(key).Member(stale...).Build()).Error(); err != nil {
			return ref, nil, fmt.Errorf("store live snapshot: drop stale entries: %w", err)
		}
	}
	slices.SortFunc(out, func(a, b LiveEntry) int {
		if a.It.Before(b.It) {
			return -1
		}
		return 1
	})
	return ref, out, nil
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

// snapshotItems reads up to need entries of the snapshot key after pos, or
// CURSOR_EXPIRED when the snapshot is gone (expired, or replaced by a newer
// one of its device).
func (s *Service) snapshotItems(ctx context.Context, key string, pos *store.Item, need int) ([]store.Item, error) {
	rs := s.DoMulti(ctx, s.Redis.B().Exists().Key(key).Build(), s.SeekCmd(core.Older, timeline.Source{Key: key}, pos, need))
	if err := store.FirstErr(rs); err != nil {
		return nil, err
	}
	if n, _ := rs[0].AsInt64(); n == 0 {
		return nil, errSnapshotExpired
	}
	items, _, err := core.ParseSeek(rs[1])
	if err != nil {
		return nil, err
	}
	return dropSentinel(items), nil
}

// snapshotEntries reads the sessions of a snapshot's items, leaving out
// those of anchors v skips (hidden from the viewer since the snapshot was
// taken; the clean-up takes them out of it), of anchors suspended, and
// those whose titles v's keyword filters match (kept in it: a filter
// removed shows them again). The edge shows the state the
// session had in the snapshot (its score's sign), the node its current
// state.
func (s *Service) snapshotEntries(ctx context.Context, v *timeline.View, items []store.Item) ([]LiveEntry, error) {
	ids := make([]store.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	ls, err := s.LiveSessions(ctx, ids)
	if err != nil {
		return nil, err
	}
	var out []LiveEntry
	for i, l := range ls {
		state := core.StatePreview
		if items[i].TS > 0 {
			state = core.StateLive
		}
		if l != nil && !v.Skip[l.Anchor] && !l.AnchorSuspended && !v.Filtered(l.Title) {
			out = append(out, LiveEntry{It: items[i], State: state, l: l})
		}
	}
	return out, nil
}
