package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/feedd/feedd/internal/tracing"
)

// traceOn installs a tracer provider that keeps spans in memory, the W3C
// propagator, and a JSON logger that adds trace ids, for one test.
func traceOn(t *testing.T) (*tracetest.InMemoryExporter, *bytes.Buffer) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	prevTP, prevProp, prevLog := otel.GetTracerProvider(), otel.GetTextMapPropagator(), slog.Default()
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.TraceContext{})
	var logs bytes.Buffer
	slog.SetDefault(slog.New(tracing.LogHandler(slog.NewJSONHandler(&logs, nil))))
	t.Cleanup(func() {
		_ = tp.Shutdown(context.Background())
		otel.SetTracerProvider(prevTP)
		otel.SetTextMapPropagator(prevProp)
		slog.SetDefault(prevLog)
	})
	return exp, &logs
}

const (
	callerTrace = "0af7651916cd43dd8448eb211c80319c"
	callerSpan  = "b7ad6b7169203331"
)

func attrsOf(s tracetest.SpanStub) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestOperationSpan: a request with a traceparent gets one span named
// after its operation, a child of the caller's span, with its cost, round
// trips and error code, and a child span for each Redis call; its access
// log line carries the span's ids.
func TestOperationSpan(t *testing.T) {
	exp, logs := traceOn(t)
	e := newEnv(t)
	e.users("ann", "bob")
	ctx := context.Background()
	if err := e.svc.Follow(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Publish(ctx, 2, "hello"); err != nil {
		t.Fatal(err)
	}
	exp.Reset()
	parent := "00-" + callerTrace + "-" + callerSpan + "-01"
	res := e.do(1, `query Feed { followingFeed(first: 5) { edges { node { id text } } } }`, nil, "traceparent", parent)
	if res.code() != "" {
		t.Fatalf("feed: %+v", res.Errors)
	}

	var op *tracetest.SpanStub
	var redis []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.SpanContext.TraceID().String() != callerTrace {
			continue
		}
		switch {
		case s.Name == "query Feed":
			if op != nil {
				t.Fatalf("two operation spans")
			}
			op = &s
		case attrsOf(s)["db.system.name"].AsString() == "redis":
			redis = append(redis, s)
		}
	}
	if op == nil {
		t.Fatalf("no span named \"query Feed\" in the caller's trace; spans: %v", exp.GetSpans())
	}
	if got := op.Parent.SpanID().String(); got != callerSpan {
		t.Errorf("operation span's parent is %s, want the caller's %s", got, callerSpan)
	}
	a := attrsOf(*op)
	if a["graphql.operation.name"].AsString() != "Feed" || a["graphql.operation.type"].AsString() != "query" {
		t.Errorf("operation attributes %v", a)
	}
	if a["feedd.cost"].AsInt64() < 1 {
		t.Errorf("feedd.cost = %d, want the operation's price", a["feedd.cost"].AsInt64())
	}
	trips := a["feedd.redis.round_trips"].AsInt64()
	if trips < 1 {
		t.Errorf("feedd.redis.round_trips = %d, want at least 1", trips)
	}
	if _, ok := a["feedd.error_code"]; ok {
		t.Errorf("a successful operation carries feedd.error_code %v", a["feedd.error_code"])
	}
	// Branches run in parallel are charged the longest one, so spans may
	// outnumber the round trips, never the reverse.
	if int64(len(redis)) < trips {
		t.Errorf("%d Redis spans for %d round trips", len(redis), trips)
	}
	t.Logf("%d round trips, %d Redis spans", trips, len(redis))
	for _, s := range redis {
		if s.Parent.SpanID() != op.SpanContext.SpanID() {
			t.Errorf("Redis span %q is not a child of the operation's span", s.Name)
		}
		if attrsOf(s)["db.operation.name"].AsString() == "" {
			t.Errorf("Redis span %q has no db.operation.name", s.Name)
		}
	}

	var line map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == "request" {
			line = m
		}
	}
	if line == nil {
		t.Fatalf("no access log line in %s", logs.String())
	}
	if line["trace_id"] != callerTrace || line["span_id"] != op.SpanContext.SpanID().String() {
		t.Errorf("access line has trace_id %v span_id %v, want the operation span's %s %s",
			line["trace_id"], line["span_id"], callerTrace, op.SpanContext.SpanID())
	}
}

// TestOperationSpanErrorCode: a refused operation's span says why.
func TestOperationSpanErrorCode(t *testing.T) {
	exp, _ := traceOn(t)
	e := newEnv(t)
	e.users("ann")
	res := e.do(1, `query Bad { followingFeed(first: 1000) { edges { cursor } } }`, nil)
	if res.code() != "BAD_USER_INPUT" {
		t.Fatalf("first: 1000 answered %+v, want BAD_USER_INPUT", res.Errors)
	}
	for _, s := range exp.GetSpans() {
		if s.Name == "query Bad" {
			if got := attrsOf(s)["feedd.error_code"].AsString(); got != "BAD_USER_INPUT" {
				t.Errorf("feedd.error_code = %q, want BAD_USER_INPUT", got)
			}
			return
		}
	}
	t.Fatalf("no span named \"query Bad\": %v", exp.GetSpans())
}
