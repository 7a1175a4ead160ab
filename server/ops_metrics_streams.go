package server

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
)

// The metrics of streams (subscriptions over WebSocket and SSE): what this
// server decides (open subscriptions, refusals, slow clients it dropped)
// is counted as it happens; the open connections and the realtime layer's
// counters (notices sent, coalesced and dropped, subscribers it dropped,
// resubscribes) are read at scrape time.

// streamMetrics are a Metrics' stream series.
type streamMetrics struct {
	subscriptions *prometheus.GaugeVec
	refused       *prometheus.CounterVec
	slow          *prometheus.CounterVec
}

func newStreamMetrics() streamMetrics {
	return streamMetrics{
		subscriptions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "feedd_subscriptions_open",
			Help: "GraphQL subscriptions open on this replica, by root field.",
		}, []string{"field"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feedd_stream_refusals_total",
			Help: "WebSocket connections, event streams and subscriptions refused, by transport and code (UNAVAILABLE: --max-connections; UNAUTHENTICATED: no valid identity, WebSocket close 4401; RATE_LIMITED: --max-subscriptions-per-viewer or the allowance; FORBIDDEN: origin).",
		}, []string{"transport", "code"}),
		slow: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feedd_stream_slow_clients_dropped_total",
			Help: "Streams this server closed because a write to the client took longer than the stream write timeout (the client stopped reading), by transport.",
		}, []string{"transport"}),
	}
}

// streamRefused counts a refused stream or subscription.
func (m *Metrics) streamRefused(transport string, code apierr.Code) {
	if m != nil {
		m.streams.refused.WithLabelValues(transport, m.codeLabel(string(code))).Inc()
	}
}

// slowClientDropped counts a stream dropped for a write that timed out.
func (m *Metrics) slowClientDropped(transport string) {
	if m != nil {
		m.streams.slow.WithLabelValues(transport).Inc()
	}
}

// subscriptionOpened counts a subscription of field open until the
// returned func is called.
func (m *Metrics) subscriptionOpened(field string) (closed func()) {
	g := m.streams.subscriptions.WithLabelValues(field)
	g.Inc()
	return g.Dec
}

// realtimeCollectors read, at scrape time, the open streams of conns and
// svc's realtime counters.
func realtimeCollectors(svc *feedcore.Service, conns *Connections) []prometheus.Collector {
	var cs []prometheus.Collector
	for _, t := range []string{transportWebsocket, transportSSE} {
		cs = append(cs, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name:        "feedd_stream_connections_open",
			Help:        "WebSocket connections and event streams open on this replica (bounded by --max-connections), by transport.",
			ConstLabels: prometheus.Labels{"transport": t},
		}, func() float64 { return float64(conns.Open(t)) }))
	}
	if svc == nil {
		return cs
	}
	stat := func(name, help string, of func(feedcore.RealtimeStats) int64) prometheus.Collector {
		return prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(of(svc.RealtimeStats())) })
	}
	return append(cs,
		stat("feedd_realtime_notices_sent_total", "Realtime updates handed to this replica's subscribers.",
			func(s feedcore.RealtimeStats) int64 { return s.NoticesSent }),
		stat("feedd_realtime_notices_coalesced_total", "Notices folded into a later followingFeedUpdates update (--subscription-min-interval).",
			func(s feedcore.RealtimeStats) int64 { return s.NoticesCoalesced }),
		stat("feedd_realtime_notices_dropped_total", "Realtime updates lost to a subscriber's full queue.",
			func(s feedcore.RealtimeStats) int64 { return s.NoticesDropped }),
		stat("feedd_realtime_slow_subscribers_dropped_total", "Subscribers the realtime layer dropped for letting their queue fill.",
			func(s feedcore.RealtimeStats) int64 { return s.SlowDropped }),
		stat("feedd_realtime_resubscribes_total", "Redis subscriptions of this replica confirmed again after a lost link (each followed by catch-up counts).",
			func(s feedcore.RealtimeStats) int64 { return s.Resubscribes }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "feedd_realtime_subscriptions",
			Help: "Subscriptions the realtime layer holds on this replica."},
			func() float64 { return float64(svc.RealtimeStats().Subscriptions) }),
	)
}
