package core

import (
	"context"
	"fmt"
	"strconv"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/ratelimit"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// Event types on the events streams.
const (
	EvPublish  = "pub" // materialize a new post, then fan it out to the author's push targets
	EvDelete   = "del" // tombstone a post, then fan the removal out
	EvPromote  = "pro" // an author crossed the big-V threshold
	EvAnchor   = "anc" // a user's first live session: note it among its followers' anchors
	EvActivate = "act" // a returning reader: join active sets, backfill
	EvReplay   = "rep" // fan an ended live session out to replay inboxes
	EvRepost   = "rpo" // materialize a repost's record, then fan it out like a post
	EvUnrepost = "rpu" // tombstone a repost's record, then fan the removal out
)

// Removal reports whether events (and tasks) of type t take an item out
// of inboxes rather than push one in.
func Removal(t string) bool { return t == EvDelete || t == EvUnrepost }

// Event is one entry of an events stream. A publish event is the post's
// record of truth until the post is materialized: it carries the content
// (text, media, content warning), so a worker can finish a publish whose
// request died after logging it.
type Event struct {
	Type string
	User store.ID   // author, or the reader for evActivate
	Item store.Item // the post, for evPublish and evDelete; the repost's record for evRepost and evUnrepost
	content.Encoded
	// Parent and ParentAuthor: a reply's parent post and its author
	// (evPublish, evDelete). Orig and OrigAuthor: a repost's original
	// and its author (evRepost, evUnrepost).
	Parent, ParentAuthor, Orig, OrigAuthor store.ID
}

// maxShards bounds StreamShards: new ids carry the shard in their low
// shardBits bits, which keeps them unique without a global counter.
const (
	ShardBits = 6
	MaxShards = 1 << ShardBits
	// ClockBits ids are handed out per millisecond and shard; past that
	// the shard's clock moves on to the next millisecond.
	ClockBits = 16 - ShardBits
)

// ShardOf is the stream shard of a user's events: fixed per user, so one
// author's publishes and deletes queue in order on one stream, next to
// their idempotency records.
func (s *Service) ShardOf(user store.ID) int {
	return store.Spread(user, s.Opts.StreamShards)
}

func (e Event) Fields() []string {
	fv := e.EventFields("t", e.Type, "u", store.FormatID(e.User), "p", store.FormatID(e.Item.ID), "s", store.ScoreArg(e.Item.TS))
	return append(fv, e.LinkFields()...)
}

// LinkFields are the fields naming e's parent or original, if any.
func (e Event) LinkFields() []string {
	var fv []string
	for _, f := range []struct {
		name string
		id   store.ID
	}{{"r", e.Parent}, {"ra", e.ParentAuthor}, {"o", e.Orig}, {"oa", e.OrigAuthor}} {
		if f.id != 0 {
			fv = append(fv, f.name, store.FormatID(f.id))
		}
	}
	return fv
}

func (s *Service) EmitCmd(e Event) rueidis.Completed {
	return s.Redis.B().Arbitrary("XADD").Keys(s.Keys.Events(s.ShardOf(e.User))).Args("*").Args(e.Fields()...).Build()
}

// Emit appends e to its events stream; once it returns, the event is
// durable in Redis and a worker will process it.
func (s *Service) Emit(ctx context.Context, e Event) error {
	if err := s.Do(ctx, s.EmitCmd(e)).Error(); err != nil {
		return fmt.Errorf("queue %s event: %w", e.Type, err)
	}
	return nil
}

// LogScript appends an entry to the stream KEYS[1], atomically with what
// makes it safe to retry and with the rate charge that admits it. With
// ARGV[1] "alloc" it first takes a new (millisecond, count) from the
// shard's clock KEYS[2], never below ARGV[2] ms and never handed out
// twice, and adds them as fields s and q (Lua's doubles cannot hold a
// 64-bit id; Go composes it). With ARGV[5] "i", KEYS[3] is an idempotency
// record: the script replies that record instead when it exists, and
// otherwise stores "s q ARGV[3]" there for ARGV[4] seconds. With ARGV[7]
// not empty, it first checks the viewer's gone and suspension markers
// (the last two keys) and spends a rate charge (luaSpend over the key
// before them, ARGV[6..9]: now, interval, tolerance, cost; no spending
// with interval gateOnly) and, when refused, writes nothing. Replies {1,
// s, q, entry id, remaining} for a new entry, {0, record, remaining} for
// a replay, {-1, retry after ms, remaining} for a refused charge
// (remaining 0 without a charge), {-2, 0, 0} for a deleted account, {-3,
// 0, 0} for a suspended one. ARGV[10..] are the entry's other fields.
var LogScript = store.NewScript(false, ratelimit.LuaSpend+LuaAlloc+`
local left = 0
if ARGV[7] ~= '' then
  if redis.call('EXISTS', KEYS[#KEYS - 1]) == 1 then return {-2, 0, 0} end
  if redis.call('EXISTS', KEYS[#KEYS]) == 1 then return {-3, 0, 0} end
  if ARGV[7] ~= '`+ratelimit.GateOnly+`' then
    local ok, wait
    ok, wait, left = spend(KEYS[#KEYS - 2], ARGV[6], ARGV[7], ARGV[8], ARGV[9])
    if ok == 0 then return {-1, wait, left} end
  end
end
local idem = ARGV[5] == 'i' and KEYS[3]
if idem then
  local got = redis.call('GET', idem)
  if got then return {0, got, left} end
end
local ms, n = ARGV[2], '0'
local fields = {}
for i = 10, #ARGV do fields[#fields + 1] = ARGV[i] end
if ARGV[1] == 'alloc' then
  ms, n = alloc(KEYS[2], ARGV[2])
  fields[#fields + 1] = 's'; fields[#fields + 1] = ms
  fields[#fields + 1] = 'q'; fields[#fields + 1] = n
end
local id = redis.call('XADD', KEYS[1], '*', unpack(fields))
if idem then
  redis.call('SET', idem, ms .. ' ' .. n .. ' ' .. ARGV[3], 'EX', ARGV[4])
end
return {1, ms, n, id, left}
`)

// LuaAlloc: alloc(clock, now) takes a new (millisecond, count) from the
// shard's clock hash (fields m, n), never below now ms and never handed
// out twice, and returns them as strings (Lua's doubles cannot hold a
// 64-bit id; Go composes it, composeID).
const LuaAlloc = `
local function alloc(clock, now)
  local c = redis.call('HMGET', clock, 'm', 'n')
  local t, last, count = tonumber(now), tonumber(c[1]) or 0, tonumber(c[2]) or -1
  if t < last then t = last end
  if t == last then count = count + 1 else count = 0 end
  if count >= 1024 then t = t + 1; count = 0 end
  redis.call('HSET', clock, 'm', t, 'n', count)
  return string.format('%d', t), tostring(count)
end
`

// LogArgs is logScript's ARGV up to the entry's fields: mode, ms, record
// text and TTL, whether KEYS[3] is an idempotency record, and the rate
// charge's luaSpend arguments (nil: none).
func LogArgs(mode string, ms int64, record string, ttl int, idem bool, charge []string) []string {
	i := ""
	if idem {
		i = "i"
	}
	if charge == nil {
		charge = []string{"", "", "", ""}
	}
	return append([]string{mode, store.ScoreArg(ms), record, strconv.Itoa(ttl), i}, charge...)
}

// ComposeID is the id handed out as (ms, count) by shard's clock.
func ComposeID(ms int64, count uint64, shard int) store.ID {
	return store.ID(ms)<<16 | store.ID(count)<<ShardBits | store.ID(shard)
}

// ParseEvent reads an entry of shard's events stream.
func ParseEvent(fv map[string]string, shard int) (Event, error) {
	u, err := strconv.ParseUint(fv["u"], 10, 64)
	if err != nil {
		return Event{}, fmt.Errorf("event field u %q: %w", fv["u"], err)
	}
	e := Event{Type: fv["t"], User: u, Encoded: content.Encoded{Text: fv["x"], Media: fv["m"], CW: fv["cw"]}}
	if e.Type == "" {
		return Event{}, fmt.Errorf("event without a type")
	}
	if p := fv["p"]; p != "" {
		if e.Item.ID, err = strconv.ParseUint(p, 10, 64); err != nil {
			return Event{}, fmt.Errorf("event field p %q: %w", p, err)
		}
	}
	if v := fv["s"]; v != "" {
		if e.Item.TS, err = ParseInt(v); err != nil {
			return Event{}, fmt.Errorf("event field s %q: %w", v, err)
		}
	}
	if q := fv["q"]; q != "" { // an id the shard's clock handed out
		n, err := strconv.ParseUint(q, 10, 64)
		if err != nil || n >= 1<<ClockBits {
			return Event{}, fmt.Errorf("event field q %q: not a clock count", q)
		}
		e.Item.ID = ComposeID(e.Item.TS, n, shard)
	}
	if e.Item.TS < 0 {
		return Event{}, fmt.Errorf("event field s %d: negative", e.Item.TS)
	}
	for name, dst := range map[string]*store.ID{"r": &e.Parent, "ra": &e.ParentAuthor, "o": &e.Orig, "oa": &e.OrigAuthor} {
		if v := fv[name]; v != "" {
			if *dst, err = strconv.ParseUint(v, 10, 64); err != nil {
				return Event{}, fmt.Errorf("event field %s %q: %w", name, v, err)
			}
		}
	}
	return e, nil
}

func ParseInt(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

func Itoa64(n int64) string { return strconv.FormatInt(n, 10) }
