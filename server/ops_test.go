package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// syncBuffer is a log destination tests read while requests write to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// opsEnv is an env whose server is built from cfg (Service, Metrics and
// Verifier filled in), logging JSON to its log buffer.
type opsEnv struct {
	*env
	log    *syncBuffer
	prefix string
}

func newOpsEnv(t *testing.T, cfg Config) *opsEnv {
	t.Helper()
	st := storetest.New(t)
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{Prefix: st.Prefix, StreamShards: 1})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	cfg.Service = svc
	cfg.DevAuth = true
	cfg.Verifier = &auth.Verifier{HS256Secret: testSecret}
	cfg.Metrics = NewMetrics()
	cfg.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	return &opsEnv{env: &env{t: t, svc: svc, srv: srv, metrics: cfg.Metrics}, log: logs, prefix: st.Prefix}
}

func (e *opsEnv) get(path string) (int, string) {
	e.t.Helper()
	res, err := http.Get(e.srv.URL + path)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// scrape reads /metrics as Prometheus would.
func (e *opsEnv) scrape() families {
	e.t.Helper()
	res, err := http.Get(e.srv.URL + "/metrics")
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		e.t.Fatalf("/metrics: %d %s", res.StatusCode, b)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-store" {
		e.t.Errorf("/metrics Cache-Control %q, want no-store", cc)
	}
	return parseExposition(e.t, string(b))
}

// logLines waits until the log holds n request lines, and returns them.
func (e *opsEnv) logLines(n int) []map[string]any {
	e.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var lines []map[string]any
		for _, l := range strings.Split(e.log.String(), "\n") {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" {
				lines = append(lines, m)
			}
		}
		if len(lines) >= n || time.Now().After(deadline) {
			if len(lines) != n {
				e.t.Fatalf("%d request log lines, want %d:\n%s", len(lines), n, e.log.String())
			}
			return lines
		}
		time.Sleep(5 * time.Millisecond) // polling, under a deadline
	}
}

func TestMetricsAndAccessLog(t *testing.T) {
	e := newOpsEnv(t, Config{})
	e.users("ann", "bob")
	e.do(1, `query Who { viewer { handle } }`, nil).as(t, &struct{}{})
	e.do(1, `query Who { viewer { handle } }`, nil).as(t, &struct{}{})
	mustCode(t, "anonymous viewer", e.do(0, `query Who { viewer { handle } }`, nil), "UNAUTHENTICATED")
	mustCode(t, "parse error", e.do(0, `{ viewer {`, nil), "BAD_USER_INPUT")

	lines := e.logLines(4)
	first := lines[0]
	if first["operation"] != "Who" || first["type"] != "query" || first["viewer"] != "1" ||
		first["request_id"] == "" || first["redis_round_trips"].(float64) < 1 || first["duration"] == nil {
		t.Errorf("access log line: %v", first)
	}
	if _, ok := first["error_codes"]; ok {
		t.Errorf("error codes on a successful request: %v", first)
	}
	if got := lines[2]["error_codes"]; len(got.([]any)) != 1 || got.([]any)[0] != "UNAUTHENTICATED" {
		t.Errorf("anonymous request: error_codes %v", got)
	}
	if _, ok := lines[2]["viewer"]; ok {
		t.Errorf("anonymous request logged a viewer: %v", lines[2])
	}
	if got := lines[3]["error_codes"]; got == nil || got.([]any)[0] != "BAD_USER_INPUT" {
		t.Errorf("parse error: %v", lines[3])
	}

	s := e.scrape()
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"feedd_graphql_request_duration_seconds_count", []string{"type", "query", "operation", "Who"}, 3},
		{"feedd_graphql_redis_round_trips_count", []string{"type", "query", "operation", "Who"}, 3},
		{"feedd_graphql_errors_total", []string{"type", "query", "operation", "Who", "code", "UNAUTHENTICATED"}, 1},
		{"feedd_graphql_errors_total", []string{"type", "", "operation", "", "code", "BAD_USER_INPUT"}, 1},
		{"feedd_graphql_request_duration_seconds_count", []string{"type", "", "operation", ""}, 1},
		{"feedd_redis_up", nil, 1},
		{"feedd_fanout_backlog", nil, 0},
		{"feedd_safety_cleanup_backlog", nil, 0},
		{"feedd_fanout_pending", []string{"stream", "events"}, 0},
		{"feedd_fanout_pending", []string{"stream", "tasks"}, 0},
		{"feedd_fanout_dead_letters", nil, 0},
		{"feedd_fanout_dead_lettered_total", nil, 0},
	} {
		if got, ok := s.value(c.name, c.labels...); !ok || got != c.want {
			t.Errorf("%s%q = %v (found %v), want %v", c.name, c.labels, got, ok, c.want)
		}
	}
	for _, name := range []string{"feedd_redis_cache_hits_total", "feedd_redis_cache_misses_total", "feedd_fanout_processed_total"} {
		if _, ok := s.value(name); !ok {
			t.Errorf("no %s", name)
		}
	}
	for _, kind := range []string{"events", "tasks", "inbox_writes", "journal_repairs", "readers_slept", "readers_woken"} {
		if _, ok := s.value("feedd_fanout_processed_total", "kind", kind); !ok {
			t.Errorf("no feedd_fanout_processed_total{kind=%q}", kind)
		}
	}
	// The Go runtime and process collectors.
	if n, ok := s.value("go_goroutines"); !ok || n < 1 {
		t.Errorf("go_goroutines = %v (found %v)", n, ok)
	}
	if n, ok := s.value("process_resident_memory_bytes"); !ok || n <= 0 {
		t.Errorf("process_resident_memory_bytes = %v (found %v)", n, ok)
	}
	if testing.Verbose() {
		_, text := e.get("/metrics")
		for _, l := range strings.Split(text, "\n") {
			if strings.HasPrefix(l, "go_goroutines") || strings.HasPrefix(l, "process_resident_memory_bytes") ||
				strings.HasPrefix(l, "feedd_redis_up") || strings.HasPrefix(l, "feedd_graphql_request_duration_seconds_count") {
				t.Logf("/metrics: %s", l)
			}
		}
	}
}

// TestReadyzBacklogAndPending: /readyz reports the fan-out backlog and
// stays 200 however large it is (TestReadyzIgnoresBacklogOnEveryReplica
// takes it past the old bound); /metrics shows it, with the entries a
// worker holds unacknowledged.
func TestReadyzBacklogAndPending(t *testing.T) {
	e := newOpsEnv(t, Config{})
	e.users("ann")
	if status, body := e.get("/readyz"); status != http.StatusOK || !strings.Contains(body, `"ready":true`) {
		t.Fatalf("readyz with no backlog: %d %s", status, body)
	}
	// No workers run here: the posts' events stay queued.
	ctx := context.Background()
	for range 3 {
		if _, err := e.svc.Publish(ctx, 1, "hello"); err != nil {
			t.Fatal(err)
		}
	}
	status, body := e.get("/readyz")
	var a struct {
		Ready   bool   `json:"ready"`
		Reason  string `json:"reason"`
		Backlog int64  `json:"backlog"`
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil || status != http.StatusOK || !a.Ready ||
		a.Backlog < 3 || a.Reason != "" {
		t.Fatalf("readyz with a backlog: %d %s", status, body)
	}
	if status, _ := e.get("/healthz"); status != http.StatusOK {
		t.Errorf("healthz: %d", status)
	}

	// A worker that took an event and has not acknowledged it: pending.
	c := e.svc.Client()
	key := e.prefix + "fo:{s0}:ev" // the one shard's events stream
	_ = c.Do(ctx, c.B().XgroupCreate().Key(key).Group("dispatch").Id("0").Mkstream().Build()).Error()
	if err := c.Do(ctx, c.B().Xreadgroup().Group("dispatch", "test").Count(2).Streams().Key(key).Id(">").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	s := e.scrape()
	if got, _ := s.value("feedd_fanout_pending", "stream", "events"); got != 2 {
		t.Errorf("pending events = %v, want 2", got)
	}
	if got, _ := s.value("feedd_fanout_backlog"); got < 3 {
		t.Errorf("backlog = %v, want at least 3", got)
	}
	if got, _ := s.value("feedd_fanout_stream_backlog", "stream", "events", "shard", "0"); got < 3 {
		t.Errorf("events stream backlog = %v, want at least 3", got)
	}
	if got, ok := s.value("feedd_fanout_oldest_pending_seconds", "stream", "events"); !ok || got < 0 || got > 60 {
		t.Errorf("oldest pending = %v", got)
	}
}

// TestSafetyCleanupBacklog: a queued safety clean-up job shows in
// feedd_safety_cleanup_backlog, read at scrape time, and not in the
// fan-out backlog (of /readyz and feedd_fanout_backlog); once a worker has
// run it the gauge drains to 0.
func TestSafetyCleanupBacklog(t *testing.T) {
	e := newOpsEnv(t, Config{})
	ctx := context.Background()
	c := e.svc.Client()
	key := e.prefix + "fo:{s0}:cl" // the one shard's clean-up stream
	for _, author := range []string{"2", "3"} {
		if err := c.Do(ctx, c.B().Xadd().Key(key).Id("*").FieldValue().FieldValue("v", "1").FieldValue("a", author).
			FieldValue("t", "hide").Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	s := e.scrape()
	if got, ok := s.value("feedd_safety_cleanup_backlog"); !ok || got != 2 {
		t.Fatalf("clean-up backlog = %v (found %v), want 2", got, ok)
	}
	if got, ok := s.value("feedd_fanout_backlog"); !ok || got != 0 {
		t.Errorf("fan-out backlog with clean-ups queued = %v (found %v), want 0", got, ok)
	}
	if status, body := e.get("/readyz"); status != http.StatusOK || !strings.Contains(body, `"backlog":0`) {
		t.Errorf("readyz with clean-ups queued: %d %s", status, body)
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = e.svc.RunWorkers(wctx, feedcore.WorkerOptions{Block: 50 * time.Millisecond})
	}()
	t.Cleanup(func() { cancel(); <-done })
	dctx, dcancel := context.WithTimeout(ctx, time.Minute)
	defer dcancel()
	if err := e.svc.Drain(dctx); err != nil {
		t.Fatal(err)
	}
	if got, ok := e.scrape().value("feedd_safety_cleanup_backlog"); !ok || got != 0 {
		t.Fatalf("clean-up backlog after draining = %v (found %v), want 0", got, ok)
	}
}
