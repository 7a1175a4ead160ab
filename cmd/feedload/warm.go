package main

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/cmd/feedload/loadreport"
)

// Warm readers (--warm-readers): a user's first read queues its upgrade
// (feedcore's EvActivate) when its inbox is not complete, as after an
// import, which costs the fan-out several times a page; measured pages
// should be of readers past that, as in a network that has been running.
// So before the load every active user reads the workload's first page
// once, --concurrency at a time, and the fan-out those reads queued is
// waited for.

// warm has every active user read once, then waits for the fan-out to
// drain (cfg.Drain; not without --redis); nil without --warm-readers. A
// read that fails fails the run: the load would measure first reads.
func (t *target) warm(ctx context.Context) (*loadreport.WarmReport, error) {
	if !t.cfg.WarmReaders {
		return nil, nil
	}
	users := t.pop.activeUsers()
	read := "followingFeed(first: %d)"
	if t.cfg.Workload == workloadLive {
		read = "liveFeed(first: %d)"
	}
	rep := &loadreport.WarmReport{Read: fmt.Sprintf(read, t.cfg.PageSize), Readers: len(users)}
	cl := t.cl.device("feedload-warm" + t.name)
	size := t.cfg.PageSize
	label := "warm readers"
	if t.name != "" {
		label += " " + t.name
	}
	start := time.Now()
	var next, done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range min(t.cfg.Concurrency, len(users)) {
		g.Go(func() error {
			for i := next.Add(1) - 1; i < int64(len(users)) && gctx.Err() == nil; i = next.Add(1) - 1 {
				c, err := cl.as(users[i])
				if err == nil {
					if t.cfg.Workload == workloadLive {
						_, err = client.LiveFeed(gctx, c, &size, nil)
					} else {
						_, err = client.FollowingFeed(gctx, c, &size, nil, nil, nil)
					}
				}
				if err != nil {
					return fmt.Errorf("warm readers: user %d's %s: %w", users[i], rep.Read, err)
				}
				n := done.Add(1)
				t.progress.update(func() string {
					return fmt.Sprintf("%s: %d of %d read once (%.0f/s)", label, n, len(users), float64(n)/time.Since(start).Seconds())
				})
			}
			return gctx.Err()
		})
	}
	err := g.Wait()
	t.progress.done()
	if err != nil {
		return nil, err
	}
	rep.Seconds = time.Since(start).Seconds()
	if t.cfg.Drain != nil {
		start = time.Now()
		if err := t.cfg.Drain(ctx); err != nil {
			return nil, fmt.Errorf("warm readers: %w", err)
		}
		rep.Drained, rep.DrainSeconds = true, time.Since(start).Seconds()
	}
	return rep, nil
}

// activeUsers are the users viewers are picked among, in order.
func (p *population) activeUsers() []int {
	if p.all {
		out := make([]int, p.users)
		for i := range out {
			out[i] = i + 1
		}
		return out
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Sorted(slices.Values(p.active))
}
