package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// Stream tests speak to the server as a client would: graphql-transport-ws
// over a real WebSocket (github.com/coder/websocket, which gqlgen serves
// with too), and graphql-sse's distinct connections mode over HTTP.

// streamWait bounds every wait of a stream test for something the server
// must do: generous, since -race on a busy machine is slow; a test that
// passes never waits it out.
const streamWait = 30 * time.Second

// newStreamEnv is a test's feedd (its own store, service and server) with
// the config edited by edit, and served by a server edited by editServer
// before it starts (its listener, its http.Server's timeouts), either of
// which may be nil.
func newStreamEnv(t *testing.T, edit func(*Config), editServer func(*httptest.Server)) *env {
	t.Helper()
	return newStreamEnvOn(t, storetest.New(t), edit, editServer)
}

// newStreamEnvOn is newStreamEnv over a given store: two of them over one
// store are two replicas.
func newStreamEnvOn(t *testing.T, st *storetest.Store, edit func(*Config), editServer func(*httptest.Server)) *env {
	t.Helper()
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{Prefix: st.Prefix})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{
		Service:        svc,
		DevAuth:        true,
		Verifier:       &auth.Verifier{HS256Secret: testSecret},
		Metrics:        NewMetrics(),
		RequestTimeout: testRequestTimeout,
		Connections:    NewConnections(),
	}
	if edit != nil {
		edit(&cfg)
	}
	srv := httptest.NewUnstartedServer(New(cfg))
	if editServer != nil {
		editServer(srv)
	}
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(cfg.Connections.GoAway) // httptest's Close waits for hijacked connections too
	return &env{t: t, svc: svc, srv: srv, metrics: cfg.Metrics, conns: cfg.Connections}
}

// token mints a bearer token of viewer valid for ttl.
func token(t *testing.T, viewer feedcore.ID, ttl time.Duration) string {
	t.Helper()
	tok, err := auth.Mint(testSecret, viewer, ttl)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// wsURL is the server's /query as a ws:// URL.
func (e *env) wsURL() string { return "ws" + strings.TrimPrefix(e.srv.URL, "http") + "/query" }

// dial opens a graphql-transport-ws connection with the upgrade's headers
// (name, value, ...); the HTTP response of a refused upgrade comes back
// with the error.
func (e *env) dial(headers ...string) (*wsClient, *http.Response, error) {
	e.t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), streamWait)
	defer cancel()
	c, res, err := websocket.Dial(ctx, e.wsURL(), &websocket.DialOptions{
		HTTPHeader: h, Subprotocols: []string{"graphql-transport-ws"}, HTTPClient: e.srv.Client()})
	if err != nil {
		return nil, res, err
	}
	e.t.Cleanup(func() { _ = c.CloseNow() })
	return &wsClient{t: e.t, c: c}, res, nil
}

// mustDial is dial that fails the test on a refused upgrade.
func (e *env) mustDial(headers ...string) *wsClient {
	e.t.Helper()
	c, _, err := e.dial(headers...)
	if err != nil {
		e.t.Fatalf("dial: %v", err)
	}
	return c
}

// wsClient is the client side of one graphql-transport-ws connection.
type wsClient struct {
	t *testing.T
	c *websocket.Conn
}

// wsMessage is a graphql-transport-ws message.
type wsMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

func (c *wsClient) send(typ, id string, payload any) {
	c.t.Helper()
	m := map[string]any{"type": typ}
	if id != "" {
		m["id"] = id
	}
	if payload != nil {
		m["payload"] = payload
	}
	b, _ := json.Marshal(m)
	if err := c.write(b); err != nil {
		c.t.Fatalf("send %s: %v", typ, err)
	}
}

func (c *wsClient) write(b []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), streamWait)
	defer cancel()
	return c.c.Write(ctx, websocket.MessageText, b)
}

// next reads the next message other than a ping (answered) or a pong,
// failing the test if none comes within streamWait or the connection
// closes; read returns the close instead.
func (c *wsClient) next() wsMessage {
	c.t.Helper()
	m, err := c.read()
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return m
}

func (c *wsClient) read() (wsMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), streamWait)
	defer cancel()
	for {
		_, b, err := c.c.Read(ctx)
		if err != nil {
			return wsMessage{}, err
		}
		var m wsMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return wsMessage{}, err
		}
		switch m.Type {
		case "ping":
			if err := c.write([]byte(`{"type":"pong"}`)); err != nil {
				return wsMessage{}, err
			}
		case "pong":
		default:
			return m, nil
		}
	}
}

// closed waits for the server to close the connection and returns its
// close status and reason; the test fails if a message comes instead, or
// nothing within streamWait.
func (c *wsClient) closed() (websocket.StatusCode, string) {
	c.t.Helper()
	for {
		m, err := c.read()
		if err == nil {
			if m.Type == "next" || m.Type == "error" || m.Type == "complete" {
				continue // a subscription ending with the connection
			}
			c.t.Fatalf("got %s %s, want the connection closed", m.Type, m.Payload)
		}
		var ce websocket.CloseError
		if !errors.As(err, &ce) {
			c.t.Fatalf("read: %v, want a close frame", err)
		}
		return ce.Code, ce.Reason
	}
}

// init sends connection_init with payload (nil: none) and expects
// connection_ack.
func (c *wsClient) init(payload map[string]any) {
	c.t.Helper()
	c.send("connection_init", "", payload)
	if m := c.next(); m.Type != "connection_ack" {
		c.t.Fatalf("after connection_init: %s %s, want connection_ack", m.Type, m.Payload)
	}
}

// subscribe starts operation id.
func (c *wsClient) subscribe(id, query string, vars map[string]any) {
	c.t.Helper()
	c.send("subscribe", id, map[string]any{"query": query, "variables": vars})
}

// result reads the next message of operation id, expecting a "next", and
// returns its payload as a response.
func (c *wsClient) result(id string) *gqlResponse {
	c.t.Helper()
	m := c.next()
	if m.Type != "next" || m.ID != id {
		c.t.Fatalf("got %s (id %q) %s, want next of %q", m.Type, m.ID, m.Payload, id)
	}
	var r gqlResponse
	if err := json.Unmarshal(m.Payload, &r); err != nil {
		c.t.Fatalf("next payload %s: %v", m.Payload, err)
	}
	return &r
}

// expect reads the next message, which must be of type typ for id.
func (c *wsClient) expect(typ, id string) wsMessage {
	c.t.Helper()
	m := c.next()
	if m.Type != typ || m.ID != id {
		c.t.Fatalf("got %s (id %q) %s, want %s of %q", m.Type, m.ID, m.Payload, typ, id)
	}
	return m
}

// sse runs a GraphQL request over server-sent events (graphql-sse's
// distinct connections mode) and returns the stream.
func (e *env) sse(ctx context.Context, query string, vars map[string]any, headers ...string) (*sseStream, *http.Response) {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { res.Body.Close() })
	return &sseStream{t: e.t, r: bufio.NewReader(res.Body)}, res
}

// sseStream reads the events of an event stream.
type sseStream struct {
	t *testing.T
	r *bufio.Reader
}

// event reads the next event (comments, the keep-alives, skipped): its
// name and data; io.EOF when the stream ended.
func (s *sseStream) event() (name, data string, err error) {
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "" && name != "":
			return name, data, nil
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// next reads the next event, which must be "next", as a response.
func (s *sseStream) next() *gqlResponse {
	s.t.Helper()
	name, data, err := s.event()
	if err != nil || name != "next" {
		s.t.Fatalf("event %q %s (%v), want next", name, data, err)
	}
	var r gqlResponse
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		s.t.Fatalf("event data %s: %v", data, err)
	}
	return &r
}

// readBody reads a refused upgrade's response as a GraphQL response.
func readBody(t *testing.T, res *http.Response) *gqlResponse {
	t.Helper()
	if res == nil {
		t.Fatal("no HTTP response")
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := &gqlResponse{Status: res.StatusCode}
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("response is not JSON (status %d): %s", res.StatusCode, raw)
	}
	return out
}

// shortTimeouts is the request timeout and the HTTP server's read and
// write timeouts of newShortTimeoutsEnv: streams must outlive them.
const shortTimeouts = 300 * time.Millisecond

// newShortTimeoutsEnv is a stream env whose request timeout and HTTP read
// and write timeouts are all shortTimeouts, with pings three times as often.
func newShortTimeoutsEnv(t *testing.T) *env {
	return newStreamEnv(t, func(c *Config) {
		c.RequestTimeout = shortTimeouts
		c.Streams.PingInterval = shortTimeouts / 3
	}, func(s *httptest.Server) {
		s.Config.ReadTimeout, s.Config.WriteTimeout = shortTimeouts, shortTimeouts
	})
}

// serviceOnFake is a service over a fake Redis that answers with reply
// (storetest.NewFake), for the paths a store's refusals take.
func serviceOnFake(t *testing.T, reply func([]string) string) *feedcore.Service {
	t.Helper()
	f := storetest.NewFake(t, reply)
	st, err := redisstore.Open(context.Background(), redisstore.Options{URL: "redis://" + f.Addr,
		Timeout: time.Second, DisableCache: true, SingleNode: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{CursorKey: []byte("test-cursor-key-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}
