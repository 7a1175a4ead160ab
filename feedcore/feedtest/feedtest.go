// Package feedtest runs a feedcore.Service's fan-out for tests outside
// feedcore: start the workers for the test's lifetime, wait for them to
// drain with a deadline, read a viewer's feed whole, and run realtime
// (the subscriptions' side) for the test's lifetime.
package feedtest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
)

// Workers runs svc's fan-out workers until the test ends, or until the
// returned stop is called; stop waits for them to return.
func Workers(tb testing.TB, svc *feedcore.Service) (stop func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = svc.RunWorkers(ctx, feedcore.WorkerOptions{Name: tb.Name(), Block: 50 * time.Millisecond})
	}()
	stop = func() { cancel(); <-done }
	tb.Cleanup(stop)
	return stop
}

// Drain waits until every queued fan-out is written, failing the test
// after a minute.
func Drain(tb testing.TB, svc *feedcore.Service) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := svc.Drain(ctx); err != nil {
		tb.Fatal(err)
	}
}

// Feed pages viewer's whole following feed, n a page, and returns the
// post ids in feed order, failing the test if it does not end.
func Feed(tb testing.TB, svc *feedcore.Service, viewer feedcore.ID, n int) []feedcore.ID {
	tb.Helper()
	out := []feedcore.ID{}
	after := ""
	for range 1000 {
		pg, err := svc.FollowingFeed(context.Background(), feedcore.FeedRequest{Viewer: viewer, First: n, After: after})
		if err != nil {
			tb.Fatal(err)
		}
		for _, e := range pg.Edges {
			out = append(out, e.Post.ID)
		}
		if !pg.HasNext {
			return out
		}
		after = pg.EndCursor
	}
	tb.Fatal("the feed does not end")
	return nil
}

// Realtime runs svc's realtime (Start) until the test ends, or until the
// returned stop is called, and returns once it serves subscriptions,
// failing the test after a minute.
func Realtime(tb testing.TB, svc *feedcore.Service, o feedcore.RealtimeOptions) (stop func()) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var err error
	go func() { err = svc.Start(ctx, o); close(done) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			if err != nil {
				tb.Errorf("realtime: %v", err)
			}
		})
	}
	tb.Cleanup(stop)
	deadline := time.Now().Add(time.Minute)
	for !svc.RealtimeRunning() {
		select {
		case <-done:
			tb.Fatalf("realtime stopped before it ran: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatal("realtime did not start within a minute")
		}
		time.Sleep(5 * time.Millisecond) // polls Start's progress, not a synchronisation
	}
	return stop
}
