package server

import (
	"context"
	"errors"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/feedd/feedd/apierr"
)

// Streams: the long-lived requests of /query, GraphQL subscriptions over a
// WebSocket (websocket.go) or over server-sent events. Both are gqlgen's
// own transports; what is here only admits, bounds and ends them:
//
//   - Each replica holds at most StreamLimits.MaxConnections of them; one
//     more is refused before it starts, 503 UNAVAILABLE with Retry-After.
//   - The request timeout, and the HTTP server's read and write timeouts,
//     bound a request, not a stream: a stream clears its connection's
//     deadlines (http.ResponseController, through every middleware's
//     Unwrap), and observeQuery leaves its context without the request
//     timeout. Each write has a deadline of its own instead
//     (StreamLimits.WriteTimeout): a client that stops reading is dropped
//     rather than buffered for.
//   - Connections.GoAway, at shutdown, closes every WebSocket with 1001
//     "going away" and ends every event stream without its complete event,
//     so that clients reconnect to another replica.

// StreamLimits bound the long-lived requests of /query; zero fields take
// the defaults below.
type StreamLimits struct {
	// MaxConnections bounds the WebSocket connections and event streams
	// open on this replica (--max-connections).
	MaxConnections int
	// InitTimeout is how long a WebSocket may take to send its
	// connection_init; past it the connection is closed with 4408.
	InitTimeout time.Duration
	// MaxMessageBytes bounds a message a client sends over a WebSocket;
	// a larger one closes the connection with 1009. Default: the POST
	// body limit (APIConfig.MaxBodyBytes), which bounds the same request.
	MaxMessageBytes int64
	// PingInterval is how often a graphql-transport-ws connection is
	// pinged; a client that has not answered the ping two intervals later
	// is dropped, so a dead peer is found within three intervals.
	PingInterval time.Duration
	// WriteTimeout bounds one write to a stream: a client that has not
	// taken a message this long after it was sent (its buffers are full:
	// it stopped reading) is dropped.
	WriteTimeout time.Duration
}

// Defaults of StreamLimits' zero fields.
const (
	DefaultMaxConnections = 10000
	DefaultInitTimeout    = 10 * time.Second
	// DefaultPingInterval finds a dead peer within a minute.
	DefaultPingInterval       = 20 * time.Second
	DefaultStreamWriteTimeout = 10 * time.Second
)

func (l StreamLimits) withDefaults(maxBody int64) StreamLimits {
	if l.MaxConnections <= 0 {
		l.MaxConnections = DefaultMaxConnections
	}
	if l.InitTimeout <= 0 {
		l.InitTimeout = DefaultInitTimeout
	}
	if l.MaxMessageBytes <= 0 {
		l.MaxMessageBytes = maxBody
	}
	if l.PingInterval <= 0 {
		l.PingInterval = DefaultPingInterval
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = DefaultStreamWriteTimeout
	}
	return l
}

// The transports of a stream, as metrics and logs name them.
const (
	transportWebsocket = "websocket"
	transportSSE       = "sse"
)

// streamRetryAfter is the Retry-After of a stream refused for
// --max-connections.
const streamRetryAfter = "5"

// Connections are a handler's open streams: its WebSocket connections and
// event streams. Build them with NewConnections.
type Connections struct {
	mu      sync.Mutex
	open    map[*openStream]struct{}
	count   map[string]int
	closing bool
}

// openStream is one admitted stream and how to end it at shutdown.
type openStream struct {
	transport string
	goAway    func()
}

// NewConnections returns an empty set of streams.
func NewConnections() *Connections {
	return &Connections{open: map[*openStream]struct{}{}, count: map[string]int{}}
}

// admit registers a stream, ended by goAway at shutdown; false when max
// are open already or the server is going away.
func (c *Connections) admit(max int, transport string, goAway func()) (*openStream, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closing || len(c.open) >= max {
		return nil, false
	}
	s := &openStream{transport: transport, goAway: goAway}
	c.open[s] = struct{}{}
	c.count[transport]++
	return s, true
}

func (c *Connections) release(s *openStream) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.open[s]; ok {
		delete(c.open, s)
		c.count[s.transport]--
	}
}

// Open is how many streams of the transport ("websocket" or "sse") are
// open.
func (c *Connections) Open(transport string) int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.count[transport]
}

// GoAway ends every open stream and refuses new ones: a WebSocket closes
// with 1001 "going away", an event stream ends without its complete
// event, and the clients reconnect to another replica. Call it when the
// server shuts down (http.Server.RegisterOnShutdown): Shutdown neither
// closes hijacked connections (WebSockets) nor ends the requests it waits
// for (event streams).
func (c *Connections) GoAway() {
	c.mu.Lock()
	c.closing = true
	streams := make([]*openStream, 0, len(c.open))
	for s := range c.open {
		streams = append(streams, s)
	}
	c.mu.Unlock()
	for _, s := range streams {
		s.goAway()
	}
}

// streamKey keys a stream request's streamInfo in its context.
type streamKey struct{}

// streamInfo is what the request's transport tells observeQuery and the
// operations of a stream request: by which transport it was admitted as a
// stream ("" while it was not, as when it was refused).
type streamInfo struct {
	transport atomic.Value // string
}

func (s *streamInfo) admitted(transport string) { s.transport.Store(transport) }

// Transport is the transport that admitted the stream, "" for none yet.
func (s *streamInfo) Transport() string {
	if s == nil {
		return ""
	}
	t, _ := s.transport.Load().(string)
	return t
}

// streamOf is the stream ctx's request is, nil for a plain request.
func streamOf(ctx context.Context) *streamInfo {
	s, _ := ctx.Value(streamKey{}).(*streamInfo)
	return s
}

// isStreamRequest reports whether r asks for a stream, by the rules of the
// transports that serve one.
func isStreamRequest(r *http.Request) bool {
	return transport.Websocket{}.Supports(r) || transport.SSE{}.Supports(r)
}

// holdOpen clears the connection's read and write deadlines (the HTTP
// server's ReadTimeout and WriteTimeout) for a stream, which outlives any
// request. It reaches the connection through every wrapper's Unwrap.
func holdOpen(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Time{})
}

// streamTransport is the transport a stream request asks for.
func streamTransport(r *http.Request) string {
	if (transport.Websocket{}).Supports(r) {
		return transportWebsocket
	}
	return transportSSE
}

// refuseFull refuses a stream past --max-connections: 503, with a code.
func refuseFull(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Retry-After", streamRetryAfter)
	refuse(w, r, http.StatusServiceUnavailable, apierr.Unavailable,
		"this server holds as many subscriptions as it may (--max-connections); retry later or on another server")
}

// errGoingAway ends a stream at shutdown.
var errGoingAway = errors.New("the server is going away")

// sseTransport is gqlgen's SSE transport (graphql-sse's distinct
// connections mode: a POST with Accept: text/event-stream) admitted and
// bounded as a stream.
type sseTransport struct {
	transport.SSE
	conns  *Connections
	limits StreamLimits
	m      *Metrics
}

func (t sseTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	sw := &streamWriter{ResponseWriter: w, rc: http.NewResponseController(w), timeout: t.limits.WriteTimeout,
		slow: func() { t.m.slowClientDropped(transportSSE) }}
	s, ok := t.conns.admit(t.limits.MaxConnections, transportSSE, func() {
		sw.gone.Store(true)
		cancel(errGoingAway)
	})
	if !ok {
		refuseFull(w, r)
		return
	}
	defer t.conns.release(s)
	streamOf(ctx).admitted(transportSSE)
	holdOpen(w)
	// nginx (and proxies that follow it) would otherwise hold the events
	// in its buffer.
	w.Header().Set("X-Accel-Buffering", "no")
	t.SSE.Do(sw, r.WithContext(ctx), exec)
}

// streamWriter is an event stream's response writer: each write and flush
// must be done within timeout, or it fails, which ends the request
// (net/http cancels the context of a request whose connection failed a
// write). Once gone (shutdown), writes are dropped, so the stream ends
// without its complete event and the client reconnects.
type streamWriter struct {
	http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	gone    atomic.Bool
	slow    func()
	dropped atomic.Bool
}

func (s *streamWriter) Write(b []byte) (int, error) {
	if s.gone.Load() {
		return 0, errGoingAway
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	n, err := s.ResponseWriter.Write(b)
	s.failed(err)
	return n, err
}

// Flush is http.Flusher's, which gqlgen's SSE transport needs.
func (s *streamWriter) Flush() {
	if s.gone.Load() {
		return
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	s.failed(s.rc.Flush())
}

func (s *streamWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }

// failed counts a write that timed out: a slow client dropped (once).
func (s *streamWriter) failed(err error) {
	if errors.Is(err, os.ErrDeadlineExceeded) && s.dropped.CompareAndSwap(false, true) {
		s.slow()
	}
}
