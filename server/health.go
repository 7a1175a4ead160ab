package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/feedd/feedd/redisstore"
)

// DefaultReadyMaxBacklog is the fan-out backlog above which /readyz
// answers 503 when Config.ReadyMaxBacklog is zero.
const DefaultReadyMaxBacklog = 10000

// readyTimeout bounds the Redis calls of a /readyz or /metrics request.
const readyTimeout = time.Second

// healthHandler answers 200 while the process serves HTTP at all: a
// liveness probe. It does not touch Redis, so an outage of the store does
// not get every replica restarted; /readyz covers the store.
func healthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		_, _ = w.Write([]byte("ok\n"))
	})
}

// readyHandler answers 200 when the store serves (redisstore.Check: a
// single Redis answers PING; on a Redis Cluster, the nodes that answer
// within a second report cluster_state:ok, so one dead node does not make
// it flap) and the fan-out backlog is under the configured bound, 503 with
// a JSON reason otherwise, so load balancers take a replica with a broken
// store, or one whose workers have fallen behind, out of rotation.
func readyHandler(cfg Config) http.Handler {
	bound := cfg.ReadyMaxBacklog
	if bound <= 0 {
		bound = DefaultReadyMaxBacklog
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		type answer struct {
			Ready   bool   `json:"ready"`
			Reason  string `json:"reason,omitempty"`
			Backlog *int64 `json:"backlog,omitempty"`
			// Store is what the store check saw, when there is more to it
			// than a PING: a cluster's node counts.
			Store *redisstore.Health `json:"store,omitempty"`
		}
		var store *redisstore.Health
		reply := func(status int, a answer) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Cache-Control", "no-store")
			w.WriteHeader(status)
			_ = json.NewEncoder(w).Encode(a)
		}
		h := redisstore.Check(ctx, cfg.Service.Client())
		if h.Cluster {
			store = &h
		}
		if !h.Serving {
			cfg.Logger.Warn("readyz: "+h.Problem, "detail", h.Detail)
			reply(http.StatusServiceUnavailable, answer{Reason: h.Problem, Store: store})
			return
		}
		n, err := cfg.Service.Backlog(ctx)
		if err != nil {
			cfg.Logger.Warn("readyz: reading the fan-out backlog", "err", err)
			reply(http.StatusServiceUnavailable, answer{Reason: "store unavailable"})
			return
		}
		if n > bound {
			reply(http.StatusServiceUnavailable, answer{Backlog: &n, Store: store,
				Reason: fmt.Sprintf("fan-out backlog %d is over %d: workers are behind", n, bound)})
			return
		}
		reply(http.StatusOK, answer{Ready: true, Backlog: &n, Store: store})
	})
}
