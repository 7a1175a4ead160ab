package main

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/feedd/feedd/server"
)

// opsFlags are the operations flags serve and worker share: logging, the
// readiness bound and the operations listener.
type opsFlags struct {
	logFormat, logLevel string
	readyMaxBacklog     int64
	addr                string
}

func addOpsFlags(fs *flag.FlagSet) *opsFlags {
	o := &opsFlags{}
	fs.StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&o.logLevel, "log-level", "info", "least severe log level written: debug, info, warn or error")
	fs.Int64Var(&o.readyMaxBacklog, "ready-max-backlog", server.DefaultReadyMaxBacklog, "fan-out backlog (queued events and tasks) above which /readyz answers 503")
	fs.StringVar(&o.addr, "ops-addr", "", "when set, serve /healthz, /readyz, /metrics and Go's profiles (/debug/pprof/) at this address, a listener apart from the public one; empty: off")
	return o
}

// apply checks the flags and installs the logger they ask for.
func (o *opsFlags) apply() error {
	if o.readyMaxBacklog < 1 {
		return errors.New("--ready-max-backlog must be at least 1")
	}
	return setLogger(o.logFormat, o.logLevel)
}

// listen serves the operations endpoints (server.OpsHandler over cfg, with
// the readiness bound of the flags) at --ops-addr, when it is set, until
// the returned stop is called.
func (o *opsFlags) listen(cfg server.Config, co cmdOptions) (stop func(), err error) {
	if o.addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return nil, fmt.Errorf("--ops-addr: %w", err)
	}
	cfg.ReadyMaxBacklog = o.readyMaxBacklog
	// No write timeout: a CPU profile or trace answers after as many
	// seconds as its caller asks for.
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: server.OpsHandler(cfg)}
	go func() { _ = srv.Serve(ln) }()
	slog.Info("operations endpoints", "addr", ln.Addr().String())
	co.listened(listenerOps, ln.Addr())
	return func() { _ = srv.Close() }, nil
}
