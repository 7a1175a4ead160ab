package server

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/internal/tracing"
	"github.com/feedd/feedd/reqinfo"
)

// startOperationSpan starts the span of one /query request, continuing
// the caller's trace when it sends a W3C traceparent. With tracing off
// (internal/tracing) the tracer and the propagator are no-ops.
func startOperationSpan(r *http.Request) (context.Context, trace.Span) {
	ctx := otel.GetTextMapPropagator().Extract(r.Context(), propagation.HeaderCarrier(r.Header))
	return tracing.Tracer().Start(ctx, "graphql", trace.WithSpanKind(trace.SpanKindServer))
}

// endOperationSpan names the span after its operation ("query
// FollowingFeed", as OpenTelemetry's GraphQL conventions do) and records
// what the request cost and how it ended: the first error code is the
// span's feedd.error_code, and a server-side failure (INTERNAL,
// UNAVAILABLE) marks it as an error.
func endOperationSpan(span trace.Span, status int, op reqinfo.Operation, errCodes []string) {
	if !span.IsRecording() {
		return
	}
	if op.Type != "" {
		span.SetName(op.Type + " " + op.Name)
	}
	span.SetAttributes(
		attribute.String("graphql.operation.type", op.Type),
		attribute.String("graphql.operation.name", op.Name),
		attribute.Int("feedd.cost", op.Cost),
		attribute.Int("feedd.redis.round_trips", op.Trips),
		attribute.Int("http.response.status_code", status),
	)
	if len(errCodes) == 0 {
		return
	}
	span.SetAttributes(attribute.String("feedd.error_code", errCodes[0]), attribute.StringSlice("feedd.error_codes", errCodes))
	for _, c := range errCodes {
		if c == string(apierr.Internal) || c == string(apierr.Unavailable) {
			span.SetStatus(codes.Error, c)
			return
		}
	}
}
