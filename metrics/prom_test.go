package metrics

import (
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/metrics/promparse"
)

func TestWritePrometheus(t *testing.T) {
	r := NewRegistry()
	weird := "a\"b\\c\nd"
	r.ObserveOperation("query", "Feed", 2)
	r.ObserveOperation("query", "Feed", 20)
	r.ObserveRequest("query", "Feed", 3*time.Millisecond, nil)
	r.ObserveRequest("query", "Feed", 2*time.Second, []string{"UNAVAILABLE", "UNAVAILABLE", "NOT_FOUND"})
	r.ObserveRequest("", weird, 20*time.Second, []string{"BAD_USER_INPUT"})
	var b strings.Builder
	p := NewWriter(&b)
	r.WritePrometheus(p)
	p.Family("x_gauge", "gauge", "help with \\ and\nnewline")
	p.Sample("x_gauge", 1.5, "l", weird)
	if err := p.Flush(); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	s, err := promparse.Parse(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"feedd_graphql_request_duration_seconds_count", []string{"operation", "Feed"}, 2},
		{"feedd_graphql_request_duration_seconds_bucket", []string{"operation", "Feed", "le", "0.005"}, 1},
		{"feedd_graphql_request_duration_seconds_bucket", []string{"operation", "Feed", "le", "2.5"}, 2},
		{"feedd_graphql_request_duration_seconds_sum", []string{"operation", "Feed"}, 2.003},
		{"feedd_graphql_request_duration_seconds_bucket", []string{"operation", weird, "le", "+Inf"}, 1},
		{"feedd_graphql_redis_round_trips_bucket", []string{"operation", "Feed", "le", "2"}, 1},
		{"feedd_graphql_redis_round_trips_bucket", []string{"operation", "Feed", "le", "16"}, 1},
		{"feedd_graphql_redis_round_trips_count", []string{"operation", "Feed"}, 2},
		{"feedd_graphql_redis_round_trips_sum", []string{"operation", "Feed"}, 22},
		{"feedd_graphql_errors_total", []string{"operation", "Feed", "code", "UNAVAILABLE"}, 2},
		{"feedd_graphql_errors_total", []string{"operation", "Feed", "code", "NOT_FOUND"}, 1},
		{"feedd_graphql_errors_total", []string{"type", "", "operation", weird, "code", "BAD_USER_INPUT"}, 1},
		{"x_gauge", []string{"l", weird}, 1.5},
	} {
		if got, ok := promparse.Find(s, c.name, c.labels...); !ok || got != c.want {
			t.Errorf("%s%q = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	// The weird operation ran no operation middleware: no round-trip series.
	if _, ok := promparse.Find(s, "feedd_graphql_redis_round_trips_count", "operation", weird); ok {
		t.Error("round trips recorded for a request without an operation")
	}
}

func TestParseRejects(t *testing.T) {
	for name, text := range map[string]string{
		"no type":        "# HELP a x\na 1\n",
		"bad escape":     "# HELP a x\n# TYPE a gauge\na{l=\"\\t\"} 1\n",
		"unquoted":       "# HELP a x\n# TYPE a gauge\na{l=x} 1\n",
		"no inf bucket":  "# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n",
		"not cumulative": "# HELP h x\n# TYPE h histogram\nh_bucket{le=\"1\"} 2\nh_bucket{le=\"+Inf\"} 1\nh_sum 1\nh_count 1\n",
		"two types":      "# HELP a x\n# TYPE a gauge\n# TYPE a gauge\na 1\n",
	} {
		if _, err := promparse.Parse(text); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
