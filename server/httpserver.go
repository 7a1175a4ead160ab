package server

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/internal/hostmatch"
)

// HTTPLimits bound what one connection may cost the server: how long a
// client may take to send its headers and its body, how long the answer
// may take, how long an idle keep-alive connection stays open and how
// large the headers may be. Zero fields take the defaults below.
type HTTPLimits struct {
	// ReadHeaderTimeout bounds reading a request's headers (slowloris).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds reading a whole request, body included, so a body
	// trickled byte by byte cannot hold a connection and a goroutine.
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from the end of its headers to the end
	// of its answer. It must exceed the request timeout and the mutation
	// write timeout, or a slow answer would be cut instead of coded; zero
	// means MinWriteTimeout of those.
	WriteTimeout time.Duration
	// IdleTimeout bounds how long a keep-alive connection waits for its
	// next request.
	IdleTimeout time.Duration
	// MaxHeaderBytes bounds the request line and headers.
	MaxHeaderBytes int
}

// Defaults of HTTPLimits' zero fields.
const (
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 15 * time.Second
	DefaultIdleTimeout       = 2 * time.Minute
	DefaultMaxHeaderBytes    = 64 << 10
	// writeTimeoutMargin is how much longer than the slowest handler the
	// write timeout lasts by default: time to write the answer.
	writeTimeoutMargin = 5 * time.Second
)

// MinWriteTimeout is the default HTTP write timeout for a request timeout
// and a mutation write timeout: the longer of the two, plus a margin to
// write the answer.
func MinWriteTimeout(requestTimeout, writeTimeout time.Duration) time.Duration {
	return max(requestTimeout, writeTimeout) + writeTimeoutMargin
}

// Check refuses limits that cannot work with the given request and
// mutation write timeouts.
func (l HTTPLimits) Check(requestTimeout, writeTimeout time.Duration) error {
	switch {
	case l.ReadHeaderTimeout < 0, l.ReadTimeout < 0, l.WriteTimeout < 0, l.IdleTimeout < 0, l.MaxHeaderBytes < 0:
		return errors.New("HTTP limits must not be negative")
	case l.WriteTimeout != 0 && l.WriteTimeout <= max(requestTimeout, writeTimeout):
		return fmt.Errorf("the HTTP write timeout (%v) must be longer than the request timeout (%v) and the write timeout (%v), or slow answers are cut off instead of failing with a code",
			l.WriteTimeout, requestTimeout, writeTimeout)
	}
	return nil
}

// Server returns an http.Server serving h within these limits;
// requestTimeout and writeTimeout give the default WriteTimeout.
func (l HTTPLimits) Server(h http.Handler, requestTimeout, writeTimeout time.Duration) *http.Server {
	if l.ReadHeaderTimeout == 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.ReadTimeout == 0 {
		l.ReadTimeout = DefaultReadTimeout
	}
	if l.WriteTimeout == 0 {
		l.WriteTimeout = MinWriteTimeout(requestTimeout, writeTimeout)
	}
	if l.IdleTimeout == 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxHeaderBytes == 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
	}
}

// LoopbackHosts are the host names a server on a loopback address is
// reached by: the default of --allowed-hosts while dev auth is on.
var LoopbackHosts = []string{"localhost", "127.0.0.1", "::1"}

// allowedHosts refuses requests whose Host header names none of hosts,
// against DNS rebinding: a page on evil.example whose name is re-pointed
// to 127.0.0.1 reaches a local server from the victim's browser, same
// origin as far as the browser knows, but its requests still say "Host:
// evil.example". An entry is a host name or IP address (any port), or
// "*.example.com" for any subdomain; empty hosts allows any host. The
// probes (/healthz, /readyz) are exempt: load balancers call them by IP.
func allowedHosts(hosts []string, next http.Handler) http.Handler {
	if len(hosts) == 0 {
		return next
	}
	list := hostmatch.New(hosts)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.URL.Path == "/healthz" || r.URL.Path == "/readyz") && r.Method == http.MethodGet || list.Match(r.Host) {
			next.ServeHTTP(w, r)
			return
		}
		refuse(w, r, http.StatusMisdirectedRequest, apierr.Forbidden,
			"this server does not answer to the host name in the request (see --allowed-hosts)")
	})
}
