package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/feedd/feedd/demo"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server"
)

// shutdownGrace is how long in-flight requests get to finish on SIGTERM.
const shutdownGrace = 10 * time.Second

func runServe(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	store := addStoreFlags(fs)
	jwt := addJWTFlags(fs)
	addr := fs.String("addr", ":8080", "listen address")
	demoOn := fs.Bool("demo", false, "load demo data at start (default true only with the embedded store and no --import)")
	demoSeed := fs.Int64("demo-seed", 1, "seed of the demo data; the same seed gives the same data")
	importFile := fs.String("import", "", "JSON Lines file to load before serving")
	devAuth := fs.Bool("dev-auth", false, "accept the X-Viewer-Id header as identity, without proof (default true only with the embedded store)")
	workers := fs.Bool("workers", true, "run fan-out workers in this process")
	set, err := parse(fs, args)
	if err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("serve takes no arguments, got %q", fs.Args())
	}
	// The embedded store is private to this process and empty at start:
	// demo data and dev auth are what make it useful, and both would be
	// wrong against a shared Redis, so they default on only there.
	if !set["demo"] {
		*demoOn = store.embedded() && *importFile == ""
	}
	if !set["dev-auth"] {
		*devAuth = store.embedded()
	}
	opts := store.options()
	if *demoOn && !set["bigv-threshold"] {
		// 300 demo users cannot reach 10,000 followers; see demo.Threshold.
		opts.BigVThreshold = demo.Threshold
	}
	if *demoOn && !store.embedded() {
		slog.Warn("loading demo data into a shared Redis: its posts are dated from now, so every start adds more", "redis", store.redisURL)
	}
	if store.embedded() && !*workers {
		slog.Warn("--workers=false with the embedded store: nothing else can reach it, so posts will never fan out")
	}
	verifier, err := jwt.verifier()
	if err != nil {
		return err
	}
	if *devAuth {
		slog.Warn("DEV AUTH IS ON: any client can act as any user by sending X-Viewer-Id; never expose this server")
	} else if !verifier.Enabled() {
		slog.Warn("no way to sign in: set --jwt-secret or --jwt-public-key (or --dev-auth); only public queries will work")
	}

	st, svc, err := openService(ctx, store, opts, "serve")
	if err != nil {
		return err
	}
	defer st.Close()

	// Workers outlive the request context: they stop after the HTTP server
	// has drained, so mutations accepted during shutdown still fan out.
	wctx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer func() { stopWorkers(); wg.Wait() }()
	if *workers {
		wg.Go(func() {
			if err := svc.RunWorkers(wctx, feedcore.WorkerOptions{Name: clientName("serve")}); err != nil {
				slog.Error("fan-out workers stopped", "err", err)
			}
		})
	}

	var report *demo.Report
	if *demoOn {
		start := time.Now()
		r, err := demo.Load(ctx, svc, *demoSeed)
		if ctx.Err() != nil {
			return nil // interrupted while loading: not an error
		}
		if err != nil {
			return err
		}
		slog.Info("demo data loaded", "took", time.Since(start).Round(time.Millisecond), "users", r.Users, "posts", r.Posts)
		report = &r
	}
	if *importFile != "" {
		if err := loadFile(ctx, svc, *importFile, stdout); err != nil {
			return err
		}
	}

	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	cfg := server.Config{Service: svc, DevAuth: *devAuth, Verifier: verifier}
	if report != nil && len(report.Viewers) > 0 {
		cfg.PlaygroundViewer = report.Viewers[0].ID
	}
	srv := &http.Server{Handler: server.New(cfg), ReadHeaderTimeout: 10 * time.Second}
	printBanner(stdout, ln.Addr(), store, *devAuth, report)

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	slog.Info("shutting down: finishing in-flight requests", "grace", shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
