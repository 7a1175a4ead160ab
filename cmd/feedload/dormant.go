package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/store"
)

// The dormant share (--dormant-share): a fraction of the users made
// dormant after the build (feedcore's Sleep: inboxes dropped, no author
// pushes to them), whom the workload leaves alone except for returning
// readers (--return-ratio of the sessions), whose first page merges the
// feed from their followees' outboxes.

// sleepers is how many users are put to sleep at once.
const sleepers = 32

// sleepTries is how many times a Sleep is tried: one finding the user's
// lock held (an upgrade, a sweep) says to try again.
const sleepTries = 6

// isDormant is whether user u is among the dormant share of the network
// built with seed: a hash of (seed, u) below share. The choice is the same
// on every run with the same seed, so a --skip-build rerun and a --compare
// network agree on it, whatever the order users are visited in.
func isDormant(seed uint64, u int, share float64) bool {
	if share <= 0 {
		return false
	}
	h := mix64(seed ^ mix64(uint64(u)))
	return float64(h>>11)/(1<<53) < share
}

// mix64 is SplitMix64's finaliser: a bijection that spreads every input
// bit over the output.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// dormantUsers are the users of 1..users that isDormant chooses, in order.
func dormantUsers(seed uint64, users int, share float64) []int {
	var out []int
	for u := 1; u <= users && share > 0; u++ {
		if isDormant(seed, u, share) {
			out = append(out, u)
		}
	}
	return out
}

// sleepUsers makes every user of ids dormant, sleepers at a time, with a
// progress line on log.
func sleepUsers(ctx context.Context, svc *feedcore.Service, ids []int, log io.Writer) (time.Duration, error) {
	start := time.Now()
	fmt.Fprintf(log, "feedload: putting %d users to sleep (the dormant share)\n", len(ids))
	p := newProgress(log)
	var next, done atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	for range min(sleepers, len(ids)) {
		g.Go(func() error {
			for i := next.Add(1) - 1; i < int64(len(ids)) && gctx.Err() == nil; i = next.Add(1) - 1 {
				if err := sleepOne(gctx, svc, store.ID(ids[i])); err != nil {
					return err
				}
				n := done.Add(1)
				p.update(func() string {
					return fmt.Sprintf("dormant: %d of %d users asleep (%.0f/s)", n, len(ids), float64(n)/time.Since(start).Seconds())
				})
			}
			return gctx.Err()
		})
	}
	err := g.Wait()
	p.done()
	if err != nil {
		return 0, fmt.Errorf("the dormant share: %w", err)
	}
	took := time.Since(start)
	fmt.Fprintf(log, "feedload: %d users asleep in %.1fs\n", len(ids), took.Seconds())
	return took, nil
}

// sleepOne puts a user to sleep, trying again (after a growing pause) when
// Sleep fails, as it does when the user's lock is held.
func sleepOne(ctx context.Context, svc *feedcore.Service, id store.ID) error {
	pause := 20 * time.Millisecond
	for try := 1; ; try++ {
		err := svc.Sleep(ctx, id)
		if err == nil || try == sleepTries || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause *= 2
	}
}

// stillDormant is ids less the users already awake: with --skip-build,
// the dormant share's users that returned in an earlier run (their upgrade
// woke them), or all of them if the network was built without the share.
func stillDormant(ctx context.Context, svc *feedcore.Service, ids []int) ([]int, error) {
	const batch = 1000
	awake := map[store.ID]bool{}
	for i := 0; i < len(ids); i += batch {
		chunk := make([]store.ID, 0, batch)
		for _, u := range ids[i:min(i+batch, len(ids))] {
			chunk = append(chunk, store.ID(u))
		}
		a, err := svc.Awake(ctx, chunk)
		if err != nil {
			return nil, fmt.Errorf("which of the dormant share are still dormant: %w", err)
		}
		for _, id := range a {
			awake[id] = true
		}
	}
	return slices.DeleteFunc(slices.Clone(ids), func(u int) bool { return awake[store.ID(u)] }), nil
}

// population is who a server's sessions are of: active users, picked as
// viewers, and dormant ones not yet returned, each of whom returns at most
// once and is active from then on. Without a dormant share it is every
// user, picked as before the share existed (the same random draws).
type population struct {
	users   int
	all     bool // no dormant share: every user of 1..users is active
	mu      sync.Mutex
	active  []int
	dormant []int
}

var errNoActiveUser = errors.New("--dormant-share leaves no active user: lower it, or raise --users")

func newPopulation(users int, dormant []int) (*population, error) {
	p := &population{users: users, all: len(dormant) == 0}
	if p.all {
		return p, nil
	}
	asleep := make([]bool, users+1)
	for _, u := range dormant {
		asleep[u] = true
	}
	p.active = make([]int, 0, users-len(dormant))
	for u := 1; u <= users; u++ {
		if !asleep[u] {
			p.active = append(p.active, u)
		}
	}
	if len(p.active) == 0 {
		return nil, errNoActiveUser
	}
	p.dormant = slices.Clone(dormant)
	return p, nil
}

// viewer is a random active user.
func (p *population) viewer(r *rand.Rand) int {
	if p.all {
		return r.IntN(p.users) + 1
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.active[r.IntN(len(p.active))]
}

// returning is a random dormant user, active from now on; 0 when none is
// left.
func (p *population) returning(r *rand.Rand) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := len(p.dormant)
	if n == 0 {
		return 0
	}
	i := r.IntN(n)
	u := p.dormant[i]
	p.dormant[i] = p.dormant[n-1]
	p.dormant = p.dormant[:n-1]
	p.active = append(p.active, u)
	return u
}

// asleep is how many dormant users have not returned.
func (p *population) asleep() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.dormant)
}
