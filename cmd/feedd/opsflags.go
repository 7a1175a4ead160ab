package main

import (
	"errors"
	"flag"

	"github.com/feedd/feedd/server"
)

// opsFlags are the operations flags serve and worker share: logging and
// the readiness bound.
type opsFlags struct {
	logFormat, logLevel string
	readyMaxBacklog     int64
}

func addOpsFlags(fs *flag.FlagSet) *opsFlags {
	o := &opsFlags{}
	fs.StringVar(&o.logFormat, "log-format", "text", "log format on stderr: text or json")
	fs.StringVar(&o.logLevel, "log-level", "info", "least severe log level written: debug, info, warn or error")
	fs.Int64Var(&o.readyMaxBacklog, "ready-max-backlog", server.DefaultReadyMaxBacklog, "fan-out backlog (queued events and tasks) above which /readyz answers 503")
	return o
}

// apply checks the flags and installs the logger they ask for.
func (o *opsFlags) apply() error {
	if o.readyMaxBacklog < 1 {
		return errors.New("--ready-max-backlog must be at least 1")
	}
	return setLogger(o.logFormat, o.logLevel)
}
