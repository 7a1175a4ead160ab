package server

import (
	"context"
	"net/http"

	"github.com/feedd/feedd/metrics"
	"github.com/feedd/feedd/roundtrip"
)

// metricsHandler serves the Prometheus text format: per-operation
// histograms and error counts from the registry, then gauges read from
// Redis at scrape time (bounded by readyTimeout).
func metricsHandler(cfg Config, reg *metrics.Registry) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		w.Header().Set("Content-Type", metrics.ContentType)
		w.Header().Set("Cache-Control", "no-store")
		p := metrics.NewWriter(w)
		reg.WritePrometheus(p)

		hits, misses := roundtrip.CacheStats()
		p.Family("feedd_redis_cache_hits_total", "counter", "Cacheable Redis reads served from the client-side cache.")
		p.Sample("feedd_redis_cache_hits_total", float64(hits))
		p.Family("feedd_redis_cache_misses_total", "counter", "Cacheable Redis reads that went to Redis.")
		p.Sample("feedd_redis_cache_misses_total", float64(misses))

		st := cfg.Service.Stats()
		p.Family("feedd_fanout_processed_total", "counter", "Fan-out work done by this process's workers, by kind.")
		p.Sample("feedd_fanout_processed_total", float64(st.Events), "kind", "events")
		p.Sample("feedd_fanout_processed_total", float64(st.Tasks), "kind", "tasks")
		p.Sample("feedd_fanout_processed_total", float64(st.InboxWrites), "kind", "inbox_writes")
		p.Sample("feedd_fanout_processed_total", float64(st.Repairs), "kind", "journal_repairs")
		p.Family("feedd_fanout_dead_lettered_total", "counter", "Stream entries this process gave up on and moved to a dead-letter stream (logged with the reason).")
		p.Sample("feedd_fanout_dead_lettered_total", float64(st.DeadLetters))

		up := 1.0
		backlog, err := cfg.Service.Backlog(ctx)
		if err != nil {
			up = 0
			cfg.Logger.Warn("metrics: reading the fan-out backlog", "err", err)
		}
		p.Family("feedd_redis_up", "gauge", "1 when Redis answered this scrape's queries in time, else 0.")
		p.Sample("feedd_redis_up", up)
		if up == 1 {
			p.Family("feedd_fanout_backlog", "gauge", "Entries in the fan-out events and tasks streams, not yet handled.")
			p.Sample("feedd_fanout_backlog", float64(backlog))
			if n, err := cfg.Service.DeadLetters(ctx); err == nil {
				p.Family("feedd_fanout_dead_letters", "gauge", "Entries held in the dead-letter streams, for an operator to inspect (XRANGE <prefix>fo:{sN}:dl).")
				p.Sample("feedd_fanout_dead_letters", float64(n))
			} else {
				cfg.Logger.Warn("metrics: reading the dead letters", "err", err)
			}
			pending, err := cfg.Service.Pending(ctx)
			if err != nil {
				cfg.Logger.Warn("metrics: reading pending fan-out entries", "err", err)
			}
			p.Family("feedd_fanout_pending", "gauge", "Entries delivered to a worker and not yet acknowledged (XPENDING), by stream.")
			for _, sp := range pending {
				p.Sample("feedd_fanout_pending", float64(sp.Count), "stream", sp.Stream)
			}
			p.Family("feedd_fanout_oldest_pending_seconds", "gauge", "Age of the oldest unacknowledged entry, by stream; 0 when none.")
			for _, sp := range pending {
				p.Sample("feedd_fanout_oldest_pending_seconds", sp.Oldest.Seconds(), "stream", sp.Stream)
			}
		}
		if err := p.Flush(); err != nil {
			cfg.Logger.Debug("metrics: write", "err", err)
		}
	})
}
