package server

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// families are gathered or scraped metric families by name.
type families map[string]*dto.MetricFamily

// parseExposition parses a /metrics answer in the Prometheus text format,
// failing the test when it is not valid.
func parseExposition(tb testing.TB, text string) families {
	tb.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		tb.Fatalf("/metrics is not valid exposition: %v\n%s", err, text)
	}
	return mfs
}

// gather reads g as a scrape would.
func gather(tb testing.TB, g prometheus.Gatherer) families {
	tb.Helper()
	got, err := g.Gather()
	if err != nil {
		tb.Fatalf("gather: %v", err)
	}
	mfs := families{}
	for _, mf := range got {
		mfs[mf.GetName()] = mf
	}
	return mfs
}

// metric is the metric of family name whose labels include the given
// name, value pairs, and whether there is one.
func (f families) metric(name string, labels ...string) (*dto.Metric, bool) {
	mf := f[name]
	if mf == nil {
		return nil, false
	}
next:
	for _, m := range mf.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
					found = true
				}
			}
			if !found {
				continue next
			}
		}
		return m, true
	}
	return nil, false
}

// value is the value of a counter or gauge, or with the suffix _count or
// _sum, of a histogram's count or sum, and whether the series exists.
func (f families) value(name string, labels ...string) (float64, bool) {
	if m, ok := f.metric(name, labels...); ok {
		switch {
		case m.Counter != nil:
			return m.Counter.GetValue(), true
		case m.Gauge != nil:
			return m.Gauge.GetValue(), true
		case m.Untyped != nil:
			return m.Untyped.GetValue(), true
		}
		return 0, false
	}
	for _, suffix := range []string{"_count", "_sum"} {
		if base, ok := strings.CutSuffix(name, suffix); ok {
			if m, ok := f.metric(base, labels...); ok && m.Histogram != nil {
				if suffix == "_count" {
					return float64(m.Histogram.GetSampleCount()), true
				}
				return m.Histogram.GetSampleSum(), true
			}
		}
	}
	return 0, false
}

// roundTrips is the Redis round trips query operation op has cost in all
// on m, and how many times it ran.
func (m *Metrics) roundTrips(tb testing.TB, op string) (trips, runs int64) {
	tb.Helper()
	f := gather(tb, m.Registry())
	sum, _ := f.value("feedd_graphql_redis_round_trips_sum", "type", "query", "operation", op)
	n, _ := f.value("feedd_graphql_redis_round_trips_count", "type", "query", "operation", op)
	return int64(sum), int64(n)
}

// runsByOperation is how many times operations ran on m, by operation
// label (of any type), as the round-trip histogram counts them.
func (m *Metrics) runsByOperation(tb testing.TB) map[string]int64 {
	tb.Helper()
	out := map[string]int64{}
	for _, mt := range gather(tb, m.Registry())["feedd_graphql_redis_round_trips"].GetMetric() {
		for _, lp := range mt.GetLabel() {
			if lp.GetName() == "operation" {
				out[lp.GetValue()] += int64(mt.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

// The per-operation histograms and counters, bucket by bucket, as
// Prometheus reads them.
func TestOperationMetrics(t *testing.T) {
	m := NewMetrics()
	weird := "a\"b\\c\nd"
	m.observeOperation("query", "Feed", 2)
	m.observeOperation("query", "Feed", 20)
	m.observeRequest("query", "Feed", 3*time.Millisecond, nil)
	m.observeRequest("query", "Feed", 2*time.Second, []string{"UNAVAILABLE", "UNAVAILABLE", "NOT_FOUND"})
	m.observeRequest("", weird, 20*time.Second, []string{"BAD_USER_INPUT"})

	const trips = `
# HELP feedd_graphql_redis_round_trips Redis round trips one GraphQL operation cost (cache hits are free), by operation type and name.
# TYPE feedd_graphql_redis_round_trips histogram
feedd_graphql_redis_round_trips_bucket{operation="Feed",type="query",le="0"} 0
feedd_graphql_redis_round_trips_bucket{operation="Feed",type="query",le="1"} 0
feedd_graphql_redis_round_trips_bucket{operation="Feed",type="query",le="2"} 1
feedd_graphql_redis_round_trips_bucket{operation="Feed",type="query",le="3"} 1
feedd_graphql_redis_round_trips_bucket{operation="Feed",type="query",le="4"} 1
feedd_graphql_redis_round_trips_bucket{operation="Feed",type="query",le="6"} 1
feedd_graphql_redis_round_trips_bucket{operation="Feed",type="query",le="8"} 1
feedd_graphql_redis_round_trips_bucket{operation="Feed",type="query",le="12"} 1
feedd_graphql_redis_round_trips_bucket{operation="Feed",type="query",le="16"} 1
feedd_graphql_redis_round_trips_bucket{operation="Feed",type="query",le="+Inf"} 2
feedd_graphql_redis_round_trips_sum{operation="Feed",type="query"} 22
feedd_graphql_redis_round_trips_count{operation="Feed",type="query"} 2
`
	if err := testutil.CollectAndCompare(m.trips, strings.NewReader(trips)); err != nil {
		t.Error(err)
	}
	const errs = `
# HELP feedd_graphql_errors_total GraphQL errors returned, by operation type and name and extensions.code.
# TYPE feedd_graphql_errors_total counter
feedd_graphql_errors_total{code="BAD_USER_INPUT",operation="a\"b\\c\nd",type=""} 1
feedd_graphql_errors_total{code="NOT_FOUND",operation="Feed",type="query"} 1
feedd_graphql_errors_total{code="UNAVAILABLE",operation="Feed",type="query"} 2
`
	if err := testutil.CollectAndCompare(m.errors, strings.NewReader(errs)); err != nil {
		t.Error(err)
	}
	if got := testutil.ToFloat64(m.errors.WithLabelValues("query", "Feed", "UNAVAILABLE")); got != 2 {
		t.Errorf("UNAVAILABLE errors of Feed = %v, want 2", got)
	}

	f := gather(t, m.Registry())
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"feedd_graphql_request_duration_seconds_count", []string{"operation", "Feed"}, 2},
		{"feedd_graphql_request_duration_seconds_sum", []string{"operation", "Feed"}, 2.003},
		{"feedd_graphql_request_duration_seconds_count", []string{"operation", weird}, 1},
	} {
		if got, ok := f.value(c.name, c.labels...); !ok || got != c.want {
			t.Errorf("%s%q = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	// The weird operation ran no operation middleware: no round-trip series.
	if _, ok := f.value("feedd_graphql_redis_round_trips_count", "operation", weird); ok {
		t.Error("round trips recorded for a request without an operation")
	}
}

// Operation names come from clients: past maxOperations distinct ones,
// every new name is counted as otherOperation, so the series stay bounded.
func TestOperationLabelsBounded(t *testing.T) {
	m := NewMetrics()
	for i := range maxOperations + 100 {
		m.observeOperation("query", fmt.Sprintf("Op%d", i), 1)
		m.observeRequest("query", fmt.Sprintf("Op%d", i), time.Millisecond, []string{fmt.Sprintf("CODE%d", i)})
	}
	m.observeOperation("query", "Op0", 1) // known already: keeps its name
	if n := testutil.CollectAndCount(m.trips); n != maxOperations+1 {
		t.Errorf("%d round-trip series, want %d", n, maxOperations+1)
	}
	if n := testutil.CollectAndCount(m.duration); n != maxOperations+1 {
		t.Errorf("%d latency series, want %d", n, maxOperations+1)
	}
	f := gather(t, m.Registry())
	if runs := m.runsByOperation(t); len(runs) != maxOperations+1 || runs[otherOperation] != 100 || runs["Op0"] != 2 {
		t.Errorf("%d operation labels, %d runs under %q, %d of Op0; want %d, 100, 2",
			len(runs), runs[otherOperation], otherOperation, runs["Op0"], maxOperations+1)
	}
	codes := map[string]bool{}
	for _, mt := range f["feedd_graphql_errors_total"].GetMetric() {
		for _, lp := range mt.GetLabel() {
			if lp.GetName() == "code" {
				codes[lp.GetValue()] = true
			}
		}
	}
	if len(codes) != maxCodes+1 || !codes[otherOperation] {
		t.Errorf("%d distinct codes labelled, want %d with %q", len(codes), maxCodes+1, otherOperation)
	}
}
