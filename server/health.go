package server

import (
	"context"
	"net/http"
	"time"
)

// healthHandler answers 200 when Redis answers a PING, 503 otherwise, so
// load balancers take a replica with a broken store out of rotation.
func healthHandler(cfg Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		c := cfg.Service.Client()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
			cfg.Logger.Warn("healthz: store unavailable", "err", err)
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = w.Write([]byte("store unavailable\n"))
			return
		}
		_, _ = w.Write([]byte("ok\n"))
	})
}
