package feedcore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

func TestRateLimit(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	l := RateLimit{Rate: 10, Burst: 5}
	// A burst of 5 goes, the 6th waits one emission interval (100 ms).
	for i := range 5 {
		if err := s.Allow(ctx, 1, l); err != nil {
			t.Fatalf("request %d of the burst: %v", i+1, err)
		}
	}
	err := s.Allow(ctx, 1, l)
	var fe *apierr.Error
	if !errors.As(err, &fe) || fe.Code != apierr.RateLimited || fe.RetryAfter <= 0 || fe.RetryAfter > 100*time.Millisecond {
		t.Fatalf("6th request: %v, want RATE_LIMITED with a retry within 100ms", err)
	}
	if err := s.Allow(ctx, 2, l); err != nil {
		t.Fatalf("another viewer is limited separately: %v", err)
	}
	clk.advance(fe.RetryAfter)
	if err := s.Allow(ctx, 1, l); err != nil {
		t.Fatalf("after waiting retry-after: %v", err)
	}
	// Concurrent requests share one allowance: exactly the burst goes.
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.Allow(ctx, 3, l) == nil {
				ok.Add(1)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != int64(l.Burst) {
		t.Fatalf("%d of 40 concurrent requests allowed, want the burst of %d", ok.Load(), l.Burst)
	}
}

// A charge spends its cost with the first Redis call carrying it, in the
// same round trip; once refused, later calls fail without reaching Redis.
func TestChargeRides(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	l := RateLimit{Rate: 1, Burst: 10}
	mustUsers(t, s, 1)
	ch := s.NewCharge(Subject{Viewer: 1}, 7, l)
	cctx := WithCharge(ctx, ch)
	if _, err := s.Counts(cctx, []store.ID{1}); err != nil {
		t.Fatal(err)
	}
	v, err := ch.Settle(cctx)
	if err != nil || v.Err != nil || v.Cost != 7 || v.Remaining != 3 {
		t.Fatalf("first charge: %+v, %v; want 7 spent, 3 left", v, err)
	}
	ch = s.NewCharge(Subject{Viewer: 1}, 7, l)
	cctx = WithCharge(ctx, ch)
	if _, err := s.Counts(cctx, []store.ID{1}); store.CodeOf(err) != apierr.RateLimited {
		t.Fatalf("read with a refused charge: %v, want RATE_LIMITED", err)
	}
	if _, err := s.Counts(cctx, []store.ID{1}); store.CodeOf(err) != apierr.RateLimited {
		t.Fatalf("second read with a refused charge: %v, want RATE_LIMITED", err)
	}
	if v, err := ch.Settle(cctx); err != nil || store.CodeOf(v.Err) != apierr.RateLimited || v.Remaining != 3 {
		t.Fatalf("refused charge: %+v, %v", v, err)
	}
	// An address has an allowance of its own; a charge no call carried is
	// spent by Settle.
	ch = s.NewCharge(Subject{Addr: "192.0.2.1"}, 10, l)
	if v, err := ch.Settle(WithCharge(ctx, ch)); err != nil || v.Err != nil || v.Remaining != 0 {
		t.Fatalf("address charge: %+v, %v", v, err)
	}
	// Costs above the budget spend the whole budget (else they could never go).
	if v, err := s.Spend(ctx, Subject{Viewer: 2}, 1000, l); err != nil || v.Err != nil || v.Cost != 10 {
		t.Fatalf("oversized cost: %+v, %v", v, err)
	}
}

// TestWriteChargeRidesReads: a publish spends its charge in its log script
// (the author's allowance is on the author's stream shard), so with the
// rate limit on it costs 2 round trips, the log and the materialization;
// a like's charge is spent alone before its script (2 round trips). A
// refused publish answers RATE_LIMITED and writes nothing. Every lane.
func TestWriteChargeRidesReads(t *testing.T) {
	s := testService(t, Options{StreamShards: 3})
	mustUsers(t, s, 1, 2)
	l := RateLimit{Rate: 1, Burst: 1000}
	// Scripts load on first use (a round trip per script): not counted.
	if _, err := s.Publish(context.Background(), 1, "warm"); err != nil {
		t.Fatal(err)
	}
	trips := func(sub Subject, cost int, f func(ctx context.Context) error) (int, Verdict) {
		t.Helper()
		ctx, n := roundtrip.NewContext(context.Background())
		ch := s.NewWriteCharge(sub, cost, l)
		ctx = WithCharge(ctx, ch)
		err := f(ctx)
		v, serr := ch.Settle(ctx)
		if serr != nil || (err != nil) != (v.Err != nil) {
			t.Fatalf("charge: %+v, %v; operation: %v", v, serr, err)
		}
		return n.Trips(), v
	}
	var p *content.Post
	publish := func(ctx context.Context) (err error) { p, err = s.Publish(ctx, 2, "hi"); return err }
	if n, v := trips(Subject{Viewer: 2}, 10, publish); n > 2 || v.Err != nil || v.Remaining != 990 {
		t.Errorf("publish with a rate charge: %d round trips, verdict %+v; want at most 2 (log with the charge, post) and 990 points left", n, v)
	}
	for _, key := range []string{"", "k"} {
		if n, _ := trips(Subject{Viewer: 2}, 10, func(ctx context.Context) error { _, err := s.PublishOnce(ctx, 2, "again", key); return err }); n > 2 {
			t.Errorf("publish (idempotency key %q) with a rate charge: %d round trips, want at most 2", key, n)
		}
	}
	if n, _ := trips(Subject{Viewer: 1}, 10, func(ctx context.Context) error { _, _, err := s.Like(ctx, 1, p.ID); return err }); n != 2 {
		t.Errorf("like with a rate charge: %d round trips, want 2 (the charge alone, then the like)", n)
	}
	// Over the allowance: refused in the log script, nothing written.
	drain(t, s)
	before, err := storetest.Keys(context.Background(), s.Redis, s.Opts.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	events := s.Keys.Events(s.ShardOf(2))
	length := func() int64 {
		n, err := s.Redis.Do(context.Background(), s.Redis.B().Xlen().Key(events).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	logged := length()
	n, v := trips(Subject{Viewer: 2}, 1000, func(ctx context.Context) error {
		_, err := s.PublishOnce(ctx, 2, "refused", "k2")
		if store.CodeOf(err) != apierr.RateLimited {
			t.Errorf("publish over the allowance: %v, want RATE_LIMITED", err)
		}
		return err
	})
	if store.CodeOf(v.Err) != apierr.RateLimited || n != 1 {
		t.Errorf("refused publish: verdict %+v after %d round trips, want RATE_LIMITED after 1", v, n)
	}
	after, err := storetest.Keys(context.Background(), s.Redis, s.Opts.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(before)
	slices.Sort(after)
	if !slices.Equal(before, after) || length() != logged {
		t.Errorf("a refused publish wrote: keys %q, before %q; %d events, before %d", after, before, length(), logged)
	}
}
