package tracing

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

func TestEnabled(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://127.0.0.1:4318/v1/traces"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://x"}, false},
		{map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_TRACES_EXPORTER": "otlp"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, false},
	} {
		if got := Enabled(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("Enabled(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

func TestSetupRefusesAnExporterItDoesNotShip(t *testing.T) {
	t.Setenv("OTEL_TRACES_EXPORTER", "zipkin")
	if _, err := Setup(context.Background(), "feedd"); err == nil || !strings.Contains(err.Error(), "OTLP only") {
		t.Fatalf("Setup with OTEL_TRACES_EXPORTER=zipkin: %v, want a refusal naming OTLP", err)
	}
}

func TestLogHandlerAddsTheSpansIDs(t *testing.T) {
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(tracetest.NewInMemoryExporter()))
	ctx, span := tp.Tracer("test").Start(context.Background(), "op")
	defer span.End()
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewJSONHandler(&buf, nil))).With("k", "v")
	log.InfoContext(ctx, "traced")
	log.InfoContext(context.Background(), "untraced")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("got %d log lines, want 2: %s", len(lines), buf.String())
	}
	sc := span.SpanContext()
	for _, want := range []string{`"trace_id":"` + sc.TraceID().String() + `"`, `"span_id":"` + sc.SpanID().String() + `"`, `"k":"v"`} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("traced line %s lacks %s", lines[0], want)
		}
	}
	if strings.Contains(lines[1], "trace_id") {
		t.Errorf("untraced line carries a trace id: %s", lines[1])
	}
}
