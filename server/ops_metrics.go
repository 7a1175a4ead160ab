package server

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/roundtrip"
	"github.com/feedd/feedd/server/extension"
)

// TripBuckets are the upper bounds of the round-trip histogram.
var TripBuckets = []float64{0, 1, 2, 3, 4, 6, 8, 12, 16}

// LatencyBuckets are the upper bounds, in seconds, of the request latency
// histogram.
var LatencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// maxOperations bounds how many distinct (type, operation) label pairs are
// kept: clients name operations, so names are not trusted to be few. Later
// ones share otherOperation.
const maxOperations = 500

// otherOperation is the operation label of operations beyond the first
// maxOperations, and of error codes beyond maxCodes: the label of unknown
// operation names too.
const otherOperation = extension.OtherOperation

// maxCodes bounds the distinct error codes labelled; codes come from a
// fixed list, so this only guards against a bug.
const maxCodes = 32

// Metrics is one server's Prometheus registry (not the global default, so
// a process or a test may build several servers): per-operation latency
// and round-trip histograms and error counters, the Go runtime and process
// collectors, and, once a server is built on it, the fan-out and cache
// figures read at scrape time (serviceCollector). Safe for concurrent use.
type Metrics struct {
	reg      *prometheus.Registry
	duration *prometheus.HistogramVec
	trips    *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	streams  streamMetrics

	mu    sync.Mutex
	ops   bounded[[2]string]
	codes bounded[string]

	watchOnce sync.Once
}

// NewMetrics returns a registry holding the Go runtime and process
// collectors and feedd's per-operation metrics, none observed yet.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "feedd_graphql_request_duration_seconds",
			Help:    "Time to serve a GraphQL HTTP request, by operation type and name.",
			Buckets: LatencyBuckets,
		}, []string{"type", "operation"}),
		trips: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "feedd_graphql_redis_round_trips",
			Help:    "Redis round trips one GraphQL operation cost (cache hits are free), by operation type and name.",
			Buckets: TripBuckets,
		}, []string{"type", "operation"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "feedd_graphql_errors_total",
			Help: "GraphQL errors returned, by operation type and name and extensions.code.",
		}, []string{"type", "operation", "code"}),
		ops:   bounded[[2]string]{seen: map[[2]string]bool{}, max: maxOperations},
		codes: bounded[string]{seen: map[string]bool{}, max: maxCodes},
	}
	m.streams = newStreamMetrics()
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.duration, m.trips, m.errors,
		m.streams.subscriptions, m.streams.refused, m.streams.slow,
	)
	return m
}

// Registry is the registry /metrics serves, to register more collectors on
// or to gather from in tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// operationLabel is the operation label an operation of type typ named
// name is counted under: the single place that decides it. The first
// maxOperations (type, name) pairs keep their name, later ones are
// otherOperation. Requests that failed before an operation was known have
// an empty type and name.
func (m *Metrics) operationLabel(typ, name string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops.label([2]string{typ, name}, name)
}

// codeLabel is code while fewer than maxCodes distinct codes were seen.
func (m *Metrics) codeLabel(code string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.codes.label(code, code)
}

// bounded is a set of label keys that stops growing at max: clients
// choose operation names, and the series must stay few.
type bounded[K comparable] struct {
	seen map[K]bool
	max  int
}

// label is value when key is among the first max keys seen, else
// otherOperation.
func (b bounded[K]) label(key K, value string) string {
	if !b.seen[key] {
		if len(b.seen) >= b.max {
			return otherOperation
		}
		b.seen[key] = true
	}
	return value
}

// observeOperation records that an operation ran and cost trips round trips.
func (m *Metrics) observeOperation(typ, name string, trips int) {
	m.trips.WithLabelValues(typ, m.operationLabel(typ, name)).Observe(float64(trips))
}

// observeRequest records that an HTTP request running the operation took d
// and answered with GraphQL errors of the given codes.
func (m *Metrics) observeRequest(typ, name string, d time.Duration, codes []string) {
	name = m.operationLabel(typ, name)
	m.duration.WithLabelValues(typ, name).Observe(d.Seconds())
	m.countErrors(typ, name, codes)
}

// observeErrors records the GraphQL errors a stream answered with; its
// length is not a latency.
func (m *Metrics) observeErrors(typ, name string, codes []string) {
	m.countErrors(typ, m.operationLabel(typ, name), codes)
}

func (m *Metrics) countErrors(typ, label string, codes []string) {
	for _, c := range codes {
		m.errors.WithLabelValues(typ, label, m.codeLabel(c)).Inc()
	}
}

// watch registers, once per Metrics, the collector reading cfg.Service's
// fan-out state and counters at scrape time; a Metrics shared by several
// servers reports the first one's service.
func (m *Metrics) watch(cfg Config) {
	m.watchOnce.Do(func() {
		m.reg.MustRegister(serviceCollector{svc: cfg.Service, log: cfg.Logger, timeout: readyTimeout})
		if cfg.Connections != nil { // a process serving subscriptions
			m.reg.MustRegister(realtimeCollectors(cfg.Service, cfg.Connections)...)
		}
	})
}

// metricsHandler serves the registry in the Prometheus exposition format
// (promhttp), never cached. A collector that fails is logged and the rest
// is served.
func metricsHandler(cfg Config, m *Metrics) http.Handler {
	m.watch(cfg)
	h := promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		ErrorLog:      slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
		ErrorHandling: promhttp.ContinueOnError,
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		h.ServeHTTP(w, r)
	})
}

var (
	cacheHitsDesc = prometheus.NewDesc("feedd_redis_cache_hits_total",
		"Cacheable Redis reads served from the client-side cache.", nil, nil)
	cacheMissesDesc = prometheus.NewDesc("feedd_redis_cache_misses_total",
		"Cacheable Redis reads that went to Redis.", nil, nil)
	processedDesc = prometheus.NewDesc("feedd_fanout_processed_total",
		"Fan-out work done by this process's workers, by kind.", []string{"kind"}, nil)
	deadLetteredDesc = prometheus.NewDesc("feedd_fanout_dead_lettered_total",
		"Stream entries this process gave up on and moved to a dead-letter stream (logged with the reason).", nil, nil)
	reportsDesc = prometheus.NewDesc("feedd_reports_total",
		"Reports this process filed (the report mutation; repeats of one are not counted), by reason.", []string{"reason"}, nil)
	redisUpDesc = prometheus.NewDesc("feedd_redis_up",
		"1 when Redis answered this scrape's queries in time, else 0.", nil, nil)
	backlogDesc = prometheus.NewDesc("feedd_fanout_backlog",
		"Entries in the fan-out events, tasks and journal streams of every shard, not yet handled.", nil, nil)
	streamBacklogDesc = prometheus.NewDesc("feedd_fanout_stream_backlog",
		"Entries in one fan-out stream (XLEN), by stream (events, tasks, journal: <prefix>fo:{sN}:ev, tk, jn) and shard (N); they add up to feedd_fanout_backlog.",
		[]string{"stream", "shard"}, nil)
	cleanupBacklogDesc = prometheus.NewDesc("feedd_safety_cleanup_backlog",
		"Safety clean-up jobs (a blocked, muted or hiding author's items out of a viewer's inboxes) not yet done.", nil, nil)
	deadLettersDesc = prometheus.NewDesc("feedd_fanout_dead_letters",
		"Entries held in the dead-letter streams, for an operator to inspect (XRANGE <prefix>fo:{sN}:dl).", nil, nil)
	pendingDesc = prometheus.NewDesc("feedd_fanout_pending",
		"Entries delivered to a worker and not yet acknowledged (XPENDING), by stream.", []string{"stream"}, nil)
	oldestPendingDesc = prometheus.NewDesc("feedd_fanout_oldest_pending_seconds",
		"Age of the oldest unacknowledged entry, by stream; 0 when none.", []string{"stream"}, nil)
)

// serviceCollector exports, at each scrape, the counters this process
// keeps (feedcore's Stats: fan-out work, reports by reason; the
// client-side cache's hits and misses) and
// the fan-out state read from Redis under a bound of timeout: backlog
// (in total and by stream), safety clean-up backlog, dead letters, pending
// entries and whether Redis answered in time.
type serviceCollector struct {
	svc     *feedcore.Service
	log     *slog.Logger
	timeout time.Duration
}

func (serviceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cacheHitsDesc, cacheMissesDesc, processedDesc, deadLetteredDesc, reportsDesc,
		redisUpDesc, backlogDesc, streamBacklogDesc, cleanupBacklogDesc, deadLettersDesc, pendingDesc, oldestPendingDesc} {
		ch <- d
	}
}

func (c serviceCollector) Collect(ch chan<- prometheus.Metric) {
	if c.svc == nil {
		return
	}
	hits, misses := roundtrip.CacheStats(c.svc.Client())
	ch <- prometheus.MustNewConstMetric(cacheHitsDesc, prometheus.CounterValue, float64(hits))
	ch <- prometheus.MustNewConstMetric(cacheMissesDesc, prometheus.CounterValue, float64(misses))

	st := c.svc.Stats()
	for _, s := range []struct {
		kind string
		n    int64
	}{{"events", st.Events}, {"tasks", st.Tasks}, {"inbox_writes", st.InboxWrites}, {"journal_repairs", st.Repairs},
		{"readers_slept", st.Slept}, {"readers_woken", st.Woken}} {
		ch <- prometheus.MustNewConstMetric(processedDesc, prometheus.CounterValue, float64(s.n), s.kind)
	}
	ch <- prometheus.MustNewConstMetric(deadLetteredDesc, prometheus.CounterValue, float64(st.DeadLetters))
	for _, reason := range feedcore.ReportReasons {
		ch <- prometheus.MustNewConstMetric(reportsDesc, prometheus.CounterValue, float64(st.Reports[reason]), reason)
	}

	// Collect has no request context: the scrape's Redis reads are bounded
	// on their own, as /readyz's are.
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	// One round trip reads every stream's length; the total is their sum
	// (Service.Backlog's number).
	streams, err := c.svc.BacklogByStream(ctx)
	if err != nil {
		c.log.Warn("metrics: reading the fan-out backlog", "err", err)
		ch <- prometheus.MustNewConstMetric(redisUpDesc, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(redisUpDesc, prometheus.GaugeValue, 1)
	var backlog int64
	for _, sl := range streams {
		backlog += sl.Len
		ch <- prometheus.MustNewConstMetric(streamBacklogDesc, prometheus.GaugeValue, float64(sl.Len), sl.Kind, strconv.Itoa(sl.Shard))
	}
	ch <- prometheus.MustNewConstMetric(backlogDesc, prometheus.GaugeValue, float64(backlog))
	if n, err := c.svc.CleanupBacklog(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(cleanupBacklogDesc, prometheus.GaugeValue, float64(n))
	} else {
		c.log.Warn("metrics: reading the safety clean-up backlog", "err", err)
	}
	if n, err := c.svc.DeadLetters(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(deadLettersDesc, prometheus.GaugeValue, float64(n))
	} else {
		c.log.Warn("metrics: reading the dead letters", "err", err)
	}
	pending, err := c.svc.Pending(ctx)
	if err != nil {
		c.log.Warn("metrics: reading pending fan-out entries", "err", err)
	}
	for _, sp := range pending {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(sp.Count), sp.Stream)
		ch <- prometheus.MustNewConstMetric(oldestPendingDesc, prometheus.GaugeValue, sp.Oldest.Seconds(), sp.Stream)
	}
}
