package server

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/metrics"
	"github.com/feedd/feedd/roundtrip"
)

// Fan-out streams and their consumer groups, as feedcore names them (keys
// fo:ev and fo:tk under the key prefix; groups dispatch and execute).
var fanoutStreams = []struct{ stream, key, group string }{
	{"events", "fo:ev", "dispatch"},
	{"tasks", "fo:tk", "execute"},
}

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

		c := cfg.Service.Client()
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
			cmds := make(rueidis.Commands, len(fanoutStreams))
			for i, s := range fanoutStreams {
				cmds[i] = c.B().Xpending().Key(cfg.KeyPrefix + s.key).Group(s.group).Build()
			}
			rs := c.DoMulti(ctx, cmds...)
			p.Family("feedd_fanout_pending", "gauge", "Entries delivered to a worker and not yet acknowledged (XPENDING), by stream.")
			for i, s := range fanoutStreams {
				n, _ := pendingSummary(rs[i])
				p.Sample("feedd_fanout_pending", float64(n), "stream", s.stream)
			}
			p.Family("feedd_fanout_oldest_pending_seconds", "gauge", "Age of the oldest unacknowledged entry, by stream; 0 when none.")
			for i, s := range fanoutStreams {
				_, age := pendingSummary(rs[i])
				p.Sample("feedd_fanout_oldest_pending_seconds", age.Seconds(), "stream", s.stream)
			}
		}
		if err := p.Flush(); err != nil {
			cfg.Logger.Debug("metrics: write", "err", err)
		}
	})
}

// pendingSummary reads an XPENDING summary reply: the count of pending
// entries and the age of the oldest, from its stream id's milliseconds. A
// missing group (no worker ever ran) or an error counts as none.
func pendingSummary(r rueidis.RedisResult) (int64, time.Duration) {
	arr, err := r.ToArray()
	if err != nil || len(arr) < 2 {
		return 0, 0
	}
	n, err := arr[0].AsInt64()
	if err != nil || n == 0 {
		return 0, 0
	}
	minID, err := arr[1].ToString()
	if err != nil {
		return n, 0
	}
	ms, err := strconv.ParseInt(strings.SplitN(minID, "-", 2)[0], 10, 64)
	if err != nil {
		return n, 0
	}
	return n, max(0, time.Since(time.UnixMilli(ms)))
}
