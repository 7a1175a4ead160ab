package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server"
)

// runWorker runs the fan-out pipeline only. Any number of workers and
// serving replicas may share one Redis; each takes its share of the streams.
func runWorker(ctx context.Context, args []string, o cmdOptions) error {
	fs := o.flagSet("worker")
	store := addStoreFlags(fs)
	ops := addOpsFlags(fs)
	opsAddr := fs.String("ops-addr", "", "when set, serve /healthz, /readyz and /metrics at this address")
	if _, err := parse(fs, args); err != nil {
		return err
	}
	if err := ops.apply(); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("worker takes no arguments, got %q", fs.Args())
	}
	st, svc, err := openShared(ctx, store, "worker", "an embedded store is private to one process, where `feedd serve` runs workers already")
	if err != nil {
		return err
	}
	defer st.Close()
	if *opsAddr != "" {
		ln, err := net.Listen("tcp", *opsAddr)
		if err != nil {
			return err
		}
		opsSrv := &http.Server{ReadHeaderTimeout: 10 * time.Second,
			Handler: server.OpsHandler(server.Config{Service: svc, ReadyMaxBacklog: ops.readyMaxBacklog})}
		go func() { _ = opsSrv.Serve(ln) }()
		defer opsSrv.Close()
		slog.Info("worker operations endpoints", "addr", ln.Addr().String())
		o.listened(listenerOps, ln.Addr())
	}
	fmt.Fprintf(o.stdout, "feedd worker: fan-out from %s until interrupted\n", store.redisURL)
	// On SIGTERM ctx ends: RunWorkers returns once each worker has finished
	// or handed back its current task (unacknowledged entries are reclaimed
	// by other workers), and only then does the store close.
	if err := svc.RunWorkers(ctx, feedcore.WorkerOptions{Name: clientName("worker")}); err != nil {
		return err
	}
	s := svc.Stats()
	slog.Info("worker stopped", "events", s.Events, "tasks", s.Tasks, "inbox_writes", s.InboxWrites)
	return nil
}
