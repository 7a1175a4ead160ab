package roundtrip

import (
	"context"
	"time"

	"github.com/redis/rueidis"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/feedd/feedd/internal/tracing"
)

// A call's span is made once the call has returned, backdated to its
// start: only then is it known whether the call reached Redis at all (a
// client-side cache hit does not, and gets no span), so a traced request
// has one Redis span per call that went to Redis. Calls outside a span
// that records (every call when tracing is off, the workers' polling)
// cost one context look-up.

// spanStart returns the time a call starts, or the zero time when ctx has
// no span that records.
func spanStart(ctx context.Context) time.Time {
	if !trace.SpanFromContext(ctx).IsRecording() {
		return time.Time{}
	}
	return time.Now()
}

// opOf is the name of the command whose arguments are args, read before
// the call (rueidis recycles a command once it has been sent: reading it
// after is a data race), when a span is being recorded (start not zero).
func opOf(start time.Time, args []string) string {
	if start.IsZero() || len(args) == 0 {
		return "redis"
	}
	return args[0]
}

// endSpan records, as a child of ctx's span, the call that started at
// start (see spanStart) and sent n commands, the first of which (op,
// from opOf) names it, as OpenTelemetry's database conventions do. rs are
// its replies: the first error among them marks the span. Callers check
// start.IsZero() first, so an untraced call builds nothing.
func endSpan(ctx context.Context, start time.Time, op string, n int, rs ...rueidis.RedisResult) {
	attrs := []attribute.KeyValue{attribute.String("db.system.name", "redis"), attribute.String("db.operation.name", op)}
	if n > 1 {
		attrs = append(attrs, attribute.Int("db.operation.batch.size", n))
	}
	_, span := tracing.Tracer().Start(ctx, op, trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	for _, r := range rs {
		if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
			break
		}
	}
	span.End()
}
