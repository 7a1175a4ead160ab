package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server"
)

// runWorker runs the fan-out pipeline only. Any number of workers and
// serving replicas may share one Redis; each takes its share of the streams.
func runWorker(ctx context.Context, args []string, o cmdOptions) error {
	var ops *opsFlags
	stopTracing := func() {}
	defer func() { stopTracing() }() // the one check sets; runs after the store closed
	return sharedCommand{
		name:    "worker",
		instead: "an embedded store is private to one process, where `feedd serve` runs workers already",
		flags:   func(fs *flag.FlagSet) { ops = addOpsFlags(fs) },
		check: func() error {
			// Its own service name: a worker is deployed and scaled apart
			// from the servers, and its spans are fan-out work, not
			// GraphQL operations (serve's in-process workers stay "feedd").
			stop, err := ops.start(ctx, "feedd-worker")
			if err != nil {
				return err
			}
			stopTracing = stop
			return nil
		},
	}.run(ctx, args, o, func(svc *feedcore.Service, store *storeFlags, _ []string) error {
		return work(ctx, svc, store, ops, o)
	})
}

// work runs the fan-out workers until ctx ends, with the operations
// endpoints at --ops-addr when it is set.
func work(ctx context.Context, svc *feedcore.Service, store *storeFlags, ops *opsFlags, o cmdOptions) error {
	stopOps, err := ops.listen(server.Config{Service: svc}, o)
	if err != nil {
		return err
	}
	defer stopOps()
	fmt.Fprintf(o.stdout, "feedd worker: fan-out from %s until interrupted\n", store.redisURL)
	// On SIGTERM ctx ends: RunWorkers reads no more entries and returns once
	// each worker has finished and acknowledged the one in hand (within
	// WorkerOptions.StopGrace; past it the entry stays pending and another
	// worker reclaims it), leaving the rest queued for the other workers;
	// only then does the store close.
	if err := svc.RunWorkers(ctx, feedcore.WorkerOptions{Name: clientName("worker")}); err != nil {
		return err
	}
	s := svc.Stats()
	slog.Info("worker stopped", "events", s.Events, "tasks", s.Tasks, "inbox_writes", s.InboxWrites)
	return nil
}
