// Package server wires feedd's HTTP surface: GraphiQL at /, GraphQL at
// /query, a health check at /healthz, and the middleware in front of them
// (request ids, identity).
package server

import (
	"log/slog"
	"net/http"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/metrics"
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
	// Metrics receives per-operation metrics (Redis round trips); default
	// metrics.Default.
	Metrics *metrics.Registry
	// PlaygroundViewer, when set with DevAuth, is pre-filled as the
	// X-Viewer-Id header in GraphiQL so the first query just works.
	PlaygroundViewer feedcore.ID
}

// maxBody bounds a GraphQL request body; real queries are a few KiB.
const maxBody = 1 << 20

// New returns the HTTP handler serving every route.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	mux := http.NewServeMux()
	mux.Handle("GET /{$}", playgroundHandler(cfg))
	mux.Handle("/query", http.MaxBytesHandler(ensureErrorCodes(graphqlHandler(cfg)), maxBody))
	mux.Handle("GET /healthz", healthHandler(cfg))
	authn := auth.Middleware(auth.Config{DevAuth: cfg.DevAuth, Verifier: cfg.Verifier})
	return withRequestID(authn(mux))
}
