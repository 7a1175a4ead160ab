package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/feedd/feedd/internal/tracing"
	"github.com/feedd/feedd/server"
)

// opsFlags are the operations flags serve and worker share: logging and
// the operations listener. Tracing, which the OTEL_* environment
// configures rather than flags, starts with them (start).
type opsFlags struct {
	fs                  *flag.FlagSet
	logFormat, logLevel string
	addr                string
}

// readyMaxBacklogFlag is the deprecated --ready-max-backlog: accepted, so
// that manifests which pass it still start, and otherwise ignored (start
// warns). The fan-out backlog no longer makes /readyz answer 503: it is one
// number shared by every replica, and a bound on it took them all out of
// rotation at once.
const readyMaxBacklogFlag = "ready-max-backlog"

func addOpsFlags(fs *flag.FlagSet) *opsFlags {
	o := &opsFlags{fs: fs}
	fs.StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&o.logLevel, "log-level", "info", "least severe log level written: debug, info, warn or error")
	fs.Int64(readyMaxBacklogFlag, 0, "deprecated, ignored: the fan-out backlog no longer affects /readyz; alert on the feedd_fanout_backlog metric instead")
	fs.StringVar(&o.addr, "ops-addr", "", "when set, serve /healthz, /readyz, /metrics and Go's profiles (/debug/pprof/) at this address, a listener apart from the public one; empty: off")
	return o
}

// start checks the flags, installs the logger they ask for, warns of the
// deprecated ones given (warnDeprecated), and starts tracing as the OTEL_*
// environment asks (tracing.Setup), under service as the default
// service.name. It comes before the store, the workers and the
// server: the tracer provider and the W3C propagator are in place before
// anything could start a span or read a traceparent header, and a refused
// environment stops the command before it dials anything. stop flushes
// the spans still buffered; the caller defers it first, so it runs last,
// after the server drained and the store closed.
func (o *opsFlags) start(ctx context.Context, service string) (stop func(), err error) {
	log, err := newLogger(os.Stderr, o.logFormat, o.logLevel)
	if err != nil {
		return nil, err
	}
	slog.SetDefault(log)
	o.warnDeprecated(log)
	shutdown, err := tracing.Setup(ctx, service)
	if err != nil {
		return nil, err
	}
	return func() {
		// The signal has ended ctx by now; the flush gets its own bound,
		// so an unreachable collector cannot hold the exit.
		sctx, cancel := context.WithTimeout(context.Background(), tracingFlushTimeout)
		defer cancel()
		if err := shutdown(sctx); err != nil {
			slog.Warn("tracing: spans not flushed on exit", "err", err)
		}
	}, nil
}

// warnDeprecated logs a warning, once, when --ready-max-backlog was given
// (on the command line or as FEED_READY_MAX_BACKLOG): it is accepted and
// does nothing.
func (o *opsFlags) warnDeprecated(log *slog.Logger) {
	o.fs.Visit(func(f *flag.Flag) {
		if f.Name == readyMaxBacklogFlag {
			log.Warn("--ready-max-backlog is deprecated and ignored: the fan-out backlog no longer affects /readyz; alert on the feedd_fanout_backlog metric instead",
				"ready_max_backlog", f.Value.String())
		}
	})
}

// tracingFlushTimeout bounds the export of the last spans on exit.
const tracingFlushTimeout = 5 * time.Second

// newLogger makes a logger writing format at level to w. Records logged
// with the context of a traced request carry its trace_id and span_id
// (tracing.LogHandler).
func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	o := &slog.HandlerOptions{Level: l}
	var h slog.Handler
	switch format {
	case "text":
		h = slog.NewTextHandler(w, o)
	case "json":
		h = slog.NewJSONHandler(w, o)
	default:
		return nil, fmt.Errorf("--log-format must be text or json, got %q", format)
	}
	return slog.New(tracing.LogHandler(h)), nil
}

// listen serves the operations endpoints (server.OpsHandler over cfg) at
// --ops-addr, when it is set, until the returned stop is called.
func (o *opsFlags) listen(cfg server.Config, co cmdOptions) (stop func(), err error) {
	if o.addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return nil, fmt.Errorf("--ops-addr: %w", err)
	}
	// No write timeout: a CPU profile or trace answers after as many
	// seconds as its caller asks for.
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: server.OpsHandler(cfg)}
	go func() { _ = srv.Serve(ln) }()
	slog.Info("operations endpoints", "addr", ln.Addr().String())
	co.listened(listenerOps, ln.Addr())
	return func() { _ = srv.Close() }, nil
}
