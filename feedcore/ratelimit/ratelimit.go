package ratelimit

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
)

// luaSpend is the generic cell rate algorithm over one key, spending a
// cost of several points at once: key holds the theoretical arrival time
// (ms) at which the allowance is whole again. Arguments: now, emission
// interval (ms per point), tolerance (ms: the budget of points times the
// interval), cost (points). It returns 1, 0, remaining when the cost is
// spent, 0, retry after ms, remaining when not (nothing is spent then).
// remaining is the points left afterwards, rounded down. Atomic, so
// replicas sharing a Redis share one allowance. Hand-written on purpose:
// the Go rate-limit libraries keep their state in process memory, and a
// limit shared by every replica needs it in Redis, in a script that rides
// the request's first pipeline (no extra round trip). A publish's log
// script runs it too (events.go), so the charge and the append are one
// step.
const LuaSpend = `
local function spend(key, now, interval, tolerance, cost)
  now, interval, tolerance, cost = tonumber(now), tonumber(interval), tonumber(tolerance), tonumber(cost)
  local tat = tonumber(redis.call('GET', key) or now)
  if tat < now then tat = now end
  local next = tat + interval * cost
  if next - now > tolerance then
    return 0, math.ceil(next - now - tolerance), math.floor((tolerance - (tat - now)) / interval)
  end
  redis.call('SET', key, next, 'PX', math.ceil(next - now) + 1)
  return 1, 0, math.floor((tolerance - (next - now)) / interval)
end
`

// gcra spends ARGV[4] points of the allowance KEYS[1] (luaSpend; ARGV:
// now, interval, tolerance, cost); with ARGV[2] gateOnly it spends
// nothing. KEYS[2], when given, is a viewer's gone marker (keys.gone, on
// the same shard), and KEYS[3] its suspension marker (keys.suspended):
// the 4th value replied says which exists (1 deleted, 2 suspended), so
// the request of a deleted or suspended account is refused at no round
// trip of its own: one EXISTS of both markers, as neither usually is
// (a script's every call costs Redis about a microsecond: 10 µs for the
// whole, against 13 with an EXISTS each). Replies {ok, retry after ms,
// remaining, gone}.
var gcra = store.NewScript(false, LuaSpend+`
local gone = 0
if KEYS[3] then
  if redis.call('EXISTS', KEYS[2], KEYS[3]) > 0 then
    gone = redis.call('EXISTS', KEYS[2]) == 1 and 1 or 2
  end
elseif KEYS[2] and redis.call('EXISTS', KEYS[2]) == 1 then gone = 1 end
if ARGV[2] == '`+GateOnly+`' then return {1, 0, 0, gone} end
local ok, wait, left = spend(KEYS[1], ARGV[1], ARGV[2], ARGV[3], ARGV[4])
return {ok, wait, left, gone}
`)

// gateOnly, as a charge's interval, marks a charge that spends nothing
// and only checks that its viewer's account is not deleted (NewCharge with
// the rate limit off).
const GateOnly = "-"

// Limiter spends allowances of points kept in Redis (GCRA), so every
// replica sharing the store shares each allowance.
type Limiter struct {
	*store.Store
	// Now is the clock; Shard maps a viewer to its stream shard, where
	// its allowance lives beside its account's markers.
	Now   func() time.Time
	Shard func(store.ID) int
}

// NowMS is the limiter's clock in milliseconds.
func (s *Limiter) NowMS() int64 { return s.Now().UnixMilli() }

// ShardOf is the stream shard of viewer.
func (s *Limiter) ShardOf(viewer store.ID) int { return s.Shard(viewer) }

// RateLimit is an allowance of points: Burst points at most, refilled at
// Rate points a second. An operation spends its cost in points (one point
// per operation when everything costs 1). Zero Rate disables it.
type RateLimit struct {
	Rate  float64
	Burst int
}

// Subject is whose allowance is spent: a viewer's or, for callers without
// a valid identity, a client address's.
type Subject struct {
	Viewer store.ID
	Addr   string
	// Kind names a separate allowance of the same subject (like "apq" for
	// persisted query registrations); empty is the operations' allowance.
	Kind string
}

// RateKey is sub's allowance. A viewer's is on the viewer's stream shard,
// where a publish's log script can spend it (keys.rateLimitIn).
func (s *Limiter) RateKey(sub Subject) string {
	if sub.Viewer != 0 {
		return s.Keys.RateLimitIn(s.ShardOf(sub.Viewer), sub.Viewer, sub.Kind)
	}
	return s.Keys.RateLimitAddr(sub.Addr, sub.Kind)
}

// Verdict is the outcome of spending a cost.
type Verdict struct {
	// Cost is the points asked for (capped at the budget: an operation
	// costing more than the whole budget spends all of it).
	Cost int
	// Remaining is the points left in the allowance afterwards.
	Remaining int
	// Err is RATE_LIMITED (a *apierr.Error with RetryAfter) when the cost was
	// not spent, UNAUTHENTICATED when the viewer's account is deleted and
	// FORBIDDEN when it is suspended (a charge's verdict), else nil.
	Err error
	// Gone: the viewer's account is deleted (gcra's gone marker);
	// suspended: an operator suspended it (safety_moderation.go).
	Gone, Suspended bool
}

// Allow spends one point of viewer's allowance, or returns RATE_LIMITED
// with how long to wait.
func (s *Limiter) Allow(ctx context.Context, viewer store.ID, l RateLimit) (err error) {
	defer store.Wrap(&err, "spend a point of user %d's allowance", viewer)
	v, err := s.SpendNow(ctx, Subject{Viewer: viewer}, 1, l)
	if err != nil {
		return err
	}
	return v.Err
}

// Spend spends cost points of sub's allowance in a round trip of its own.
// The error is the store's; a refusal is in the Verdict.
func (s *Limiter) Spend(ctx context.Context, sub Subject, cost int, l RateLimit) (_ Verdict, err error) {
	defer store.Wrap(&err, "spend %d of an allowance's points", cost)
	return s.SpendNow(ctx, sub, cost, l)
}

// SpendNow is Spend, its error unwrapped.
func (s *Limiter) SpendNow(ctx context.Context, sub Subject, cost int, l RateLimit) (Verdict, error) {
	if l.Rate <= 0 {
		return Verdict{Cost: cost}, nil
	}
	key, args, cost := s.spendArgs(sub, cost, l)
	return verdictOf(s.Do(ctx, gcra.Cmd(s.Redis.B(), []string{key}, args)), cost)
}

// spendArgs is the allowance key and luaSpend's arguments for spending
// cost points of sub's allowance now, and the cost capped at the budget.
func (s *Limiter) spendArgs(sub Subject, cost int, l RateLimit) (string, []string, int) {
	cost = min(max(cost, 1), max(l.Burst, 1))
	interval := 1000 / l.Rate
	tolerance := interval * float64(max(l.Burst, 1))
	return s.RateKey(sub), []string{store.ScoreArg(s.NowMS()), ftoa(interval), ftoa(tolerance), strconv.Itoa(cost)}, cost
}

func verdictOf(r rueidis.RedisResult, cost int) (Verdict, error) {
	arr, err := r.ToArray()
	if err != nil {
		return Verdict{Cost: cost}, err
	}
	if len(arr) != 4 {
		return Verdict{Cost: cost}, fmt.Errorf("rate limit: reply of %d values", len(arr))
	}
	ok, _ := arr[0].AsInt64()
	wait, _ := arr[1].AsInt64() // Lua numbers come back as integers
	left, _ := arr[2].AsInt64()
	gone, _ := arr[3].AsInt64()
	v := VerdictFrom(ok == 1, wait, left, cost)
	v.Gone, v.Suspended = gone == 1, gone == 2
	return v, nil
}

// VerdictFrom is the Verdict of luaSpend's reply.
func VerdictFrom(ok bool, wait, left int64, cost int) Verdict {
	v := Verdict{Cost: cost, Remaining: int(max(left, 0))}
	if !ok {
		retry := time.Duration(max(wait, 1)) * time.Millisecond
		v.Err = &apierr.Error{Code: apierr.RateLimited, RetryAfter: retry,
			Message: fmt.Sprintf("this operation costs %d points and the allowance has %d; retry after %s", cost, v.Remaining, retry)}
	}
	return v
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }

// Charge is an operation's cost waiting to be spent: it rides, as one more
// command, in the pipeline of the first Redis call made with a context
// carrying it (see WithCharge), so checking the allowance costs no round
// trip of its own. Calls made while that first one is in flight wait for
// its verdict; once the cost is refused, every later call fails with
// RATE_LIMITED without reaching Redis. Settle spends the cost on its own
// when the operation made no Redis call at all.
type Charge struct {
	s    *Limiter
	cmd  rueidis.Completed
	Cost int
	// sub, keys and args are what cmd spends (the allowance, then a
	// viewer's gone marker), for a script that spends the charge itself
	// (spendIn).
	sub  Subject
	keys []string
	args []string
	// rated: the charge spends points; otherwise it only checks its
	// viewer's account (gateOnly). allowGone: a deleted account passes.
	rated, allowGone bool
	// beforeWrites: the cost rides only a pipeline of reads; before the
	// first write it is spent alone, so a refused mutation writes nothing.
	beforeWrites bool

	mu      sync.Mutex
	claimed bool
	done    chan struct{}
	verdict Verdict
	err     error // the store's, when it did not answer
}

// NewCharge prepares spending cost points of sub's allowance under l.
// A viewer's charge also checks that the viewer's account is not deleted
// (its gone marker shares the allowance's shard), and is made with l off
// too, then spending nothing: a deleted account's token is refused with
// UNAUTHENTICATED on every operation, at no round trip of its own, since
// the check rides the operation's first pipeline like the cost. Nil for an
// address's charge when l is off.
func (s *Limiter) NewCharge(sub Subject, cost int, l RateLimit) *Charge {
	var key string
	var args []string
	switch {
	case l.Rate > 0:
		key, args, cost = s.spendArgs(sub, cost, l)
	case sub.Viewer != 0:
		key, args, cost = s.RateKey(sub), []string{store.ScoreArg(s.NowMS()), GateOnly, "", ""}, 0
	default:
		return nil
	}
	keys := []string{key}
	if sub.Viewer != 0 {
		shard := s.ShardOf(sub.Viewer)
		keys = append(keys, s.Keys.Gone(shard, sub.Viewer), s.Keys.Suspended(shard, sub.Viewer))
	}
	cmd := gcra.Cmd(s.Redis.B(), keys, args).Pin()
	return &Charge{s: s, cmd: cmd, Cost: cost, sub: sub, keys: keys, args: args, rated: l.Rate > 0, done: make(chan struct{})}
}

// Rated reports whether the charge spends points (the rate limit is on),
// rather than only checking its viewer's account.
func (ch *Charge) Rated() bool { return ch.rated }

// AllowGone lets the operation through when its viewer's account is
// deleted: a retried deleteAccount must succeed again. Call it before the
// operation's first Redis call.
func (ch *Charge) AllowGone() {
	if ch != nil {
		ch.mu.Lock()
		ch.allowGone = true
		ch.mu.Unlock()
	}
}

// goneErr is the refusal of a deleted account's request.
func goneErr(viewer store.ID) error {
	return apierr.Errorf(apierr.Unauthenticated, "not signed in: the account of user %d was deleted", viewer)
}

// NewWriteCharge is NewCharge for a mutation: the cost rides the first
// Redis call only if that call only reads (a publish's check that its
// author exists, a delete's read of the post); a first call that writes
// waits for the cost to be spent alone. Either way a refused mutation has
// written nothing.
func (s *Limiter) NewWriteCharge(sub Subject, cost int, l RateLimit) *Charge {
	ch := s.NewCharge(sub, cost, l)
	if ch != nil {
		ch.beforeWrites = true
	}
	return ch
}

type chargeKey struct{}

// WithCharge returns ctx whose first Redis call through the Service's
// client carries ch.
func WithCharge(ctx context.Context, ch *Charge) context.Context {
	if ch == nil {
		return ctx
	}
	return context.WithValue(ctx, chargeKey{}, ch)
}

// WithoutCharge returns ctx with no pending charge.
func WithoutCharge(ctx context.Context) context.Context {
	if ChargeOf(ctx) == nil {
		return ctx
	}
	return context.WithValue(ctx, chargeKey{}, (*Charge)(nil))
}

// ChargeOf is the charge ctx carries, nil for none.
func ChargeOf(ctx context.Context) *Charge {
	ch, _ := ctx.Value(chargeKey{}).(*Charge)
	return ch
}

// claim reports whether the caller is the first and must carry the charge.
func (ch *Charge) claim() bool {
	ch.mu.Lock()
	defer ch.mu.Unlock()
	if ch.claimed {
		return false
	}
	ch.claimed = true
	return true
}

func (ch *Charge) resolve(ctx context.Context, r rueidis.RedisResult) {
	if e, ok := rueidis.IsRedisErr(r.Error()); ok && e.IsNoScript() {
		// First use since Redis started (or since this script changed):
		// load the scripts and spend alone.
		if err := ch.s.LoadScripts(ctx); err != nil {
			r = rueidis.NewErrorResult(fmt.Errorf("load scripts: %w", err))
		} else {
			r = ch.s.Redis.Do(WithoutCharge(ctx), ch.cmd)
		}
	}
	ch.verdict, ch.err = verdictOf(r, ch.Cost)
	ch.refuseGone()
	close(ch.done)
}

// refuseGone turns the verdict of a deleted account's charge into
// UNAUTHENTICATED, unless the operation may pass (AllowGone), and that of
// a suspended account's into FORBIDDEN, whatever the operation.
func (ch *Charge) refuseGone() {
	ch.mu.Lock()
	allow := ch.allowGone
	ch.mu.Unlock()
	switch {
	case ch.verdict.Err != nil:
	case ch.verdict.Gone && !allow:
		ch.verdict.Err = goneErr(ch.sub.Viewer)
	case ch.verdict.Suspended:
		ch.verdict.Err = errSuspended
	}
}

// SpendIn claims the charge for a script that spends it itself (with
// luaSpend over keys[0] and args, after checking the gone marker keys[1]
// and the suspension marker keys[2])
// when that script runs on the slot of viewer's stream shard and the
// charge is viewer's. The caller must then send the script with
// withoutCharge and call settleWith with its outcome.
func (ch *Charge) SpendIn(viewer store.ID) (keys, args []string, ok bool) {
	if ch == nil || ch.sub.Viewer != viewer || !ch.claim() {
		return nil, nil, false
	}
	return ch.keys, ch.args, true
}

// SettleWith resolves a charge claimed by spendIn: the verdict of the
// script that spent it, or the store's error when it did not answer. It
// returns the refusal, if any.
func (ch *Charge) SettleWith(v Verdict, err error) error {
	v.Cost = ch.Cost
	ch.verdict, ch.err = v, err
	ch.refuseGone()
	close(ch.done)
	return ch.verdict.Err
}

// wait blocks until the charge is resolved; the error is RATE_LIMITED when
// the cost was refused.
func (ch *Charge) wait(ctx context.Context) error {
	select {
	case <-ch.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	return ch.verdict.Err
}

// Settle returns the verdict, spending the cost now if no Redis call has
// carried it yet. The error is the store's (the caller may let the
// operation through); a refusal is Verdict.Err.
func (ch *Charge) Settle(ctx context.Context) (_ Verdict, err error) {
	defer store.Wrap(&err, "spend an operation's cost of %d points", ch.Cost)
	if ch.claim() {
		ctx := WithoutCharge(ctx)
		ch.resolve(ctx, ch.s.Redis.Do(ctx, ch.cmd))
	}
	select {
	case <-ch.done:
	case <-ctx.Done():
		return Verdict{Cost: ch.Cost}, ctx.Err()
	}
	return ch.verdict, ch.err
}

// ChargedClient is the service's client: Do and DoMulti carry the context's
// pending Charge, if any (cached reads do not: they may not reach Redis).
type ChargedClient struct {
	rueidis.Client
}

// Unwrap is the client r rides on (roundtrip.CacheStats reads its counts).
func (r ChargedClient) Unwrap() rueidis.Client { return r.Client }

func (r ChargedClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	if ChargeOf(ctx) == nil {
		return r.Client.Do(ctx, cmd)
	}
	return r.DoMulti(ctx, cmd)[0]
}

func (r ChargedClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	ch := ChargeOf(ctx)
	if ch == nil || len(cmds) == 0 {
		return r.Client.DoMulti(ctx, cmds...)
	}
	if ch.claim() {
		if ch.beforeWrites && !readOnly(cmds) {
			ch.resolve(ctx, r.Client.Do(ctx, ch.cmd))
			if ch.verdict.Err != nil {
				return failAll(len(cmds), ch.verdict.Err)
			}
			return r.Client.DoMulti(ctx, cmds...)
		}
		rs := r.Client.DoMulti(ctx, append([]rueidis.Completed{ch.cmd}, cmds...)...)
		ch.resolve(ctx, rs[0])
		if ch.verdict.Err == nil {
			return rs[1:]
		}
		// Refused: what rode along ran, but that is reads (a mutation's
		// charge rides nothing else) or, for a query, at most the reader's
		// throttled activity touch, which is idempotent; its results are
		// dropped.
		return failAll(len(cmds), ch.verdict.Err)
	}
	if err := ch.wait(ctx); err != nil {
		return failAll(len(cmds), err)
	}
	return r.Client.DoMulti(ctx, cmds...)
}

func readOnly(cmds []rueidis.Completed) bool {
	for _, c := range cmds {
		if !c.IsReadOnly() {
			return false
		}
	}
	return true
}

func failAll(n int, err error) []rueidis.RedisResult {
	out := make([]rueidis.RedisResult, n)
	for i := range out {
		out[i] = rueidis.NewErrorResult(err)
	}
	return out
}

// errSuspended refuses every request of a suspended account.
var errSuspended = apierr.Errorf(apierr.Forbidden, "this account is suspended")
