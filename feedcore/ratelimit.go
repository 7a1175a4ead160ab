package feedcore

import (
	"context"
	"strconv"
	"time"
)

// gcra is the generic cell rate algorithm over one key: KEYS[1] holds the
// theoretical arrival time (ms) of the next request. ARGV: now, emission
// interval (ms per request), burst tolerance (ms). Replies {1, 0} when the
// request may go, {0, retry after ms} when not. Atomic, so replicas
// sharing a Redis share one limit.
var gcra = newScript(false, `
local now, interval, tolerance = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local next = tat + interval
if next - now > tolerance + interval then
  return {0, next - now - tolerance - interval}
end
redis.call('SET', KEYS[1], next, 'PX', math.ceil(next - now) + 1)
return {1, 0}
`)

// RateLimit is how many requests one viewer may make: Rate a second on
// average, with bursts of up to Burst at once. Zero Rate disables it.
type RateLimit struct {
	Rate  float64
	Burst int
}

// Allow takes one request from viewer's allowance, or returns RATE_LIMITED
// with how long to wait.
func (s *Service) Allow(ctx context.Context, viewer ID, l RateLimit) error {
	if l.Rate <= 0 {
		return nil
	}
	interval := 1000 / l.Rate
	tolerance := interval * float64(max(l.Burst-1, 0))
	r, err := s.do(ctx, gcra.cmd(s.c.B(), []string{s.k.rateLimit(viewer)},
		[]string{scoreArg(s.nowMS()), ftoa(interval), ftoa(tolerance)})).ToArray()
	if err != nil {
		return err
	}
	ok, _ := r[0].AsInt64()
	if ok == 1 {
		return nil
	}
	wait, _ := r[1].AsInt64() // Lua numbers come back as integers
	retry := time.Duration(max(wait, 1)) * time.Millisecond
	return &Error{Code: CodeRateLimited, RetryAfter: retry,
		Message: "too many requests; retry after " + retry.String()}
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'f', 3, 64) }
