// Package roundtrip counts the Redis round trips a request costs. A request
// carries a Counter in its context; a client wrapped with Wrap charges every
// call that reaches Redis to it. Calls served from rueidis's client-side
// cache cost nothing. Branches run with Parallel overlap, so they are
// charged the longest branch, not the sum: that is what the request waits.
package roundtrip

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// Counter counts one request's round trips, and the commands they
// carried. Safe for concurrent use.
type Counter struct{ n, cmds atomic.Int64 }

// Trips is how many round trips were charged so far.
func (c *Counter) Trips() int { return int(c.n.Load()) }

// Commands is how many commands those round trips sent to Redis (a
// pipeline's every command, a script call one; reads the client-side
// cache served none).
func (c *Counter) Commands() int { return int(c.cmds.Load()) }

func (c *Counter) add(n, cmds int) {
	if c == nil {
		return
	}
	if n > 0 {
		c.n.Add(int64(n))
	}
	if cmds > 0 {
		c.cmds.Add(int64(cmds))
	}
}

type ctxKey struct{}

// NewContext returns ctx carrying a fresh Counter, and the Counter.
func NewContext(ctx context.Context) (context.Context, *Counter) {
	c := &Counter{}
	return context.WithValue(ctx, ctxKey{}, c), c
}

// FromContext returns ctx's Counter, or nil when it has none.
func FromContext(ctx context.Context) *Counter {
	c, _ := ctx.Value(ctxKey{}).(*Counter)
	return c
}

// Parallel runs fns concurrently (the first on the calling goroutine) and
// returns the first error. Put the branch with the deepest work first: the
// others start on goroutines of their own, whose small stacks grow by
// copying as they go deeper. The commands of every branch are charged. Each runs against its own Counter; ctx's Counter
// is then charged the most any one of them took.
func Parallel(ctx context.Context, fns ...func(context.Context) error) error {
	parent := FromContext(ctx)
	errs := make([]error, len(fns))
	subs := make([]Counter, len(fns))
	var wg sync.WaitGroup
	for i := len(fns) - 1; i >= 0; i-- {
		cctx := ctx
		if parent != nil {
			cctx = context.WithValue(ctx, ctxKey{}, &subs[i])
		}
		if i == 0 {
			errs[0] = fns[0](cctx)
			break
		}
		wg.Go(func() { errs[i] = fns[i](cctx) })
	}
	wg.Wait()
	most, cmds := 0, 0
	for i := range subs {
		most, cmds = max(most, subs[i].Trips()), cmds+subs[i].Commands()
	}
	parent.add(most, cmds)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Wrap returns c charging each call's round trip to the Counter in the
// call's context, if any: every method that talks to Redis, on c, on its
// dedicated connections and on its per-node clients. It also counts c's
// cacheable reads (CacheStats). (rueidis's own hook package, rueidishook,
// is not on the module proxy this project builds from; this covers the
// same methods.)
func Wrap(c rueidis.Client) rueidis.Client {
	if _, ok := c.(counting); ok {
		return c
	}
	return counting{charged: charged{c}, client: client{c}, stats: &cacheStats{}}
}

// CacheStats returns how many cacheable reads made through c, a client
// Wrap returned (or one wrapping it that says so with an Unwrap method),
// were served from rueidis's client-side cache (hits) and how many went to
// Redis (misses); zeros for a client Wrap did not return.
func CacheStats(c rueidis.Client) (hits, misses int64) {
	for {
		switch x := c.(type) {
		case counting:
			return x.stats.hits.Load(), x.stats.misses.Load()
		case interface{ Unwrap() rueidis.Client }:
			c = x.Unwrap()
		default:
			return 0, 0
		}
	}
}

// cacheStats counts one wrapped client's cacheable reads.
type cacheStats struct{ hits, misses atomic.Int64 }

// count counts r and reports whether it was a cache hit.
func (s *cacheStats) count(r rueidis.RedisResult) bool {
	if r.IsCacheHit() {
		s.hits.Add(1)
		return true
	}
	s.misses.Add(1)
	return false
}

// charge charges a round trip of cmds commands to ctx's Counter.
func charge(ctx context.Context, cmds int) { FromContext(ctx).add(1, cmds) }

// calls are the methods that reach Redis that a client and a dedicated
// connection have alike.
type calls interface {
	Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult
	DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult
	Receive(ctx context.Context, subscribe rueidis.Completed, fn func(msg rueidis.PubSubMessage)) error
}

// charged charges each of c's calls to the call's context. Embedded beside
// the wrapped client or connection, which sits one level deeper (client,
// dedicated), its methods win over theirs.
type charged struct{ c calls }

func (c charged) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	charge(ctx, 1)
	start := spanStart(ctx)
	op := opOf(start, cmd.Commands())
	r := c.c.Do(ctx, cmd)
	if !start.IsZero() {
		endSpan(ctx, start, op, 1, r)
	}
	return r
}

func (c charged) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	if len(multi) == 0 {
		return c.c.DoMulti(ctx, multi...)
	}
	charge(ctx, len(multi))
	start := spanStart(ctx)
	op := opOf(start, multi[0].Commands())
	rs := c.c.DoMulti(ctx, multi...)
	if !start.IsZero() {
		endSpan(ctx, start, op, len(multi), rs...)
	}
	return rs
}

// Receive charges the subscribe command's round trip; the messages that
// follow are pushed by Redis, not asked for.
func (c charged) Receive(ctx context.Context, subscribe rueidis.Completed, fn func(msg rueidis.PubSubMessage)) error {
	charge(ctx, 1)
	return c.c.Receive(ctx, subscribe, fn)
}

type client struct{ rueidis.Client }

// counting is a wrapped client: charged calls, counted cacheable reads,
// the rest of the client as it is.
type counting struct {
	charged
	client
	stats *cacheStats
}

func (c counting) DoCache(ctx context.Context, cmd rueidis.Cacheable, ttl time.Duration) rueidis.RedisResult {
	start := spanStart(ctx)
	op := opOf(start, cmd.Commands())
	r := c.Client.DoCache(ctx, cmd, ttl)
	if !c.stats.count(r) {
		charge(ctx, 1)
		if !start.IsZero() {
			endSpan(ctx, start, op, 1, r)
		}
	}
	return r
}

// DoMultiCache is one round trip, and one span, when any of its reads
// missed the cache.
func (c counting) DoMultiCache(ctx context.Context, multi ...rueidis.CacheableTTL) []rueidis.RedisResult {
	start := spanStart(ctx)
	var op string
	if len(multi) > 0 {
		op = opOf(start, multi[0].Cmd.Commands())
	}
	rs := c.Client.DoMultiCache(ctx, multi...)
	missed := 0
	for _, r := range rs {
		if !c.stats.count(r) {
			missed++
		}
	}
	if missed > 0 {
		charge(ctx, missed)
		if !start.IsZero() {
			endSpan(ctx, start, op, missed, rs...)
		}
	}
	return rs
}

func (c counting) DoStream(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResultStream {
	charge(ctx, 1)
	return c.Client.DoStream(ctx, cmd)
}

func (c counting) DoMultiStream(ctx context.Context, multi ...rueidis.Completed) rueidis.MultiRedisResultStream {
	if len(multi) > 0 {
		charge(ctx, len(multi))
	}
	return c.Client.DoMultiStream(ctx, multi...)
}

// Dedicated hands fn a dedicated connection that is counted too.
func (c counting) Dedicated(fn func(rueidis.DedicatedClient) error) error {
	return c.Client.Dedicated(func(d rueidis.DedicatedClient) error { return fn(countDedicated(d)) })
}

// Dedicate returns a dedicated connection that is counted too.
func (c counting) Dedicate() (rueidis.DedicatedClient, func()) {
	d, cancel := c.Client.Dedicate()
	return countDedicated(d), cancel
}

// Nodes returns the per-node clients, counted too, their cacheable reads
// with c's.
func (c counting) Nodes() map[string]rueidis.Client {
	nodes := c.Client.Nodes()
	out := make(map[string]rueidis.Client, len(nodes))
	for addr, n := range nodes {
		out[addr] = counting{charged: charged{n}, client: client{n}, stats: c.stats}
	}
	return out
}

type dedicated struct{ rueidis.DedicatedClient }

// countingDedicated is a dedicated connection whose calls are charged.
type countingDedicated struct {
	charged
	dedicated
}

func countDedicated(d rueidis.DedicatedClient) rueidis.DedicatedClient {
	return countingDedicated{charged{d}, dedicated{d}}
}
