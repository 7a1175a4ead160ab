package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"

	"github.com/feedd/feedd/cmd/feedload/loadreport"
	"github.com/feedd/feedd/internal/redisinfo"
)

func TestMetricsURL(t *testing.T) {
	for _, tc := range []struct{ graphql, ops, want string }{
		{"http://127.0.0.1:8080/query", "", "http://127.0.0.1:8080/metrics"},
		{"https://feed.example:8443/query?x=1", "", "https://feed.example:8443/metrics"},
		{"http://127.0.0.1:8080/query", "http://127.0.0.1:9090", "http://127.0.0.1:9090/metrics"},
		{"http://127.0.0.1:8080/query", "http://127.0.0.1:9090/", "http://127.0.0.1:9090/metrics"},
		{"http://127.0.0.1:8080/query", "http://127.0.0.1:9090/ops/metrics", "http://127.0.0.1:9090/ops/metrics"},
		{"/query", "", ""},
		{"http://127.0.0.1:8080/query", "127.0.0.1:9090", ""},
	} {
		got, err := metricsURL(tc.graphql, tc.ops)
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("metricsURL(%q, %q) = %q, %v; want %q", tc.graphql, tc.ops, got, err, tc.want)
		}
	}
}

// exposition is a registry's metrics with process_cpu_seconds_total at
// cpu and, unless it is negative, feedd_fanout_processed_total{kind=
// "inbox_writes"} at inbox (beside other kinds), encoded in format.
func exposition(t *testing.T, cpu, inbox float64, format expfmt.Format) []byte {
	t.Helper()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "process_cpu_seconds_total", Help: "CPU."})
	c.Add(cpu)
	reg.MustRegister(c, prometheus.NewGauge(prometheus.GaugeOpts{Name: "feedd_other", Help: "Another."}))
	if inbox >= 0 {
		p := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "feedd_fanout_processed_total", Help: "Fan-out."}, []string{"kind"})
		p.WithLabelValues("events").Add(7)
		p.WithLabelValues("inbox_writes").Add(inbox)
		p.WithLabelValues("tasks").Add(3)
		reg.MustRegister(p)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, format)
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestParseMetrics(t *testing.T) {
	for _, format := range []expfmt.Format{expfmt.NewFormat(expfmt.TypeTextPlain), expfmt.NewFormat(expfmt.TypeProtoDelim)} {
		got, err := parseMetrics(bytes.NewReader(exposition(t, 12.5, 1234, format)), format)
		if err != nil || got.cpu != 12.5 || got.inboxWrites != 1234 || got.inboxErr != nil {
			t.Errorf("%s: parseMetrics = %+v, %v; want CPU 12.5, 1234 inbox writes", format, got, err)
		}
		// A feedd from before the inbox writes metric: CPU only.
		got, err = parseMetrics(bytes.NewReader(exposition(t, 12.5, -1, format)), format)
		if err != nil || got.cpu != 12.5 || !errors.Is(got.inboxErr, errNoInboxWrites) {
			t.Errorf("%s: without inbox writes: %+v, %v; want CPU 12.5 and errNoInboxWrites", format, got, err)
		}
	}
	text := expfmt.NewFormat(expfmt.TypeTextPlain)
	for _, tc := range []struct{ name, body, wantErr string }{
		{"no such metric", "# TYPE up gauge\nup 1\n", "no process_cpu_seconds_total"},
		{"inbox writes without CPU", `feedd_fanout_processed_total{kind="inbox_writes"} 5` + "\n", "no process_cpu_seconds_total"},
		{"not an exposition", "<html>not metrics</html>\n", "parse the exposition"},
		{"untyped", "process_cpu_seconds_total 3.25\n" + `feedd_fanout_processed_total{kind="events"} 9` + "\n" +
			`feedd_fanout_processed_total{kind="inbox_writes"} 5` + "\n", ""},
	} {
		got, err := parseMetrics(strings.NewReader(tc.body), text)
		switch {
		case tc.wantErr == "" && (err != nil || got.cpu != 3.25 || got.inboxWrites != 5 || got.inboxErr != nil):
			t.Errorf("%s: %+v, %v; want 3.25 and 5", tc.name, got, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: %+v, %v; want an error with %q", tc.name, got, err, tc.wantErr)
		}
	}
}

// TestScrapeMetrics scrapes a /metrics served as feedd serves it (promhttp over
// a registry with the process collector): this process's CPU, which grows.
func TestScrapeMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	m, err := scrapeMetrics(ctx, srv.Client(), srv.URL+"/metrics")
	first := m.cpu
	if err != nil {
		t.Skipf("no process CPU on this platform: %v", err)
	}
	// Spin until the process's CPU time moves on (it counts in ticks).
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		if n%1_000_000 == 0 {
			if now, err := scrapeMetrics(ctx, srv.Client(), srv.URL+"/metrics"); err != nil || now.cpu > first {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
		}
	}
	t.Errorf("process_cpu_seconds_total stayed at %v over 10s of spinning", first)
}

func TestScrapeMetricsStatus(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if _, err := scrapeMetrics(context.Background(), srv.Client(), srv.URL+"/metrics"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("scrape of a missing page: %v, want the status", err)
	}
}

func TestSpent(t *testing.T) {
	at := func(feedd, redis float64) cpuReading {
		return cpuReading{feedd: feedd, inbox: 100 * feedd,
			redis: redisinfo.CPU{Sys: redis / 2, User: redis / 2, MainSys: redis / 4, MainUser: redis / 4, Main: true}, masters: 3}
	}
	cmds := func(evalsha, get int64) redisinfo.Commands {
		return redisinfo.Commands{"evalsha": {Calls: evalsha, Usec: 100 * evalsha}, "get": {Calls: get, Usec: get}}
	}
	var s spent
	// Two phases of 50 operations: feedd spends 0.1 s and 0.2 s, Redis
	// 0.05 s and 0.1 s; 10 and 30 EVALSHA, 100 and 0 GET; 10 and 20
	// inbox writes.
	s.add(at(1, 2), at(1.1, 2.05), cmds(5, 10), cmds(15, 110), nil)
	s.add(at(5, 3), at(5.2, 3.1), cmds(15, 110), cmds(45, 110), nil)
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
	c := s.cost(100, 4, "http://x/metrics")
	if c.FeeddError != "" || c.RedisError != "" || c.CommandsError != "" || c.InboxWritesError != "" || c.RedisMasters != 3 {
		t.Fatalf("cost %+v", c)
	}
	if c.InboxWrites != 30 || c.Posts != 4 || c.InboxWritesPerPost == nil || !near(*c.InboxWritesPerPost, 7.5) {
		t.Errorf("inbox writes %d for %d posts: %v a post, want 30, 4, 7.5", c.InboxWrites, c.Posts, c.InboxWritesPerPost)
	}
	if c := s.cost(100, 0, ""); c.InboxWritesPerPost != nil || c.InboxWritesError != "" {
		t.Errorf("inbox writes without a post: %v a post, %q", c.InboxWritesPerPost, c.InboxWritesError)
	}
	if !near(c.FeeddCPUSeconds, 0.3) || !near(c.FeeddMsPerOp, 3) || !near(c.RedisMsPerOp, 1.5) ||
		c.RedisMainMsPerOp == nil || !near(*c.RedisMainMsPerOp, 0.75) {
		t.Errorf("cost %+v (main %v)", c, c.RedisMainMsPerOp)
	}
	want := []loadreport.CommandReport{
		{Name: "EVALSHA", Calls: 40, Usec: 4000, CallsPerOp: 0.4, UsecPerCall: 100, Share: 4000.0 / 4100},
		{Name: "GET", Calls: 100, Usec: 100, CallsPerOp: 1, UsecPerCall: 1, Share: 100.0 / 4100},
	}
	if !slices.Equal(c.Commands, want) {
		t.Errorf("commands %+v, want %+v", c.Commands, want)
	}

	// A phase whose scrape failed marks feedd's figure, not Redis's.
	failed := at(9, 9)
	failed.feeddErr = errors.New("scrape: refused")
	failed.inboxErr = failed.feeddErr
	s.add(failed, at(9.1, 9.1), cmds(45, 110), cmds(45, 110), nil)
	if c := s.cost(150, 6, ""); c.FeeddError != "scrape: refused" || c.RedisError != "" ||
		c.InboxWritesError != "scrape: refused" || c.InboxWritesPerPost != nil {
		t.Errorf("after a failed scrape: %+v", c)
	}
	s.add(at(9, 9), at(9, 9), nil, nil, errNoRedis)
	if c := s.cost(150, 6, ""); c.CommandsError != errNoRedis.Error() || c.Commands != nil {
		t.Errorf("without commands: %+v", c)
	}
}

func TestPerOp(t *testing.T) {
	before := cpuReading{feedd: 1, redis: redisinfo.CPU{Sys: 1, User: 1}}
	after := cpuReading{feedd: 1.5, redis: redisinfo.CPU{Sys: 1.1, User: 1.1}}
	f, r := perOp(before, after, 100)
	if f == nil || r == nil || *f != 5 || *r < 1.999 || *r > 2.001 {
		t.Errorf("perOp = %v, %v; want 5, 2", f, r)
	}
	if f, r := perOp(before, after, 0); f != nil || r != nil {
		t.Errorf("perOp of no operation = %v, %v; want none", f, r)
	}
	after.redisErr = errNoRedis
	if f, r := perOp(before, after, 100); f == nil || r != nil {
		t.Errorf("perOp without Redis = %v, %v; want feedd's only", f, r)
	}
}
