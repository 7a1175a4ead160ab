package main

import (
	"bytes"
	"context"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/feedd/feedd/internal/tracing"
	"github.com/feedd/feedd/redisstore/storetest"
)

// A W3C traceparent as a caller would send it, and the ids it carries.
const (
	testTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	testTraceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	testSpanID      = "00f067aa0ba902b7"
)

// TestTracingExportsOnExit: with OTEL_EXPORTER_OTLP_ENDPOINT set, serve and
// worker install a tracer provider and the W3C propagator before they
// start, under their own service name, and flush on exit: a span started
// under an incoming traceparent (as the server's per-operation span will
// be) reaches an OTLP/HTTP collector, in the caller's trace, by the time
// the command has returned.
func TestTracingExportsOnExit(t *testing.T) {
	serve := []string{"serve", "--addr", "127.0.0.1:0", "--demo=false", "--log-level", "error"}
	t.Run("serve", func(t *testing.T) {
		t.Setenv("FEED_REDIS_URL", "")
		checkTracedExit(t, nil, "feedd", serve...)
	})
	t.Run("OTEL_SERVICE_NAME", func(t *testing.T) {
		t.Setenv("FEED_REDIS_URL", "")
		checkTracedExit(t, map[string]string{"OTEL_SERVICE_NAME": "feedd-canary"}, "feedd-canary", serve...)
	})
	t.Run("worker", func(t *testing.T) {
		storetest.RequireReal(t)
		st := storetest.New(t) // the worker's keys go under the test's prefix, deleted after it
		checkTracedExit(t, nil, "feedd-worker", "worker", "--redis", os.Getenv(storetest.Env), "--key-prefix", st.Prefix,
			"--ops-addr", "127.0.0.1:0", "--log-level", "error")
	})
}

// checkTracedExit runs the command args with env, exporting to a collector
// of its own, and checks the exported probe span carries service.
func checkTracedExit(t *testing.T, env map[string]string, service string, args ...string) {
	t.Helper()
	col := startCollector(t)
	all := map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": col.url}
	maps.Copy(all, env)
	otelEnv(t, all)
	listening := make(chan struct{}, 2)
	o := cmdOptions{stdout: io.Discard, listening: func(string, net.Addr) { listening <- struct{}{} }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	returned := make(chan error, 1)
	go func() { returned <- run(ctx, args, o) }()
	select {
	case <-listening: // tracing is set up before any listener opens
	case err := <-returned:
		t.Fatalf("%s returned before listening: %v", args[0], err)
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not start listening", args[0])
	}

	h := http.Header{}
	h.Set("traceparent", testTraceparent)
	pctx := otel.GetTextMapPropagator().Extract(context.Background(), propagation.HeaderCarrier(h))
	_, span := tracing.Tracer().Start(pctx, "probe")
	span.End()

	cancel() // SIGTERM
	select {
	case err := <-returned:
		if err != nil {
			t.Fatalf("%s: %v", args[0], err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s did not return", args[0])
	}
	col.check(t, service)
}

// collector is an OTLP/HTTP receiver keeping what it was sent.
type collector struct {
	url  string
	mu   sync.Mutex
	reqs []*coltracepb.ExportTraceServiceRequest
	bad  []string // requests that were not an OTLP/HTTP protobuf export
}

func startCollector(t *testing.T) *collector {
	t.Helper()
	c := &collector{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		req := &coltracepb.ExportTraceServiceRequest{}
		c.mu.Lock()
		defer c.mu.Unlock()
		if r.Method != http.MethodPost || r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/x-protobuf" ||
			err != nil || proto.Unmarshal(body, req) != nil {
			c.bad = append(c.bad, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type"))
			http.Error(w, "not an OTLP/HTTP protobuf trace export", http.StatusBadRequest)
			return
		}
		c.reqs = append(c.reqs, req)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(srv.Close)
	c.url = srv.URL
	return c
}

// check: the collector got only OTLP exports, among them the probe span,
// child of the traceparent's span in its trace, from service.
func (c *collector) check(t *testing.T, service string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.bad) > 0 {
		t.Errorf("collector got requests that are not OTLP/HTTP protobuf exports: %q", c.bad)
	}
	var found bool
	for _, req := range c.reqs {
		for _, rs := range req.ResourceSpans {
			var name string
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					name = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					if s.Name != "probe" {
						continue
					}
					found = true
					if name != service || ss.GetScope().GetName() != tracing.ScopeName ||
						trace.TraceID(s.TraceId).String() != testTraceID || trace.SpanID(s.ParentSpanId).String() != testSpanID {
						t.Errorf("probe span from service %q, scope %q, trace %x, parent %x; want %q, %q, %s, %s",
							name, ss.GetScope().GetName(), s.TraceId, s.ParentSpanId, service, tracing.ScopeName, testTraceID, testSpanID)
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("collector got %d exports, none with the probe span", len(c.reqs))
	}
}

// otelEnv clears the OTEL_* variables feedd's setup reads, sets env, and
// puts the global tracer provider and propagator back to no-ops after the
// test.
func otelEnv(t *testing.T, env map[string]string) {
	t.Helper()
	for _, k := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES",
		"OTEL_TRACES_SAMPLER", "OTEL_TRACES_SAMPLER_ARG",
		"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
		"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
		"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
		"OTEL_EXPORTER_OTLP_COMPRESSION", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION"} {
		t.Setenv(k, env[k])
	}
	t.Cleanup(func() {
		otel.SetTracerProvider(noop.NewTracerProvider())
		otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator())
	})
}

// TestTracingRefusesABadEnvironment: serve and worker stop at start, with
// an error naming what is wrong, when OTEL_* asks for an exporter or a
// protocol feedd does not ship.
func TestTracingRefusesABadEnvironment(t *testing.T) {
	t.Setenv("FEED_REDIS_URL", "")
	for _, c := range []struct {
		env  map[string]string
		want []string
	}{
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, []string{"OTEL_TRACES_EXPORTER", "zipkin", "OTLP"}},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"},
			[]string{"OTEL_EXPORTER_OTLP_PROTOCOL", "http/json", "grpc or http/protobuf"}},
	} {
		otelEnv(t, c.env)
		// The worker, without --redis, would otherwise fail for that; serve
		// would start, and is stopped as soon as it listens.
		for _, args := range [][]string{{"serve", "--addr", "127.0.0.1:0", "--demo=false"}, {"worker"}} {
			ctx, cancel := context.WithCancel(context.Background())
			o := cmdOptions{stdout: io.Discard, listening: func(string, net.Addr) { cancel() }}
			err := run(ctx, args, o)
			cancel()
			if err == nil {
				t.Errorf("%s with %v started", args[0], c.env)
				continue
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s with %v: %q does not name %q", args[0], c.env, err, w)
				}
			}
		}
	}
}

// TestLoggerAddsTraceIDs: the logger serve and worker install writes the
// trace and span ids of a traced context in both formats, and none
// without one.
func TestLoggerAddsTraceIDs(t *testing.T) {
	tid, _ := trace.TraceIDFromHex(testTraceID)
	sid, _ := trace.SpanIDFromHex(testSpanID)
	ctx := trace.ContextWithSpanContext(context.Background(),
		trace.NewSpanContext(trace.SpanContextConfig{TraceID: tid, SpanID: sid, TraceFlags: trace.FlagsSampled}))
	for format, want := range map[string][]string{
		"text": {"trace_id=" + testTraceID, "span_id=" + testSpanID},
		"json": {`"trace_id":"` + testTraceID + `"`, `"span_id":"` + testSpanID + `"`},
	} {
		var buf bytes.Buffer
		log, err := newLogger(&buf, format, "info")
		if err != nil {
			t.Fatal(err)
		}
		log.InfoContext(ctx, "traced")
		for _, w := range want {
			if !strings.Contains(buf.String(), w) {
				t.Errorf("%s: %q lacks %s", format, buf.String(), w)
			}
		}
		buf.Reset()
		log.InfoContext(context.Background(), "untraced")
		if strings.Contains(buf.String(), "trace_id") {
			t.Errorf("%s: untraced line %q carries a trace id", format, buf.String())
		}
	}
}
