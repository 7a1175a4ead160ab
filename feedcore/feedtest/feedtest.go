// Package feedtest runs a feedcore.Service's fan-out for tests outside
// feedcore: start the workers for the test's lifetime, wait for them to
// drain with a deadline.
package feedtest

import (
	"context"
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
