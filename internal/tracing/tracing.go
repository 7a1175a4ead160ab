// Package tracing sets feedd up for OpenTelemetry tracing. It is off unless
// the standard OTEL_* environment asks for it; then spans go out over OTLP,
// with the endpoint, headers, protocol, sampler and resource that the same
// variables name (the SDK and the OTLP exporters read them themselves).
//
// Off, every span is a no-op: the instrumentation below costs a context
// lookup, no allocation that a request would notice.
package tracing

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of every span feedd starts.
const ScopeName = "github.com/feedd/feedd"

// Tracer is feedd's tracer from the global provider: a no-op one until
// Setup installs a real provider (or a test installs its own).
func Tracer() trace.Tracer { return otel.Tracer(ScopeName) }

// Enabled reports whether the environment asks for traces: an OTLP
// endpoint, or OTEL_TRACES_EXPORTER=otlp, and not OTEL_SDK_DISABLED=true
// nor OTEL_TRACES_EXPORTER=none. Unlike the SDK's own default (export to
// localhost:4318 whenever a provider exists), a feedd with no OTEL_*
// variables set exports nothing and dials nobody.
func Enabled(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(getenv("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "otlp":
		return true
	case "":
	default:
		return false // not one we ship; Setup says so
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// Setup installs a tracer provider exporting over OTLP, and the W3C trace
// context propagator, when the environment asks for traces (see Enabled).
// service is the default service.name; OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES override it. The returned shutdown flushes the
// spans still buffered; it is a no-op when tracing is off.
func Setup(ctx context.Context, service string) (shutdown func(context.Context) error, err error) {
	noop := func(context.Context) error { return nil }
	if exp := strings.ToLower(os.Getenv("OTEL_TRACES_EXPORTER")); exp != "" && exp != "none" && exp != "otlp" {
		return noop, fmt.Errorf("tracing: OTEL_TRACES_EXPORTER=%q: feedd exports traces over OTLP only (otlp or none)", exp)
	}
	if !Enabled(os.Getenv) {
		return noop, nil
	}
	exp, err := newExporter(ctx)
	if err != nil {
		return noop, fmt.Errorf("tracing: start the OTLP exporter: %w", err)
	}
	// Later options win: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
	// override the default service name.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(),
		resource.WithAttributes(attribute.String("service.name", service)),
		resource.WithFromEnv())
	if err != nil {
		return noop, fmt.Errorf("tracing: describe the resource: %w", err)
	}
	// The SDK reports export failures through its error handler, by default
	// the standard log package at no level; a warning says what they are.
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
		slog.Warn("tracing: export failed", "err", err)
	}))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	otel.SetTracerProvider(tp)
	otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{}))
	return tp.Shutdown, nil
}

// newExporter picks the OTLP transport the environment names
// (OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL):
// grpc, or http/protobuf, the specification's default.
func newExporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	switch proto {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	default:
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q: use grpc or http/protobuf", proto)
	}
}
