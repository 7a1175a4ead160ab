package main

import (
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/feedd/feedd/server"
)

// httpFlags configure the HTTP server's connection limits and the hosts it
// answers to.
type httpFlags struct {
	limits       server.HTTPLimits
	allowedHosts string
}

func addHTTPFlags(fs *flag.FlagSet) *httpFlags {
	h := &httpFlags{}
	fs.DurationVar(&h.limits.ReadHeaderTimeout, "http-read-header-timeout", server.DefaultReadHeaderTimeout, "longest a client may take to send a request's headers")
	fs.DurationVar(&h.limits.ReadTimeout, "http-read-timeout", server.DefaultReadTimeout, "longest a client may take to send a whole request, body included")
	fs.DurationVar(&h.limits.WriteTimeout, "http-write-timeout", 0, "longest from a request's headers to the end of its answer; must exceed --request-timeout and --write-timeout (default: the longer of them plus 5s)")
	fs.DurationVar(&h.limits.IdleTimeout, "http-idle-timeout", server.DefaultIdleTimeout, "how long an idle keep-alive connection stays open")
	fs.IntVar(&h.limits.MaxHeaderBytes, "max-header-bytes", server.DefaultMaxHeaderBytes, "largest request line and headers, in bytes")
	fs.StringVar(&h.allowedHosts, "allowed-hosts", "", "comma-separated host names (or IPs, or *.example.com) this server answers to, against DNS rebinding; * allows any (default: localhost, 127.0.0.1 and ::1 with --dev-auth, any otherwise)")
	return h
}

// hosts returns the allowed hosts: nil for any. set names the flags given;
// dev says whether dev auth is on.
func (h *httpFlags) hosts(set map[string]bool, dev bool) []string {
	if !set["allowed-hosts"] {
		if dev {
			return server.LoopbackHosts
		}
		return nil
	}
	var out []string
	for _, s := range strings.Split(h.allowedHosts, ",") {
		s = strings.TrimSpace(s)
		if s == "*" {
			return nil
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// check validates the limits against the request and write timeouts.
func (h *httpFlags) check(requestTimeout, writeTimeout time.Duration) error {
	if h.limits.ReadHeaderTimeout <= 0 || h.limits.ReadTimeout <= 0 || h.limits.IdleTimeout <= 0 || h.limits.MaxHeaderBytes <= 0 {
		return fmt.Errorf("--http-read-header-timeout, --http-read-timeout, --http-idle-timeout and --max-header-bytes must be positive")
	}
	if err := h.limits.Check(requestTimeout, writeTimeout); err != nil {
		return fmt.Errorf("--http-write-timeout: %w", err)
	}
	return nil
}
