package server

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/feedd/feedd/redisstore"
)

// ShuttingDownReason is /readyz's reason while the process shuts down.
const ShuttingDownReason = "shutting down"

// RealtimeDownReason starts /readyz's reason while this replica's realtime
// link (its Redis subscriptions, which carry subscription updates) is
// down.
const RealtimeDownReason = "realtime link down"

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
// it flap), 503 with a JSON reason otherwise, so load balancers take a
// replica with a broken store out of rotation. The fan-out backlog is in
// the answer for information only: it is one number shared by every
// replica, so a bound on it would take them all out of rotation at once
// when the workers fall behind, and a worker outage would become a read
// outage. Operators alert on feedd_fanout_backlog instead. A replica
// serving subscriptions (realtime started) whose realtime link is down is
// unready too: its subscribers would hear nothing while its queries
// answer. A process shutting down (Config.ShuttingDown) is unready whatever the store says,
// without asking it.
func readyHandler(cfg Config) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		type answer struct {
			Ready  bool   `json:"ready"`
			Reason string `json:"reason,omitempty"`
			// Backlog is the fan-out backlog (Service.Backlog), when it
			// could be read: information, never a reason to be unready.
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
		if cfg.ShuttingDown != nil && cfg.ShuttingDown.Load() {
			reply(http.StatusServiceUnavailable, answer{Reason: ShuttingDownReason})
			return
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
		if err := cfg.Service.RealtimeReady(); err != nil {
			// Subscriptions would go silent while every query works
			// (Mastodon #25157): out of rotation until the link is back.
			cfg.Logger.Warn("readyz: realtime link down", "err", err)
			reply(http.StatusServiceUnavailable, answer{Reason: RealtimeDownReason + ": " + err.Error(), Store: store})
			return
		}
		a := answer{Ready: true, Store: store}
		if n, err := cfg.Service.Backlog(ctx); err == nil {
			a.Backlog = &n
		} else {
			// The store check decided: a backlog that could not be read is
			// left out of the answer.
			cfg.Logger.Warn("readyz: reading the fan-out backlog", "err", err)
		}
		reply(http.StatusOK, a)
	})
}
