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

// Counter counts one request's round trips. Safe for concurrent use.
type Counter struct{ n atomic.Int64 }

// Trips is how many round trips were charged so far.
func (c *Counter) Trips() int { return int(c.n.Load()) }

func (c *Counter) add(n int) {
	if c != nil && n > 0 {
		c.n.Add(int64(n))
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
// returns the first error. Each runs against its own Counter; ctx's Counter
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
	most := 0
	for i := range subs {
		most = max(most, subs[i].Trips())
	}
	parent.add(most)
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Wrap returns c charging each call's round trip to the Counter in the
// call's context, if any: every method that talks to Redis, on c, on its
// dedicated connections and on its per-node clients. (rueidis's own hook
// package, rueidishook, is not on the module proxy this project builds
// from; this covers the same methods.)
func Wrap(c rueidis.Client) rueidis.Client {
	if _, ok := c.(counting); ok {
		return c
	}
	return counting{c}
}

type counting struct{ rueidis.Client }

func charge(ctx context.Context) { FromContext(ctx).add(1) }

var cacheHits, cacheMisses atomic.Int64

// CacheStats returns how many cacheable reads made through wrapped clients
// since the process started were served from rueidis's client-side cache
// (hits) and how many went to Redis (misses).
func CacheStats() (hits, misses int64) { return cacheHits.Load(), cacheMisses.Load() }

func countCache(r rueidis.RedisResult) bool {
	if r.IsCacheHit() {
		cacheHits.Add(1)
		return true
	}
	cacheMisses.Add(1)
	return false
}

func (c counting) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	charge(ctx)
	return c.Client.Do(ctx, cmd)
}

func (c counting) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	if len(multi) > 0 {
		charge(ctx)
	}
	return c.Client.DoMulti(ctx, multi...)
}

func (c counting) DoCache(ctx context.Context, cmd rueidis.Cacheable, ttl time.Duration) rueidis.RedisResult {
	r := c.Client.DoCache(ctx, cmd, ttl)
	if !countCache(r) {
		charge(ctx)
	}
	return r
}

func (c counting) DoMultiCache(ctx context.Context, multi ...rueidis.CacheableTTL) []rueidis.RedisResult {
	rs := c.Client.DoMultiCache(ctx, multi...)
	missed := false
	for _, r := range rs {
		if !countCache(r) {
			missed = true
		}
	}
	if missed {
		charge(ctx)
	}
	return rs
}

func (c counting) DoStream(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResultStream {
	charge(ctx)
	return c.Client.DoStream(ctx, cmd)
}

func (c counting) DoMultiStream(ctx context.Context, multi ...rueidis.Completed) rueidis.MultiRedisResultStream {
	if len(multi) > 0 {
		charge(ctx)
	}
	return c.Client.DoMultiStream(ctx, multi...)
}

// Receive charges the subscribe command's round trip; the messages that
// follow are pushed by Redis, not asked for.
func (c counting) Receive(ctx context.Context, subscribe rueidis.Completed, fn func(msg rueidis.PubSubMessage)) error {
	charge(ctx)
	return c.Client.Receive(ctx, subscribe, fn)
}

// Dedicated hands fn a dedicated connection that is counted too.
func (c counting) Dedicated(fn func(rueidis.DedicatedClient) error) error {
	return c.Client.Dedicated(func(d rueidis.DedicatedClient) error { return fn(countingDedicated{d}) })
}

// Dedicate returns a dedicated connection that is counted too.
func (c counting) Dedicate() (rueidis.DedicatedClient, func()) {
	d, cancel := c.Client.Dedicate()
	return countingDedicated{d}, cancel
}

// Nodes returns the per-node clients, counted too.
func (c counting) Nodes() map[string]rueidis.Client {
	nodes := c.Client.Nodes()
	out := make(map[string]rueidis.Client, len(nodes))
	for addr, n := range nodes {
		out[addr] = Wrap(n)
	}
	return out
}

type countingDedicated struct{ rueidis.DedicatedClient }

func (d countingDedicated) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	charge(ctx)
	return d.DedicatedClient.Do(ctx, cmd)
}

func (d countingDedicated) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	if len(multi) > 0 {
		charge(ctx)
	}
	return d.DedicatedClient.DoMulti(ctx, multi...)
}

func (d countingDedicated) Receive(ctx context.Context, subscribe rueidis.Completed, fn func(msg rueidis.PubSubMessage)) error {
	charge(ctx)
	return d.DedicatedClient.Receive(ctx, subscribe, fn)
}
