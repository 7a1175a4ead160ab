package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"

	"github.com/feedd/feedd/auth"
)

// viewerQuery is a query any signed-in viewer may run: over a WebSocket it
// shows who the connection is.
const viewerQuery = `query Who { viewer { handle } }`

// who runs viewerQuery as operation id on c and returns the handle.
func (c *wsClient) who(id string) string {
	c.t.Helper()
	c.subscribe(id, viewerQuery, nil)
	var d struct{ Viewer struct{ Handle string } }
	c.result(id).as(c.t, &d)
	c.expect("complete", id)
	return d.Viewer.Handle
}

// TestWebsocketIdentity: a connection is the viewer its upgrade's
// Authorization header proves, or its connection_init payload's (which
// wins: browsers cannot set a WebSocket's headers); with dev auth,
// X-Viewer-Id in the payload too. No identity, or a bad token, is refused
// with 4401, which tells the client to sign in rather than retry.
func TestWebsocketIdentity(t *testing.T) {
	e := newStreamEnv(t, nil, nil)
	e.users("ann", "bob", "cat")

	c := e.mustDial("Authorization", "Bearer "+token(t, 1, time.Hour))
	c.init(nil)
	if h := c.who("1"); h != "ann" {
		t.Errorf("by header: viewer %q, want ann", h)
	}

	c = e.mustDial()
	c.init(map[string]any{"Authorization": "Bearer " + token(t, 2, time.Hour)})
	if h := c.who("1"); h != "bob" {
		t.Errorf("by init payload: viewer %q, want bob", h)
	}

	c = e.mustDial("Authorization", "Bearer "+token(t, 1, time.Hour))
	c.init(map[string]any{auth.DevHeader: "3"})
	if h := c.who("1"); h != "cat" {
		t.Errorf("dev header in the payload over a header token: viewer %q, want cat", h)
	}

	for name, payload := range map[string]map[string]any{
		"no identity":     nil,
		"a forged token":  {"Authorization": "Bearer " + forged(t)},
		"an expired one":  {"Authorization": "Bearer " + expired(t)},
		"not a bearer":    {"Authorization": "Basic YW5uOnNlY3JldA=="},
		"a bad dev id":    {auth.DevHeader: "ann"},
		"lower case auth": {"authorization": "Bearer " + forged(t)},
	} {
		c := e.mustDial()
		c.send("connection_init", "", payload)
		if code, reason := c.closed(); code != CloseSignIn || reason == "" {
			t.Errorf("%s: closed with %d %q, want %d and a reason", name, code, reason, CloseSignIn)
		}
	}
	if n, _ := gather(t, e.metrics.Registry()).value("feedd_stream_refusals_total",
		"transport", "websocket", "code", "UNAUTHENTICATED"); n != 6 {
		t.Errorf("refusals counted: %v, want 6", n)
	}
}

// expired is a token of user 1 that expired an hour ago.
func expired(t *testing.T) string {
	tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Subject: "1", ExpiresAt: jwt.NewNumericDate(time.Now().Add(-time.Hour))}).SignedString(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// forged is a token of user 1 signed with another secret.
func forged(t *testing.T) string {
	tok, err := auth.Mint([]byte("another-secret-another-secret-xx"), 1, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// TestWebsocketTokenExpiry: at its token's expiry an open connection is
// closed with 4401 (sign in again), not left open on a dead credential.
func TestWebsocketTokenExpiry(t *testing.T) {
	e := newStreamEnv(t, nil, nil)
	e.users("ann")
	c := e.mustDial()
	c.init(map[string]any{"Authorization": "Bearer " + token(t, 1, 2*time.Second)})
	if h := c.who("1"); h != "ann" {
		t.Fatalf("viewer %q, want ann", h)
	}
	if code, reason := c.closed(); code != CloseSignIn || !strings.Contains(reason, "expired") {
		t.Errorf("closed with %d %q, want %d, expired", code, reason, CloseSignIn)
	}
}

// TestWebsocketOrigin: an upgrade from an origin the CORS rules do not
// allow is refused before it is accepted (cross-site WebSocket
// hijacking), with a code; the server's own origin and the configured
// ones are accepted.
func TestWebsocketOrigin(t *testing.T) {
	e := newStreamEnv(t, func(c *Config) { c.CORSOrigins = []string{"https://app.example.com"} }, nil)
	e.users("ann")
	tok := "Bearer " + token(t, 1, time.Hour)
	_, res, err := e.dial("Authorization", tok, "Origin", "https://evil.example")
	if err == nil {
		t.Fatal("upgrade from a foreign origin accepted")
	}
	if r := readBody(t, res); r.Status != http.StatusForbidden || r.code() != "FORBIDDEN" {
		t.Errorf("foreign origin: %d %+v, want 403 FORBIDDEN", r.Status, r.Errors)
	}
	for _, origin := range []string{"https://app.example.com", e.srv.URL} {
		c := e.mustDial("Authorization", tok, "Origin", origin)
		c.init(nil)
		if h := c.who("1"); h != "ann" {
			t.Errorf("origin %s: viewer %q", origin, h)
		}
	}
	if n, _ := gather(t, e.metrics.Registry()).value("feedd_stream_refusals_total",
		"transport", "websocket", "code", "FORBIDDEN"); n != 1 {
		t.Errorf("refusals counted: %v, want 1", n)
	}
}

// TestStreamMaxConnections: past --max-connections a WebSocket upgrade and
// an event stream are refused, 503 UNAVAILABLE with Retry-After, and one
// is admitted again once another closes.
func TestStreamMaxConnections(t *testing.T) {
	e := newStreamEnv(t, func(c *Config) { c.Streams.MaxConnections = 1 }, nil)
	e.users("ann")
	c := e.mustDial(auth.DevHeader, "1")
	c.init(nil)
	_, res, err := e.dial(auth.DevHeader, "1")
	if err == nil {
		t.Fatal("a connection past the limit was accepted")
	}
	if res.Header.Get("Retry-After") == "" {
		t.Error("no Retry-After")
	}
	if r := readBody(t, res); r.Status != http.StatusServiceUnavailable || r.code() != "UNAVAILABLE" {
		t.Errorf("past the limit: %d %+v, want 503 UNAVAILABLE", r.Status, r.Errors)
	}
	_, sres := e.sse(context.Background(), viewerQuery, nil, auth.DevHeader, "1")
	if r := readBody(t, sres); r.Status != http.StatusServiceUnavailable || r.code() != "UNAVAILABLE" {
		t.Errorf("an event stream past the limit: %d %+v", r.Status, r.Errors)
	}
	f := gather(t, e.metrics.Registry())
	if n, _ := f.value("feedd_stream_connections_open", "transport", "websocket"); n != 1 {
		t.Errorf("open connections: %v, want 1", n)
	}
	for _, tr := range []string{"websocket", "sse"} {
		if n, _ := f.value("feedd_stream_refusals_total", "transport", tr, "code", "UNAVAILABLE"); n != 1 {
			t.Errorf("%s refusals: %v, want 1", tr, n)
		}
	}
	if err := c.c.Close(websocket.StatusNormalClosure, ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the closed connection released", func() bool { return e.conns.Open(transportWebsocket) == 0 })
	c = e.mustDial(auth.DevHeader, "1")
	c.init(nil)
}

// waitFor polls cond until it holds, failing the test after streamWait.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(streamWait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, not a guess at timing
	}
}

// TestWebsocketLimits: a connection that sends no connection_init within
// the init timeout is closed with 4408; a message over the read limit
// closes the connection with 1009 (message too big).
func TestWebsocketLimits(t *testing.T) {
	e := newStreamEnv(t, func(c *Config) {
		c.Streams.InitTimeout = 200 * time.Millisecond
		c.Streams.MaxMessageBytes = 1 << 10
	}, nil)
	e.users("ann")
	c := e.mustDial(auth.DevHeader, "1")
	if code, _ := c.closed(); code != CloseInitTimeout {
		t.Errorf("no init: closed with %d, want %d", code, CloseInitTimeout)
	}
	c = e.mustDial(auth.DevHeader, "1")
	c.init(nil)
	c.subscribe("1", viewerQuery+" # "+strings.Repeat("x", 2<<10), nil)
	if code, _ := c.closed(); code != websocket.StatusMessageTooBig {
		t.Errorf("2 KiB message: closed with %d, want %d", code, websocket.StatusMessageTooBig)
	}
}

// TestStreamOutlivesTimeouts: the request timeout and the HTTP server's
// read and write timeouts bound requests, not streams: a WebSocket stays
// open and answers long past all three (its pings keep flowing too). The
// event stream's side is TestSubscriptionSSE's.
func TestStreamOutlivesTimeouts(t *testing.T) {
	e := newShortTimeoutsEnv(t)
	e.users("ann")
	c := e.mustDial(auth.DevHeader, "1")
	c.init(nil)
	past := time.Now().Add(3 * shortTimeouts)
	for i := 0; time.Now().Before(past); i++ {
		if h := c.who(strings.Repeat("q", i+1)); h != "ann" {
			t.Fatalf("query %d: viewer %q", i, h)
		}
	}
	if h := c.who("last"); h != "ann" {
		t.Fatalf("past every timeout: viewer %q", h)
	}
}

// TestSSEQuery: over server-sent events (a POST with Accept:
// text/event-stream, graphql-sse's distinct connections mode) an
// operation answers in a "next" event, then "complete"; the events reach
// the client through every response writer in front of gqlgen.
func TestSSEQuery(t *testing.T) {
	e := newStreamEnv(t, nil, nil)
	e.users("ann")
	s, res := e.sse(context.Background(), viewerQuery, nil, auth.DevHeader, "1")
	if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	if res.Header.Get("X-Accel-Buffering") != "no" {
		t.Error("an event stream without X-Accel-Buffering: no")
	}
	var d struct{ Viewer struct{ Handle string } }
	s.next().as(t, &d)
	if d.Viewer.Handle != "ann" {
		t.Errorf("viewer %q", d.Viewer.Handle)
	}
	if name, _, err := s.event(); name != "complete" || err != nil {
		t.Errorf("then %q (%v), want complete", name, err)
	}
}

// TestShutdownGoingAway: GoAway (the server shutting down) closes every
// WebSocket with 1001, which tells clients to reconnect elsewhere, and
// refuses new streams.
func TestShutdownGoingAway(t *testing.T) {
	e := newStreamEnv(t, nil, nil)
	e.users("ann")
	acked := e.mustDial(auth.DevHeader, "1")
	acked.init(nil)
	fresh := e.mustDial(auth.DevHeader, "1") // no connection_init yet
	waitFor(t, "both connections open", func() bool { return e.conns.Open(transportWebsocket) == 2 })
	e.conns.GoAway()
	for name, c := range map[string]*wsClient{"initialised": acked, "before init": fresh} {
		if code, _ := c.closed(); code != websocket.StatusGoingAway {
			t.Errorf("%s: closed with %d, want 1001", name, code)
		}
	}
	_, res, err := e.dial(auth.DevHeader, "1")
	if err == nil || res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a connection after GoAway: %v", err)
	}
}

// TestWebsocketOperationMetrics: each operation of a connection is
// observed as a request is (latency and round trips by operation), while
// the connection itself adds no request latency.
func TestWebsocketOperationMetrics(t *testing.T) {
	e := newStreamEnv(t, nil, nil)
	e.users("ann")
	c := e.mustDial(auth.DevHeader, "1")
	c.init(nil)
	for _, id := range []string{"1", "2", "3"} {
		c.who(id)
	}
	c.subscribe("4", `query Who { nope }`, nil)
	m := c.expect("error", "4")
	var errs []gqlError
	if err := json.Unmarshal(m.Payload, &errs); err != nil || len(errs) == 0 || errs[0].Extensions["code"] != "BAD_USER_INPUT" {
		t.Errorf("a bad query over a WebSocket: %s", m.Payload)
	}
	f := gather(t, e.metrics.Registry())
	if n, _ := f.value("feedd_graphql_request_duration_seconds_count", "type", "query", "operation", "Who"); n != 3 {
		t.Errorf("queries observed: %v, want 3", n)
	}
	if n, _ := f.value("feedd_graphql_redis_round_trips_count", "type", "query", "operation", "Who"); n != 3 {
		t.Errorf("round trips observed: %v runs, want 3", n)
	}
}
