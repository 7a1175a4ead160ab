package feedcore

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestRateLimit(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC).UnixMilli())
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
	var fe *Error
	if !errors.As(err, &fe) || fe.Code != CodeRateLimited || fe.RetryAfter <= 0 || fe.RetryAfter > 100*time.Millisecond {
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
