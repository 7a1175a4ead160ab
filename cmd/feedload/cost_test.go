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
// cpu, encoded in format.
func exposition(t *testing.T, cpu float64, format expfmt.Format) []byte {
	t.Helper()
	reg := prometheus.NewRegistry()
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "process_cpu_seconds_total", Help: "CPU."})
	c.Add(cpu)
	reg.MustRegister(c, prometheus.NewGauge(prometheus.GaugeOpts{Name: "feedd_other", Help: "Another."}))
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

func TestCPUSeconds(t *testing.T) {
	for _, format := range []expfmt.Format{expfmt.NewFormat(expfmt.TypeTextPlain), expfmt.NewFormat(expfmt.TypeProtoDelim)} {
		got, err := cpuSeconds(bytes.NewReader(exposition(t, 12.5, format)), format)
		if err != nil || got != 12.5 {
			t.Errorf("%s: cpuSeconds = %v, %v; want 12.5", format, got, err)
		}
	}
	text := expfmt.NewFormat(expfmt.TypeTextPlain)
	for _, tc := range []struct{ name, body, wantErr string }{
		{"no such metric", "# TYPE up gauge\nup 1\n", "no process_cpu_seconds_total"},
		{"not an exposition", "<html>not metrics</html>\n", "parse the exposition"},
		{"untyped", "process_cpu_seconds_total 3.25\n", ""},
	} {
		got, err := cpuSeconds(strings.NewReader(tc.body), text)
		switch {
		case tc.wantErr == "" && (err != nil || got != 3.25):
			t.Errorf("%s: %v, %v; want 3.25", tc.name, got, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: %v, %v; want an error with %q", tc.name, got, err, tc.wantErr)
		}
	}
}

// TestScrapeCPU scrapes a /metrics served as feedd serves it (promhttp over
// a registry with the process collector): this process's CPU, which grows.
func TestScrapeCPU(t *testing.T) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx := context.Background()
	first, err := scrapeCPU(ctx, srv.Client(), srv.URL+"/metrics")
	if err != nil {
		t.Skipf("no process CPU on this platform: %v", err)
	}
	// Spin until the process's CPU time moves on (it counts in ticks).
	deadline := time.Now().Add(10 * time.Second)
	for n := 0; time.Now().Before(deadline); n++ {
		if n%1_000_000 == 0 {
			if now, err := scrapeCPU(ctx, srv.Client(), srv.URL+"/metrics"); err != nil || now > first {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
		}
	}
	t.Errorf("process_cpu_seconds_total stayed at %v over 10s of spinning", first)
}

func TestScrapeCPUStatus(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	defer srv.Close()
	if _, err := scrapeCPU(context.Background(), srv.Client(), srv.URL+"/metrics"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("scrape of a missing page: %v, want the status", err)
	}
}

func TestSpent(t *testing.T) {
	at := func(feedd, redis float64) cpuReading {
		return cpuReading{feedd: feedd, redis: redisinfo.CPU{Sys: redis / 2, User: redis / 2, MainSys: redis / 4, MainUser: redis / 4, Main: true}, masters: 3}
	}
	cmds := func(evalsha, get int64) redisinfo.Commands {
		return redisinfo.Commands{"evalsha": {Calls: evalsha, Usec: 100 * evalsha}, "get": {Calls: get, Usec: get}}
	}
	var s spent
	// Two phases of 50 operations: feedd spends 0.1 s and 0.2 s, Redis
	// 0.05 s and 0.1 s; 10 and 30 EVALSHA, 100 and 0 GET.
	s.add(at(1, 2), at(1.1, 2.05), cmds(5, 10), cmds(15, 110), nil)
	s.add(at(5, 3), at(5.2, 3.1), cmds(15, 110), cmds(45, 110), nil)
	c := s.cost(100, "http://x/metrics")
	if c.FeeddError != "" || c.RedisError != "" || c.CommandsError != "" || c.RedisMasters != 3 {
		t.Fatalf("cost %+v", c)
	}
	near := func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }
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
	s.add(failed, at(9.1, 9.1), cmds(45, 110), cmds(45, 110), nil)
	if c := s.cost(150, ""); c.FeeddError != "scrape: refused" || c.RedisError != "" {
		t.Errorf("after a failed scrape: %+v", c)
	}
	s.add(at(9, 9), at(9, 9), nil, nil, errNoRedis)
	if c := s.cost(150, ""); c.CommandsError != errNoRedis.Error() || c.Commands != nil {
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
