package realtime

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// Presence: a viewer with a following feed subscription open is marked
// in its bucket's presence set (Keys.Presence), scored with the time the
// mark lapses. The replica renews its viewers' marks every renewEvery, a
// bucket's at once, and trims the bucket's lapsed marks as it does; it
// takes a viewer's mark back with its last following subscription there,
// unless another replica renewed it since (the score is no longer the
// one it wrote). A replica that dies leaves marks that lapse by
// themselves: the fan-out ignores a lapsed mark.
const (
	presenceLapse = time.Minute
	renewEvery    = 20 * time.Second
)

// hashed is a member every presence set holds, for ever (score +inf,
// which no trim reaches): longer than any zset-max-listpack-value, it
// keeps the set out of the listpack encoding, whose lookups scan it. The
// fan-out asks each of a chunk's readers in turn (ZMSCORE), nearly all
// of them absent: on a listpack of 1,000 marks, 62 absent members took
// 374 µs of Redis's time, on the hashed encoding 1.4 µs (Redis 7.0, this
// machine), the chunk's 500 writes about 350 µs.
var hashed = "realtime presence: this member keeps the set hashed (see feedcore/realtime/presence.go) " + strings.Repeat(".", 120)

// unmarkIfOurs removes ARGV[1] from the presence set KEYS[1] if its score
// is still ARGV[2], the lapse this replica wrote.
var unmarkIfOurs = store.NewScript(false, `
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) == tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`)

// mark marks viewer present, with its bucket's current lapse (a new one
// when the bucket has none yet).
func (h *hub) mark(ctx context.Context, viewer store.ID) error {
	b := store.PresenceBucket(viewer)
	h.mu.Lock()
	lapse := h.lapse[b]
	if lapse <= h.s.NowMS() {
		lapse = h.s.NowMS() + presenceLapse.Milliseconds()
		h.lapse[b] = lapse
	}
	h.mu.Unlock()
	err := h.s.Do(ctx, h.s.Redis.B().Zadd().Key(h.s.Keys.Presence(b)).ScoreMember().
		ScoreMember(float64(lapse), store.Member(viewer)).ScoreMember(math.Inf(1), hashed).Build()).Error()
	if err != nil {
		return fmt.Errorf("mark the viewer present: %w", err)
	}
	return nil
}

// unmark takes viewer's mark back, if it is still the one this replica
// wrote. A failure leaves it to lapse.
func (h *hub) unmark(viewer store.ID) {
	b := store.PresenceBucket(viewer)
	h.mu.Lock()
	lapse := h.lapse[b]
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(h.ctx), 5*time.Second)
	defer cancel()
	keys, args := []string{h.s.Keys.Presence(b)}, []string{store.Member(viewer), store.ScoreArg(lapse)}
	_ = h.s.Do(ctx, unmarkIfOurs.Cmd(h.s.Redis.B(), keys, args)).Error()
}

// renew writes a new lapse for every bucket holding viewers present
// here, and trims the bucket's lapsed marks: one round trip.
func (h *hub) renew(ctx context.Context) error {
	now := h.s.NowMS()
	lapse := now + presenceLapse.Milliseconds()
	var cmds []rueidis.Completed
	h.mu.Lock()
	for b, viewers := range h.present {
		if len(viewers) == 0 {
			continue
		}
		add := h.s.Redis.B().Zadd().Key(h.s.Keys.Presence(b)).ScoreMember().ScoreMember(math.Inf(1), hashed)
		for v := range viewers {
			add = add.ScoreMember(float64(lapse), store.Member(v))
		}
		h.lapse[b] = lapse
		cmds = append(cmds, add.Build(),
			h.s.Redis.B().Zremrangebyscore().Key(h.s.Keys.Presence(b)).Min("-inf").Max(store.ScoreArg(now)).Build())
	}
	h.mu.Unlock()
	if len(cmds) == 0 {
		return nil
	}
	if err := store.FirstErr(h.s.DoMulti(ctx, cmds...)); err != nil {
		return fmt.Errorf("renew presence marks: %w", err)
	}
	return nil
}

// renewLoop renews until ctx ends; a renewal that fails is tried again
// at the next tick, well before the marks lapse.
func (h *hub) renewLoop(ctx context.Context) {
	for core.SleepCtx(ctx, renewEvery) {
		if err := h.renew(ctx); err != nil && ctx.Err() == nil {
			h.s.stats.presenceErrors.Add(1)
		}
	}
}

// unmarkAll takes back every mark this replica holds, in one round trip,
// as it stops. Under the hub's lock (nothing else runs then).
func (h *hub) unmarkAll() {
	var cmds []rueidis.Completed
	for b, viewers := range h.present {
		for v := range viewers {
			keys, args := []string{h.s.Keys.Presence(b)}, []string{store.Member(v), store.ScoreArg(h.lapse[b])}
			cmds = append(cmds, unmarkIfOurs.Cmd(h.s.Redis.B(), keys, args))
		}
	}
	if len(cmds) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(h.ctx), 5*time.Second)
	defer cancel()
	h.s.DoMulti(ctx, cmds...)
}

// MarkPresent marks viewers present until lapse, as replicas with their
// following subscriptions open would, without any: for benchmarks and
// load tests of the fan-out's presence (nobody renews or takes back these
// marks; they lapse).
func (s *Service) MarkPresent(ctx context.Context, viewers []store.ID, lapse time.Time) error {
	var byBucket [store.PresenceBuckets][]store.ID
	for _, v := range viewers {
		byBucket[store.PresenceBucket(v)] = append(byBucket[store.PresenceBucket(v)], v)
	}
	var cmds []rueidis.Completed
	for b, vs := range byBucket {
		if len(vs) == 0 {
			continue
		}
		add := s.Redis.B().Zadd().Key(s.Keys.Presence(b)).ScoreMember().ScoreMember(math.Inf(1), hashed)
		for _, v := range vs {
			add = add.ScoreMember(float64(lapse.UnixMilli()), store.Member(v))
		}
		cmds = append(cmds, add.Build())
	}
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return fmt.Errorf("mark viewers present: %w", err)
	}
	return nil
}
