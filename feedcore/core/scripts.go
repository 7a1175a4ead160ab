package core

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// Members are 8 raw bytes; Lua's string < follows the server's collation
// locale, so compare bytes explicitly.
const LuaLess = `
local function lt(a, b)
  for i = 1, #a do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return false
end
local function add(out, m, s) out[#out + 1] = m; out[#out + 1] = s end
`

// SeekOlder returns up to ARGV[3] entries after (ARGV[1] ts, ARGV[2] member)
// in feed order, flat as member, score (see luaSeekReturn). An empty member starts at the newest.
// The seek uses values, so a deleted cursor item still positions correctly;
// when the item exists its rank gives the position in O(log n).
var SeekOlder = store.NewScript(true, LuaLess+LuaHorizon+`
local function seek(key, ts, id, n)
  if id == '' then
    return redis.call('ZRANGE', key, '+inf', '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, n, 'WITHSCORES')
  end
  local r = redis.call('ZREVRANK', key, id)
  if r and tonumber(redis.call('ZSCORE', key, id)) == tonumber(ts) then
    return redis.call('ZRANGE', key, r + 1, r + n, 'REV', 'WITHSCORES')
  end
  local out = {}
  local ties = redis.call('ZRANGE', key, ts, ts, 'BYSCORE', 'REV', 'WITHSCORES')
  for i = 1, #ties, 2 do
    if #out >= 2 * n then return out end
    if lt(ties[i], id) then add(out, ties[i], ties[i + 1]) end
  end
  if #out >= 2 * n then return out end
  local rest = redis.call('ZRANGE', key, '(' .. ts, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, n - #out / 2, 'WITHSCORES')
  for i = 1, #rest do out[#out + 1] = rest[i] end
  return out
end
`+luaSeekReturn)

// SeekNewer returns up to ARGV[3] entries newer than (ARGV[1], ARGV[2]),
// closest to the cursor first (so oldest first), flat as member, score (see
// luaSeekReturn).
var SeekNewer = store.NewScript(true, LuaLess+LuaHorizon+`
local function seek(key, ts, id, n)
  local out = {}
  local r = redis.call('ZREVRANK', key, id)
  if r and tonumber(redis.call('ZSCORE', key, id)) == tonumber(ts) then
    if r == 0 then return out end
    local lo = r - n
    if lo < 0 then lo = 0 end
    local got = redis.call('ZRANGE', key, lo, r - 1, 'REV', 'WITHSCORES')
    for i = #got - 1, 1, -2 do add(out, got[i], got[i + 1]) end
    return out
  end
  local ties = redis.call('ZRANGE', key, ts, ts, 'BYSCORE', 'WITHSCORES')
  for i = 1, #ties, 2 do
    if #out >= 2 * n then return out end
    if lt(id, ties[i]) then add(out, ties[i], ties[i + 1]) end
  end
  if #out >= 2 * n then return out end
  local rest = redis.call('ZRANGE', key, '(' .. ts, '+inf', 'BYSCORE', 'LIMIT', 0, n - #out / 2, 'WITHSCORES')
  for i = 1, #rest do out[#out + 1] = rest[i] end
  return out
end
`+luaSeekReturn)

// luaSeekReturn runs seek and replies {entries} or, when KEYS[2] names the
// inbox's reader hash, {entries, horizon}: read in the same atomic step, so
// the entries are complete at or above the horizon returned with them.
const luaSeekReturn = `
local out = seek(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]))
if #KEYS < 2 then return {out} end
return {out, horizon(KEYS[1], KEYS[2], tonumber(ARGV[4]))}
`

// The inbox horizon: an inbox holds every entry pushed to it at or above
// its horizon, so reads pull outboxes only below it. An inbox at or over its
// cap is complete down to its cap-th highest entry (anything trimmed ranked
// below that when trimmed, and pushes only raise it), so plain fan-out
// writes (ZADD, and now and then a trim) keep the horizon without a script.
// What scripts must record, in the reader hash KEYS[2], is a horizon that
// would otherwise be lost: before a removal shrinks an inbox below its cap,
// and the floor of a backfill that copied only part of a source. The stored
// horizon only ever rises; the horizon in force is the higher of the two.
const LuaHorizon = `
local function higher(s1, m1, s2, m2)
  return tonumber(s1) > tonumber(s2) or (tonumber(s1) == tonumber(s2) and lt(m2, m1))
end
local function capEntry(inbox, cap)
  if redis.call('ZCARD', inbox) >= cap then
    local e = redis.call('ZRANGE', inbox, -cap, -cap, 'WITHSCORES')
    return e[2], e[1]
  end
end
local function raise(key, s, m)
  local cur = redis.call('HMGET', key, 'ht', 'hm')
  if not cur[1] or higher(s, m, cur[1], cur[2]) then
    redis.call('HSET', key, 'ht', s, 'hm', m)
  end
end
local function keepHorizon(inbox, reader, cap)
  local s, m = capEntry(inbox, cap)
  if s then raise(reader, s, m) end
end
local function horizon(inbox, reader, cap)
  local cur = redis.call('HMGET', reader, 'ht', 'hm')
  local s, m = capEntry(inbox, cap)
  if cur[1] and (not s or higher(cur[1], cur[2], s, m)) then return {cur[2], cur[1]} end
  if s then return {m, s} end
  return {}
end
`

// InboxAdd adds entries to the inbox KEYS[1], trims it to ARGV[1] entries
// and raises the horizon to ARGV[2], ARGV[3] (score, member; empty for
// none), the floor of a partial backfill. ARGV[6..] are groups: an author,
// how many entries follow, then those entries as score, member pairs; a
// group adds nothing when its author is hidden from the reader (in its
// hidden authors KEYS[3] with an end after ARGV[4] ms), so no backfill,
// upgrade or rebuild brings a hidden author back. Each group is one ZADD
// (in slices of 500 entries, within Lua's unpack limit).
//
// ARGV[5] "1" rebuilds a dropped inbox (a dormant reader's return): the
// horizon is first cleared, and its generation moves on, so a read that
// took the inbox's entries before this write does not trust them with the
// horizon after it (timeline's sameGen).
var InboxAdd = store.NewScript(false, LuaLess+LuaHorizon+`
local cap = tonumber(ARGV[1])
local now = tonumber(ARGV[4])
if ARGV[5] == '1' then
  redis.call('HDEL', KEYS[2], 'ht', 'hm')
  redis.call('HINCRBY', KEYS[2], 'hg', 1)
end
local i = 6
while i <= #ARGV do
  local k = tonumber(ARGV[i + 1])
  local u = redis.call('ZSCORE', KEYS[3], ARGV[i])
  if not u or tonumber(u) <= now then
    for j = i + 2, i + 1 + 2 * k, 1000 do
      redis.call('ZADD', KEYS[1], unpack(ARGV, j, math.min(j + 999, i + 1 + 2 * k)))
    end
  end
  i = i + 2 + 2 * k
end
local n = redis.call('ZCARD', KEYS[1])
if n > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - cap - 1)
  keepHorizon(KEYS[1], KEYS[2], cap)
end
if ARGV[3] ~= '' then raise(KEYS[2], ARGV[2], ARGV[3]) end
return n
`)

// Top is the horizon of a dropped inbox (a dormant reader's): above every
// entry, so a read trusts none of the inbox and pulls every followee's
// outbox.
var Top = store.Item{TS: 1 << 53, ID: math.MaxUint64}

// InboxDrop empties the inbox KEYS[1] of a reader gone dormant and puts
// its horizon (in the hash KEYS[2]) at the top, ARGV[1], ARGV[2], in a new
// generation: from then on reads pull, and pushes that still land there are
// not read.
var InboxDrop = store.NewScript(false, `
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[2], 'ht', ARGV[1], 'hm', ARGV[2])
return redis.call('HINCRBY', KEYS[2], 'hg', 1)
`)

// InboxRemove removes members ARGV[2..] from the inbox KEYS[1], first
// recording its horizon if it is at its cap ARGV[1].
var InboxRemove = store.NewScript(false, LuaLess+LuaHorizon+`
keepHorizon(KEYS[1], KEYS[2], tonumber(ARGV[1]))
return redis.call('ZREM', KEYS[1], unpack(ARGV, 2))
`)

// FollowAdd adds ARGV[1] to the following set KEYS[1] unless it holds it
// already or ARGV[2] others: 1 added, 0 already there, -1 at the limit, -2
// across a block (the follower's blocks KEYS[3] or blocked-by mirror
// KEYS[4] hold the followee). Atomic, so concurrent follows cannot pass the
// limit, nor a block settled in the follower's slot. A new follow also
// drops the followee from the reader's recent unfollows KEYS[2], and is
// timed at ARGV[3] ms in the following times KEYS[5] (one followed before
// times were kept gets its time now). With KEYS[6], the follower's pending
// follows, a new follow is marked pending there at ARGV[3] (a follow that
// answers before its settle: the follower's pages merge the followee's
// outbox until PendingClear).
var FollowAdd = store.NewScript(false, `
if redis.call('ZSCORE', KEYS[3], ARGV[1]) or redis.call('ZSCORE', KEYS[4], ARGV[1]) then return -2 end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[5], 'NX', ARGV[3], ARGV[1])
  return 0
end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return -1 end
redis.call('ZADD', KEYS[1], 0, ARGV[1])
redis.call('ZADD', KEYS[5], ARGV[3], ARGV[1])
redis.call('ZREM', KEYS[2], ARGV[1])
if KEYS[6] then redis.call('ZADD', KEYS[6], ARGV[3], ARGV[1]) end
return 1
`)

// PendingClear drops ARGV[1] from the pending follows KEYS[1] if it was
// marked at or before ARGV[2] ms: the settle of the follow made then (or
// of an earlier one) has run. A mark made since, by a later follow whose
// own settle is still to run, stays.
var PendingClear = store.NewScript(false, `
local at = redis.call('ZSCORE', KEYS[1], ARGV[1])
if at and tonumber(at) <= tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`)

// BigFolloweeAdd adds ARGV[1] to the big-V followees KEYS[2] if the
// following set KEYS[1] holds it: checked in the reader's slot, so a
// promotion racing an unfollow cannot leave a big-V the reader left.
var BigFolloweeAdd = store.NewScript(false, `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return redis.call('SADD', KEYS[2], ARGV[1]) end
return 0
`)

// UnfollowCommit removes ARGV[1] from the following set KEYS[1] and the
// big-V followees KEYS[2], and notes it in the reader's recent unfollows
// KEYS[3] at ARGV[2] ms, forgetting notes before ARGV[3] ms and keeping the
// newest ARGV[4]: reads hide its posts still in the inbox by that note, so
// they need not read the whole following set. One slot, the reader's: the
// unfollow's record of truth and its notes change together.
var UnfollowCommit = store.NewScript(false, `
local gone = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('SREM', KEYS[2], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', '(' .. ARGV[3])
redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -tonumber(ARGV[4]) - 1)
return gone
`)

// ParseSeek reads a seek script's reply: its entries and, when asked for,
// the inbox horizon (nil when the inbox has none).
func ParseSeek(r rueidis.RedisResult) ([]store.Item, *store.Item, error) {
	arr, err := r.ToArray()
	if err != nil || len(arr) == 0 {
		return nil, nil, err
	}
	items, err := EntriesOf(arr[0])
	if err != nil || len(arr) < 2 {
		return items, nil, err
	}
	hz, err := EntriesOf(arr[1])
	if err != nil || len(hz) == 0 {
		return items, nil, err
	}
	return items, &hz[0], nil
}

// ParseEntries reads a member, score reply: flat from scripts and RESP2,
// as pairs from RESP3's WITHSCORES.
func ParseEntries(r rueidis.RedisResult) ([]store.Item, error) {
	return AppendParsedEntries(nil, r)
}

// AppendParsedEntries is ParseEntries appending to dst: a nil reply
// appends nothing.
func AppendParsedEntries(dst []store.Item, r rueidis.RedisResult) ([]store.Item, error) {
	m, err := r.ToMessage()
	if err != nil {
		if rueidis.IsRedisNil(err) {
			return dst, nil
		}
		return dst, err
	}
	return AppendEntries(dst, m)
}

func EntriesOf(m rueidis.RedisMessage) ([]store.Item, error) {
	return AppendEntries(nil, m)
}

// EntryCount is how many entries a sorted set reply r holds (0 for an
// error or a nil reply): what AppendParsedEntries would append.
func EntryCount(r rueidis.RedisResult) int {
	m, err := r.ToMessage()
	if err != nil {
		return 0
	}
	arr, err := m.ToArray()
	if err != nil || len(arr) == 0 || arr[0].IsArray() {
		return len(arr)
	}
	return len(arr) / 2
}

// AppendEntries appends the entries of a sorted set reply m (member,
// score; flat as RESP2 and scripts give them, or in pairs as RESP3's
// WITHSCORES does) to dst.
func AppendEntries(dst []store.Item, m rueidis.RedisMessage) ([]store.Item, error) {
	arr, err := m.ToArray()
	if err != nil {
		return dst, err
	}
	paired := len(arr) > 0 && arr[0].IsArray()
	n := len(arr)
	if !paired {
		n /= 2
	}
	dst = slices.Grow(dst, n)
	for i := range n {
		member, score := pairAt(arr, i, paired)
		if member == nil {
			return dst, fmt.Errorf("want member, score pairs, got %v", arr[i])
		}
		ms, err := member.ToString()
		if err != nil {
			return dst, err
		}
		id, err := store.MemberID(ms)
		if err != nil {
			return dst, err
		}
		ts, err := ScoreOf(*score)
		if err != nil {
			return dst, err
		}
		dst = append(dst, store.Item{TS: ts, ID: id})
	}
	return dst, nil
}

// pairAt is the i-th member and score of a sorted set reply, nil when
// a pair is not one.
func pairAt(arr []rueidis.RedisMessage, i int, paired bool) (member, score *rueidis.RedisMessage) {
	if !paired {
		return &arr[2*i], &arr[2*i+1]
	}
	kv, err := arr[i].ToArray()
	if err != nil || len(kv) != 2 {
		return nil, nil
	}
	return &kv[0], &kv[1]
}

func ScoreOf(m rueidis.RedisMessage) (int64, error) {
	if f, err := m.AsFloat64(); err == nil {
		return int64(f), nil
	}
	s, err := m.ToString()
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(s, 64)
	return int64(f), err
}

// ScoreOrZero reads a ZSCORE reply as ms, 0 when the member is absent.
func ScoreOrZero(r rueidis.RedisResult) (int64, error) {
	f, err := r.AsFloat64()
	if rueidis.IsRedisNil(err) {
		return 0, nil
	}
	return int64(f), err
}
