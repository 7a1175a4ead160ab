package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedd/feedd/demo"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/resolvers"
	"github.com/feedd/feedd/server"
)

func runServe(ctx context.Context, args []string, o cmdOptions) error {
	fs := o.flagSet("serve")
	store := addStoreFlags(fs)
	jwt := addJWTFlags(fs)
	api := addAPIFlags(fs)
	addr := fs.String("addr", ":8080", "listen address (default 127.0.0.1:8080, loopback only, while dev auth is on)")
	httpf := addHTTPFlags(fs)
	streams := addStreamFlags(fs)
	demoOn := fs.Bool("demo", false, "load demo data at start (default true only with the embedded store and no --import)")
	demoSeed := fs.Int64("demo-seed", 1, "seed of the demo data; the same seed gives the same data")
	importFile := fs.String("import", "", "JSON Lines file to load before serving")
	mediaHosts := fs.String("media-hosts", "", "comma-separated hosts (cdn.example.com, or *.example.com for its subdomains) that post media and live cover URLs may name, https on port 443 only; with dev auth any https host, and http on localhost and 127.0.0.1, are accepted too")
	devAuth := fs.Bool("dev-auth", false, "accept the X-Viewer-Id header as identity, without proof (default true only with the embedded store)")
	workers := fs.Bool("workers", true, "run fan-out workers in this process")
	requestTimeout := fs.Duration("request-timeout", server.DefaultRequestTimeout, "longest a GraphQL request may take; a Redis that stops answering fails requests with UNAVAILABLE after this")
	writeTimeout := fs.Duration("write-timeout", resolvers.DefaultWriteTimeout, "how long a mutation's writes may run; they finish even when the client goes away or --request-timeout passes")
	shutdownDelay := fs.Duration("shutdown-delay", DefaultShutdownDelay, "on SIGTERM or SIGINT, how long /readyz answers 503 while requests are still served, before the listener closes: load balancers polling it stop sending first (0 with the embedded store unless set; 0: close at once)")
	shutdownTimeout := fs.Duration("shutdown-timeout", 10*time.Second, "on SIGTERM or SIGINT, after --shutdown-delay, how long in-flight requests get to finish before their connections are closed")
	ops := addOpsFlags(fs)
	set, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := checkArgs(fs, 0); err != nil {
		return err
	}
	hosts, badHost := mediaHostList(*mediaHosts)
	if err := firstBroken(
		flagRule{badHost != "", fmt.Sprintf("--media-hosts: %q is not a host name like cdn.example.com or *.example.com", badHost)},
		flagRule{*requestTimeout <= 0, "--request-timeout must be positive"},
		flagRule{*writeTimeout <= 0, "--write-timeout must be positive"},
		flagRule{*shutdownTimeout <= 0, "--shutdown-timeout must be positive"},
		flagRule{*shutdownDelay < 0, "--shutdown-delay must not be negative (0: no delay)"},
	); err != nil {
		return err
	}
	if err := httpf.check(*requestTimeout, *writeTimeout); err != nil {
		return err
	}
	if err := streams.check(); err != nil {
		return err
	}
	stopTracing, err := ops.start(ctx, "feedd")
	if err != nil {
		return err
	}
	defer stopTracing()
	// The embedded store is private to this process and empty at start:
	// demo data and dev auth are what make it useful, and both would be
	// wrong against a shared Redis, so they default on only there.
	if !set["demo"] {
		*demoOn = store.embedded() && *importFile == ""
	}
	if !set["dev-auth"] {
		*devAuth = store.embedded()
	}
	if !set["addr"] {
		*addr = defaultAddr(*devAuth)
	}
	if !set["shutdown-delay"] && store.embedded() {
		// One process, its store inside it: no balancer to wait for.
		*shutdownDelay = 0
	}
	opts := store.options()
	opts.MediaHosts, opts.DevMediaURLs = hosts, *devAuth
	if len(hosts) == 0 && !*devAuth {
		slog.Info("no --media-hosts: posts with media and live covers are refused")
	}
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
	apiCfg, err := api.config(set, *devAuth)
	if err != nil {
		return err
	}
	apiCfg.Streams = streams.limits()
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
	// The operations listener is up from here to the end, demo load and
	// drain included; its /metrics serves the public handler's registry.
	metrics := server.NewMetrics()
	conns := server.NewConnections() // the subscriptions' streams, for both listeners' /metrics
	var shuttingDown atomic.Bool     // set on SIGTERM: /readyz answers 503 on both listeners
	stopOps, err := ops.listen(server.Config{Service: svc, Metrics: metrics, ShuttingDown: &shuttingDown,
		Connections: conns}, o)
	if err != nil {
		return err
	}
	defer stopOps()

	// Workers outlive the request context: they stop after the HTTP server
	// has drained, so mutations accepted during shutdown still fan out.
	wctx, stopWorkers := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	defer func() { stopWorkers(); wg.Wait() }()
	if *workers {
		wg.Go(func() {
			if err := svc.RunWorkers(wctx, feedcore.WorkerOptions{Name: clientName("serve")}); err != nil {
				slog.Error("fan-out workers stopped", "err", err)
				return
			}
			s := svc.Stats()
			slog.Info("fan-out workers stopped", "events", s.Events, "tasks", s.Tasks, "inbox_writes", s.InboxWrites)
		})
	}

	// Realtime (the Redis subscriptions that carry subscription updates
	// between replicas) runs until the server has drained, like the
	// workers; a link that fails shows in /readyz.
	wg.Go(func() {
		if err := svc.Start(wctx, streams.realtime()); err != nil && wctx.Err() == nil {
			slog.Error("realtime stopped: subscriptions get no updates", "err", err)
		}
	})

	// Listening before the demo loads gives its media URLs the real port
	// (--addr :0 included); connections wait in the backlog meanwhile.
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return err
	}
	defer ln.Close() // a return before Serve; after it, closed already

	var report *demo.Report
	if *demoOn {
		start := time.Now()
		r, err := demo.Load(ctx, svc, *demoSeed, demoMediaBase(ln.Addr()))
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
		if err := loadFile(ctx, svc, *importFile, o.stdout); err != nil {
			return err
		}
	}

	cfg := server.Config{Service: svc, Metrics: metrics, DevAuth: *devAuth, Verifier: verifier,
		RequestTimeout: *requestTimeout, WriteTimeout: *writeTimeout, APIConfig: apiCfg,
		AllowedHosts: httpf.hosts(set, *devAuth), ShuttingDown: &shuttingDown, Connections: conns}
	if report != nil {
		cfg.DemoMedia = demo.MediaHandler()
		if len(report.Viewers) > 0 {
			cfg.PlaygroundViewer = report.Viewers[0].ID
		}
	}
	srv := httpf.limits.Server(server.New(cfg), *requestTimeout, *writeTimeout)
	// Shutdown neither closes WebSockets (hijacked) nor ends event
	// streams: they go away (1001) when it starts, and their clients
	// reconnect to another replica.
	srv.RegisterOnShutdown(conns.GoAway)
	printBanner(o.stdout, ln.Addr(), store, *devAuth, report)
	o.listened(listenerPublic, ln.Addr())

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	if err := announceShutdown(&shuttingDown, *shutdownDelay, served); err != nil {
		return err
	}
	// Stop accepting, let in-flight requests finish; then (deferred) stop
	// the workers, which finish the entries in hand and read no more, and wait
	// for them before the store closes.
	slog.Info("shutting down: finishing in-flight requests", "grace", *shutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), *shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close() // the grace is over: drop what is left
		<-served
		return fmt.Errorf("shutdown: requests still running after --shutdown-timeout %v: %w", *shutdownTimeout, err)
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	// Follows answered before they settled settle now, while the store is
	// open, rather than wait for another process's journal repair.
	svc.WaitForFollows()
	slog.Info("HTTP server drained")
	return nil
}

// DefaultShutdownDelay is --shutdown-delay's default with --redis: a few
// of a load balancer's readiness polls (Kubernetes probes every 10s by
// default, but it also takes a terminating pod out of its endpoints at
// once; 5s covers that news reaching every proxy).
const DefaultShutdownDelay = 5 * time.Second

// announceShutdown marks the process as shutting down, so /readyz answers
// 503 and answers close their connections, and waits delay while the
// server still serves: the load balancer notices and stops sending here
// before the listener closes, and no request finds it closed. It returns
// early with the server's error if the server stops meanwhile.
func announceShutdown(shuttingDown *atomic.Bool, delay time.Duration, served <-chan error) error {
	shuttingDown.Store(true)
	if delay <= 0 {
		return nil
	}
	slog.Info("shutting down: /readyz answers 503 while requests are still served", "delay", delay)
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case err := <-served:
		return fmt.Errorf("serving during --shutdown-delay: %w", err)
	case <-t.C:
		return nil
	}
}

// defaultAddr is --addr's default: anyone who reaches a dev-auth server is
// whoever they claim to be, so with dev auth only this machine can.
func defaultAddr(devAuth bool) string {
	if devAuth {
		return "127.0.0.1:8080"
	}
	return ":8080"
}
