package server

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/reqinfo"
	"github.com/feedd/feedd/roundtrip"
)

// DefaultRequestTimeout bounds a GraphQL request when Config.RequestTimeout
// is zero.
const DefaultRequestTimeout = 5 * time.Second

// queryPath is where GraphQL is served.
const queryPath = "/query"

// observeQuery bounds each /query request with the request timeout, so a
// silent Redis yields UNAVAILABLE rather than a hung request, and once it
// is answered, records latency and error codes under the operation and
// writes one access log line. The codes are those the steps that decided
// the answer reported (reqinfo.Outcome), not read back from the body.
// Other paths pass through untouched.
func observeQuery(cfg Config, reg *Metrics, log *slog.Logger, next http.Handler) http.Handler {
	timeout := requestTimeout(cfg)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != queryPath {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		// The operation's span starts here, so every step of the request
		// (persisted query lookup, rate limit) and its Redis calls are its
		// children; it is named once the operation is known.
		ctx, span := startOperationSpan(r)
		defer span.End()
		// Round trips are counted from here too.
		ctx, _ = roundtrip.NewContext(ctx)
		var stream *streamInfo
		if isStreamRequest(r) {
			// A stream lasts as long as its client wants: no request
			// timeout (each of its queries and mutations gets one,
			// perOperation).
			stream = &streamInfo{}
			ctx = context.WithValue(ctx, streamKey{}, stream)
		} else {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			defer cancel()
		}
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(ctx))
		d := time.Since(start)
		if sw.status == 0 { // nothing written: net/http answers 200
			sw.status = http.StatusOK
		}
		out := reqinfo.OutcomeOf(ctx)
		codes, op := out.Codes(), out.Operation()
		switch {
		case stream.Transport() != "":
			// Its length is the client's choice, not a latency.
			reg.observeErrors(op.Type, op.Name, codes)
		case stream != nil:
			reg.observeRequest(op.Type, op.Name, d, codes)
			for _, c := range codes { // refused before it started
				reg.streamRefused(streamTransport(r), apierr.Code(c))
			}
		default:
			reg.observeRequest(op.Type, op.Name, d, codes)
		}
		endOperationSpan(span, sw.status, op, codes)
		logRequest(ctx, log, r, sw.status, op, d, codes)
	})
}

// logRequest writes a request's access log line.
func logRequest(ctx context.Context, log *slog.Logger, r *http.Request, status int, op reqinfo.Operation, d time.Duration, codes []string) {
	level := slog.LevelInfo
	if status >= 500 {
		level = slog.LevelWarn
	}
	attrs := []slog.Attr{
		slog.String("request_id", reqinfo.Of(ctx).RequestID),
		slog.String("method", r.Method),
		slog.Int("status", status),
		slog.String("type", op.Type),
		slog.String("operation", op.Name),
		slog.Duration("duration", d),
		slog.Int("redis_round_trips", op.Trips),
	}
	if t := streamOf(ctx).Transport(); t != "" {
		attrs = append(attrs, slog.String("transport", t))
	}
	if v := reqinfo.Viewer(ctx); v != 0 {
		attrs = append(attrs, slog.String("viewer", strconv.FormatUint(v, 10)))
	}
	if len(codes) > 0 {
		attrs = append(attrs, slog.Any("error_codes", codes))
	}
	log.LogAttrs(ctx, level, "request", attrs...)
}

// requestTimeout is cfg's request timeout, or the default.
func requestTimeout(cfg Config) time.Duration {
	if cfg.RequestTimeout > 0 {
		return cfg.RequestTimeout
	}
	return DefaultRequestTimeout
}

// statusWriter passes the response through and keeps its status, for the
// access log.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (s *statusWriter) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush and FlushError let a stream's flushes, and their errors, through
// (http.ResponseController prefers FlushError).
func (s *statusWriter) Flush() { _ = s.FlushError() }

func (s *statusWriter) FlushError() error {
	return http.NewResponseController(s.ResponseWriter).Flush()
}

func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// OpsHandler serves the operations endpoints, on a listener apart from
// the public one (--ops-addr of `feedd serve` and `feedd worker`):
// /healthz, /readyz, /metrics, and Go's profiles under /debug/pprof/.
// Give it the Metrics of the process's public handler, if any, so both
// /metrics serve the same registry.
func OpsHandler(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	mux := http.NewServeMux()
	mux.Handle("GET /healthz", healthHandler())
	mux.Handle("GET /readyz", readyHandler(cfg))
	mux.Handle("GET /metrics", metricsHandler(cfg, cfg.Metrics))
	handlePprof(mux)
	return withRequestInfo(cfg, mux)
}
