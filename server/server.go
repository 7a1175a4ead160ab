// Package server wires feedd's HTTP surface: GraphiQL at /, GraphQL at
// /query (subscriptions too, over WebSocket and server-sent events),
// liveness at /healthz, readiness at /readyz, Prometheus metrics at
// /metrics, the demo's media under /demo/media/ when it has them, and the
// middleware in front of them (request ids, identity, request timeout,
// access log).
package server

import (
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
)

// Config is what the HTTP surface needs.
type Config struct {
	Service *feedcore.Service
	// DevAuth accepts the X-Viewer-Id header as identity (development only).
	DevAuth bool
	// Verifier checks bearer tokens; nil refuses them.
	Verifier *auth.Verifier
	// Logger receives internal errors; default slog.Default().
	Logger *slog.Logger
	// Metrics receives per-operation metrics (latency, Redis round trips,
	// errors) and is what /metrics serves; default a new NewMetrics() per
	// handler.
	Metrics *Metrics
	// PlaygroundViewer, when set with DevAuth, is pre-filled as the
	// X-Viewer-Id header in GraphiQL so the first query just works.
	PlaygroundViewer feedcore.ID
	// RequestTimeout bounds each GraphQL request, so a Redis that stops
	// answering yields UNAVAILABLE instead of a hung request; default
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
	// WriteTimeout bounds a mutation's writes, which run on after the
	// client goes away or RequestTimeout passes, so that no write stops
	// halfway; default resolvers.DefaultWriteTimeout.
	WriteTimeout time.Duration
	// AllowedHosts, when not empty, are the only Host header values served
	// (see allowedHosts): the DNS rebinding guard. Empty allows any host.
	AllowedHosts []string
	// APIConfig is /query's production surface: limits, rate limiting,
	// CORS, introspection, persisted queries.
	APIConfig
	// DemoMedia, when set, serves the demo's media files under
	// DemoMediaPath (GET only), so the demo's posts show pictures with no
	// network.
	DemoMedia http.Handler
	// Connections are the open WebSocket connections and event streams of
	// /query's subscriptions; give the same to OpsHandler, for /metrics,
	// and call its GoAway when the server shuts down. Default: a set of
	// the handler's own.
	Connections *Connections
	// ShuttingDown, when set and true, makes /readyz answer 503 "shutting
	// down" on both listeners while requests are still served: the
	// process has been told to stop, and load balancers polling /readyz
	// take it out of rotation before it closes its listener (feedd serve
	// --shutdown-delay).
	ShuttingDown *atomic.Bool
}

// DemoMediaPath is where Config.DemoMedia is served.
const DemoMediaPath = "/demo/media/"

// New returns the HTTP handler serving every route.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.Connections == nil {
		cfg.Connections = NewConnections()
	}
	log := cfg.Logger
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", playgroundHandler(cfg))
	// The body limit is the guard's (graphqlHandler), which answers 413 with a code.
	mux.Handle(queryPath, private(ensureErrorCodes(graphqlHandler(cfg))))
	mux.Handle("GET /healthz", healthHandler())
	mux.Handle("GET /readyz", readyHandler(cfg))
	mux.Handle("GET /metrics", metricsHandler(cfg, cfg.Metrics))
	if cfg.DemoMedia != nil {
		mux.Handle("GET "+DemoMediaPath, http.StripPrefix(DemoMediaPath, cfg.DemoMedia))
	}
	// /query is observed from outside the host check, so that a request
	// refused there is counted and logged like any other.
	return closeWhenShuttingDown(cfg.ShuttingDown,
		withRequestInfo(cfg, observeQuery(cfg, cfg.Metrics, log, allowedHosts(cfg.AllowedHosts, mux))))
}

// closeWhenShuttingDown answers with "Connection: close" once shuttingDown
// is true: a client on a keep-alive connection (straight, or through an L4
// balancer that pins connections) gets its answer and then opens its next
// connection elsewhere, rather than finding this one closed under a request
// when the server stops. Idle connections are left to the shutdown: closing
// them now would race requests already on their way.
func closeWhenShuttingDown(shuttingDown *atomic.Bool, next http.Handler) http.Handler {
	if shuttingDown == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if shuttingDown.Load() {
			w.Header().Set("Connection", "close")
		}
		next.ServeHTTP(w, r)
	})
}

// private marks every /query answer as not for shared caches nor for
// keeping: its body depends on who asks (the viewer's feed, their flags),
// and a CDN or browser that kept a GET answer would show it to the next
// caller or replay a stale page.
func private(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "private, no-store")
		next.ServeHTTP(w, r)
	})
}
