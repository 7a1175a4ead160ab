package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/coder/websocket"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/reqinfo"
)

// WebSockets on /query: gqlgen's transport (graphql-transport-ws, and the
// legacy graphql-ws subprotocol) over its coder/websocket implementation.
// What is added here is configuration, and a thin wrapper around the
// implementation and its connections that gqlgen's extension points allow
// for: write deadlines, and the close codes the client acts on.
//
//   - Origin: the guard in front (cors.go) refuses an upgrade from an
//     origin the CORS rules do not allow, as it refuses any request, so a
//     page on another site cannot open a WebSocket with the user's cookies
//     or credentials (cross-site WebSocket hijacking); the implementation's
//     OriginPatterns repeat the same allow-list.
//   - Identity: the upgrade's Authorization header (or X-Viewer-Id with
//     dev auth), or the same in connection_init's payload, which browsers
//     fill in since they cannot set a WebSocket's headers; the payload's
//     wins. Both go through auth.Credentials, the one way to authenticate.
//     A connection without a valid identity is closed with 4401.
//   - A token expires: at its "exp" the connection is closed with 4401, a
//     code that tells the client to sign in again rather than retry.
//   - Limits: StreamLimits.

// Close codes of a WebSocket on /query, beyond RFC 6455's.
const (
	// CloseSignIn: no valid identity, or its token expired; sign in
	// (again) before reconnecting.
	CloseSignIn = 4401
	// CloseInitTimeout: no connection_init within the init timeout
	// (graphql-transport-ws's code; gqlgen closes with 1002).
	CloseInitTimeout = 4408
	// CloseGoingAway: the server is shutting down; reconnect, to another
	// replica.
	CloseGoingAway = 1001
)

// gqlgenInitTimeout is the reason gqlgen closes with on an init timeout.
const gqlgenInitTimeout = "connection initialisation timeout"

// maxCloseReason is the longest close reason RFC 6455 allows, in bytes.
const maxCloseReason = 123

// wsTransport is gqlgen's Websocket transport admitted as a stream.
type wsTransport struct {
	transport.Websocket
	conns  *Connections
	limits StreamLimits
	m      *Metrics
}

// newWebsocket configures gqlgen's WebSocket transport for /query.
func newWebsocket(cfg Config, api APIConfig, conns *Connections) wsTransport {
	l := api.Streams.withDefaults(api.MaxBodyBytes)
	readLimit := l.MaxMessageBytes
	origins, anyOrigin := originPatterns(api.CORSOrigins)
	return wsTransport{
		Websocket: transport.Websocket{
			Implementation: wsImplementation{
				inner: transport.CoderWebsocketImplementation{AcceptOptions: websocket.AcceptOptions{
					OriginPatterns: origins, InsecureSkipVerify: anyOrigin}},
				writeTimeout: l.WriteTimeout,
				slow:         func() { cfg.Metrics.slowClientDropped(transportWebsocket) },
			},
			InitFunc:              wsInit(auth.Config{DevAuth: cfg.DevAuth, Verifier: cfg.Verifier}, cfg.Metrics),
			InitTimeout:           l.InitTimeout,
			PingPongInterval:      l.PingInterval,
			KeepAlivePingInterval: l.PingInterval, // the legacy subprotocol's "ka"
			PayloadReadLimit:      &readLimit,
			ErrorFunc: func(ctx context.Context, err error) {
				cfg.Logger.DebugContext(ctx, "websocket", "request_id", reqinfo.Of(ctx).RequestID, "err", err)
			},
		},
		conns: conns, limits: l, m: cfg.Metrics,
	}
}

// originPatterns are the CORS origins as coder/websocket's OriginPatterns
// (scheme://host, matched without case; the request's own host always
// passes), and whether any origin is allowed.
func originPatterns(cors []string) (patterns []string, any bool) {
	escape := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	for _, o := range cors {
		switch o = normalizeOrigin(o); o {
		case "*":
			any = true
		case "":
		default:
			patterns = append(patterns, escape.Replace(o))
		}
	}
	return patterns, any
}

func (t wsTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if msg := badUpgrade(r); msg != "" {
		refuse(w, r, http.StatusBadRequest, apierr.BadInput, msg)
		return
	}
	st := &wsState{}
	s, ok := t.conns.admit(t.limits.MaxConnections, transportWebsocket, func() {
		st.closeWith(CloseGoingAway, "going away: reconnect")
	})
	if !ok {
		refuseFull(w, r)
		return
	}
	defer t.conns.release(s)
	defer st.end()
	streamOf(r.Context()).admitted(transportWebsocket)
	holdOpen(w)
	t.Websocket.Do(w, r.WithContext(context.WithValue(r.Context(), wsStateKey{}, st)), exec)
}

// badUpgrade says what is wrong with an upgrade request that cannot be a
// WebSocket handshake, "" for none: refused here with a code, where
// coder/websocket would answer in plain text.
func badUpgrade(r *http.Request) string {
	switch {
	case r.Method != http.MethodGet:
		return "a WebSocket upgrade must be a GET"
	case !strings.Contains(strings.ToLower(r.Header.Get("Upgrade")), "websocket"):
		return `the only upgrade served is "Upgrade: websocket"`
	case r.Header.Get("Sec-WebSocket-Version") != "13":
		return "only WebSocket version 13 is served (Sec-WebSocket-Version: 13)"
	}
	return ""
}

// wsInit checks a connection_init: its payload's credentials, else the
// upgrade request's, must prove a viewer whose token has not expired; the
// connection's facts then carry that identity, and it is closed with 4401
// at the token's expiry.
func wsInit(authn auth.Config, m *Metrics) transport.WebsocketInitFunc {
	return func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
		f := reqinfo.Of(ctx)
		if c := (auth.Credentials{Authorization: p.Authorization(), DevViewer: p.GetString(auth.DevHeader)}); !c.Empty() {
			f.Identity = c.Resolve(authn)
		}
		if reason := signInFirst(f.Identity); reason != "" {
			m.streamRefused(transportWebsocket, apierr.Unauthenticated)
			reqinfo.OutcomeOf(ctx).AddCode(string(apierr.Unauthenticated))
			ctx = transport.WithWebsocketCloseCode(transport.AppendCloseReason(ctx, reason), CloseSignIn)
			return ctx, nil, errors.New(reason)
		}
		st, _ := ctx.Value(wsStateKey{}).(*wsState)
		if st == nil { // outside wsTransport: nothing ends it from outside
			st = &wsState{}
		}
		ctx, cancel := context.WithCancel(reqinfo.With(ctx, f))
		st.initialised(cancel, f.Identity.Expires)
		return ctx, nil, nil
	}
}

// signInFirst is why id cannot hold a connection open, "" when it can.
func signInFirst(id auth.Identity) string {
	switch {
	case id.ViewerID == 0 && id.Problem != "":
		return "not signed in: " + id.Problem
	case id.ViewerID == 0:
		return `sign in first: send {"Authorization": "Bearer <token>"} in connection_init's payload`
	case !id.Expires.IsZero() && !time.Now().Before(id.Expires):
		return "token has expired: get a new one"
	}
	return ""
}

// wsStateKey keys a connection's wsState in its request's context.
type wsStateKey struct{}

// wsState is one WebSocket connection's: how to close it with a code, from
// outside gqlgen's transport (shutdown, the token's expiry).
type wsState struct {
	mu      sync.Mutex
	conn    *wsConn
	cancel  context.CancelFunc // the connection's context, once initialised
	expiry  *time.Timer
	pending *closeCode // asked before the connection was accepted
	ended   bool
}

type closeCode struct {
	code   int
	reason string
}

func (s *wsState) accepted(c *wsConn) {
	s.mu.Lock()
	s.conn = c
	p := s.pending
	s.mu.Unlock()
	if p != nil {
		s.closeWith(p.code, p.reason)
	}
}

func (s *wsState) initialised(cancel context.CancelFunc, expires time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancel = cancel
	if !expires.IsZero() && !s.ended {
		s.expiry = time.AfterFunc(time.Until(expires), func() {
			s.closeWith(CloseSignIn, "token has expired: sign in again")
		})
	}
}

// closeWith closes the connection with code and reason: once initialised,
// through gqlgen's own close (its context ends: its subscriptions end,
// then the close frame), else at once.
func (s *wsState) closeWith(code int, reason string) {
	s.mu.Lock()
	c, cancel := s.conn, s.cancel
	if c == nil {
		s.pending = &closeCode{code, reason}
	}
	s.mu.Unlock()
	if c == nil {
		return
	}
	c.closeWith(code, reason)
	if cancel != nil {
		cancel()
		return
	}
	_ = c.WriteClose(code, reason)
	_ = c.Close()
}

// end is called when the connection's request returns.
func (s *wsState) end() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	if s.expiry != nil {
		s.expiry.Stop()
	}
}

// wsImplementation is gqlgen's coder/websocket implementation whose
// connections are wrapped (wsConn) and known to their wsState.
type wsImplementation struct {
	inner        transport.CoderWebsocketImplementation
	writeTimeout time.Duration
	slow         func()
}

func (i wsImplementation) Accept(w http.ResponseWriter, r *http.Request, opts transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	conn, err := i.inner.Accept(w, r, opts)
	if err != nil {
		return nil, err
	}
	c := &wsConn{WebsocketConn: conn, writeTimeout: i.writeTimeout, slow: i.slow}
	if st, _ := r.Context().Value(wsStateKey{}).(*wsState); st != nil {
		st.accepted(c)
	}
	return c, nil
}

// wsConn is gqlgen's connection with a deadline on each write (gqlgen
// writes without one: a client that stops reading would hold the writer,
// and every subscription of the connection behind it, for ever) and a
// close code set from outside: gqlgen closes with 1000 whatever ended the
// connection, but the client must tell "sign in again" (4401) and "going
// away" (1001) apart from a normal close.
type wsConn struct {
	transport.WebsocketConn
	writeTimeout time.Duration
	slow         func()

	mu    sync.Mutex
	close *closeCode
}

var (
	_ transport.WebsocketReadLimiter   = (*wsConn)(nil)
	_ transport.WebsocketReadDeadliner = (*wsConn)(nil)
)

// WriteJSON writes v, or drops the client when the write takes longer
// than writeTimeout: the connection is closed under the write, which
// then fails.
func (c *wsConn) WriteJSON(v any) error {
	t := time.AfterFunc(c.writeTimeout, func() {
		c.slow()
		_ = c.WebsocketConn.Close()
	})
	defer t.Stop()
	return c.WebsocketConn.WriteJSON(v)
}

// closeWith makes the next close use code and reason.
func (c *wsConn) closeWith(code int, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.close == nil {
		c.close = &closeCode{code, reason}
	}
}

// WriteClose closes with the code set by closeWith, if any; an init
// timeout with graphql-transport-ws's 4408. The reason is cut to what a
// close frame holds.
func (c *wsConn) WriteClose(code int, reason string) error {
	c.mu.Lock()
	if c.close != nil {
		code, reason = c.close.code, c.close.reason
	}
	c.mu.Unlock()
	if code == transport.WebsocketCloseProtocolError && reason == gqlgenInitTimeout {
		code = CloseInitTimeout
	}
	return c.WebsocketConn.WriteClose(code, cutReason(reason))
}

// cutReason is reason cut to maxCloseReason bytes, at a rune boundary.
func cutReason(reason string) string {
	if len(reason) <= maxCloseReason {
		return reason
	}
	reason = reason[:maxCloseReason]
	for !utf8.ValidString(reason) {
		reason = reason[:len(reason)-1]
	}
	return reason
}

func (c *wsConn) SetReadLimit(limit int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(limit)
	}
}

func (c *wsConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}
