package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/feedd/feedd/roundtrip"
	"github.com/feedd/feedd/server/reqinfo"
)

// DefaultRequestTimeout bounds a GraphQL request when Config.RequestTimeout
// is zero.
const DefaultRequestTimeout = 5 * time.Second

// opRecord is what one /query request learned about the operation it ran,
// filled in by the operation middleware (noteOperation) and read by
// observeQuery for the access log line and the metrics.
type opRecord struct {
	mu           sync.Mutex
	typ, name    string
	trips        int
	sawOperation bool
}

type opRecordKey struct{}

// noteOperation records an operation's type, name and round trips on the
// request's opRecord, when it has one.
func noteOperation(ctx context.Context, typ, name string, trips int) {
	rec, _ := ctx.Value(opRecordKey{}).(*opRecord)
	if rec == nil {
		return
	}
	rec.mu.Lock()
	rec.sawOperation = true
	rec.typ, rec.name = typ, name
	rec.trips += trips
	rec.mu.Unlock()
}

// observeQuery wraps /query: it bounds the request with the request
// timeout, so a silent Redis yields UNAVAILABLE rather than a hung request,
// and once answered, records latency and error codes under the operation
// and writes one access log line.
func observeQuery(cfg Config, reg *Metrics, log *slog.Logger, next http.Handler) http.Handler {
	timeout := cfg.RequestTimeout
	if timeout <= 0 {
		timeout = DefaultRequestTimeout
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &opRecord{}
		// Round trips are counted from here, so every step of the request
		// (persisted query lookup, rate limit) is charged to its operation.
		ctx, _ := roundtrip.NewContext(context.WithValue(r.Context(), opRecordKey{}, rec))
		ctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		sw := &sniffWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r.WithContext(ctx))
		d := time.Since(start)
		codes := sw.codes()
		rec.mu.Lock()
		typ, name, trips := rec.typ, rec.name, rec.trips
		rec.mu.Unlock()
		reg.observeRequest(typ, name, d, codes)
		level := slog.LevelInfo
		if sw.status >= 500 {
			level = slog.LevelWarn
		}
		attrs := []slog.Attr{
			slog.String("request_id", reqinfo.Of(ctx).RequestID),
			slog.String("method", r.Method),
			slog.Int("status", sw.status),
			slog.String("type", typ),
			slog.String("operation", name),
			slog.Duration("duration", d),
			slog.Int("redis_round_trips", trips),
		}
		if v := reqinfo.Viewer(ctx); v != 0 {
			attrs = append(attrs, slog.String("viewer", strconv.FormatUint(v, 10)))
		}
		if len(codes) > 0 {
			attrs = append(attrs, slog.Any("error_codes", codes))
		}
		log.LogAttrs(ctx, level, "request", attrs...)
	})
}

// maxSniff bounds how much of an error response is kept to read its codes.
const maxSniff = 256 << 10

// sniffWriter passes the response through and keeps a copy of it when it
// carries errors: gqlgen writes "errors" first, and error responses written
// by ensureErrorCodes (4xx, 5xx) are small.
type sniffWriter struct {
	http.ResponseWriter
	status  int
	decided bool
	keep    bool
	buf     bytes.Buffer
}

func (s *sniffWriter) WriteHeader(status int) {
	if s.status == 0 {
		s.status = status
	}
	s.ResponseWriter.WriteHeader(status)
}

func (s *sniffWriter) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if !s.decided && len(b) > 0 {
		s.decided = true
		s.keep = s.status >= 400 || bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte(`{"errors"`))
	}
	if s.keep && s.buf.Len() < maxSniff {
		s.buf.Write(b[:min(len(b), maxSniff-s.buf.Len())])
	}
	return s.ResponseWriter.Write(b)
}

func (s *sniffWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (s *sniffWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// codes returns the extensions.code of every error in the kept response,
// reading only as far as the "errors" member.
func (s *sniffWriter) codes() []string {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	if !s.keep {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(s.buf.Bytes()))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil
		}
		if k != "errors" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		var errs []struct {
			Extensions struct {
				Code string `json:"code"`
			} `json:"extensions"`
		}
		if dec.Decode(&errs) != nil {
			return nil
		}
		out := make([]string, 0, len(errs))
		for _, e := range errs {
			c := e.Extensions.Code
			if c == "" {
				c = "NONE"
			}
			out = append(out, c)
		}
		return out
	}
	return nil
}

// OpsHandler serves only /healthz, /readyz and /metrics, for processes
// that run fan-out workers without serving GraphQL (`feedd worker`).
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
	return withFacts(cfg, mux)
}
