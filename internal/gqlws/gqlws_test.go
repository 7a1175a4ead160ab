package gqlws

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/99designs/gqlgen/graphql/handler/transport"
)

// server is gqlgen's own test server (a schema with Subscription.name,
// whose events the test sends) behind gqlgen's WebSocket transport: the
// client is tested against the implementation feedd serves with.
func server(t *testing.T, ws transport.Websocket) (*testserver.TestServer, string) {
	t.Helper()
	h := testserver.New()
	h.AddTransport(ws)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, "ws" + strings.TrimPrefix(srv.URL, "http")
}

// next has the server send an event until one arrives on events, or fails
// the test at the deadline. (The test server drops an event sent before
// the subscription is running, after a second.)
func next(t *testing.T, h *testserver.TestServer, events <-chan Event) Event {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		h.SendNextSubscriptionMessage()
		select {
		case e := <-events:
			return e
		case <-time.After(2 * time.Second):
		}
	}
	t.Fatal("no event within 20s")
	return Event{}
}

func TestSubscribe(t *testing.T) {
	var mu sync.Mutex
	var gotPayload, gotHeader string
	h, url := server(t, transport.Websocket{
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			mu.Lock()
			defer mu.Unlock()
			gotPayload = p.GetString("X-Viewer-Id")
			return ctx, nil, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hdr := http.Header{}
	hdr.Set("X-Test", "yes")
	c, err := Dial(ctx, url, Options{Header: hdr, InitPayload: map[string]any{"X-Viewer-Id": "7"},
		HTTPClient: &http.Client{Transport: headerSpy{&gotHeader, &mu}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	mu.Lock()
	if gotPayload != "7" || gotHeader != "yes" {
		t.Errorf("the server saw init payload X-Viewer-Id %q and header X-Test %q, want 7 and yes", gotPayload, gotHeader)
	}
	mu.Unlock()

	events, err := c.Chan(ctx, "subscription { name }", nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	e := next(t, h, events)
	r, err := e.Decode()
	if err != nil || string(r.Data) != `{"name":"test"}` || len(r.Errors) != 0 || e.At.Before(before) {
		t.Fatalf("event %+v: result %s %v, %v", e, r.Data, r.Errors, err)
	}
	h.SendCompleteSubscriptionMessage()
	select {
	case e, ok := <-events:
		if !ok || e.Type != TypeComplete {
			t.Fatalf("after complete: %+v (open %v), want a complete event", e, ok)
		}
	case <-ctx.Done():
		t.Fatal("no complete event")
	}
	if _, ok := <-events; ok {
		t.Error("the channel stays open after complete")
	}
	if err := c.Err(); err != nil {
		t.Errorf("the connection ended: %v", err)
	}
}

type headerSpy struct {
	got *string
	mu  *sync.Mutex
}

func (s headerSpy) RoundTrip(r *http.Request) (*http.Response, error) {
	s.mu.Lock()
	*s.got = r.Header.Get("X-Test")
	s.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

// TestRefusedInit: a refusal in InitFunc with a close code (as feedd's
// 4401, sign in again) fails Dial with that code.
func TestRefusedInit(t *testing.T) {
	_, url := server(t, transport.Websocket{
		InitFunc: func(ctx context.Context, _ transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			return transport.WithWebsocketCloseCode(ctx, 4401), nil, errors.New("token expired")
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, url, Options{})
	if err == nil {
		c.Close()
		t.Fatal("Dial succeeded, want the refusal")
	}
	if code := CloseCode(err); code != 4401 {
		t.Errorf("Dial: %v, close code %d, want 4401", err, code)
	}
}

// TestAnswersPings: with the server pinging every 250ms and closing a
// connection that misses a pong for two intervals, events keep arriving
// for eight, and the connection stays up. (Shorter intervals fail a busy
// machine's scheduling, not the client.)
func TestAnswersPings(t *testing.T) {
	const interval = 250 * time.Millisecond
	h, url := server(t, transport.Websocket{PingPongInterval: interval})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	events, err := c.Chan(ctx, "subscription { name }", nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for end := time.Now().Add(8 * interval); time.Now().Before(end) || n < 2; n++ {
		if e := next(t, h, events); e.Type != TypeNext {
			t.Fatalf("event %d: %+v (connection: %v)", n, e, c.Err())
		}
	}
	if err := c.Err(); err != nil {
		t.Errorf("the connection ended: %v", err)
	}
}

// TestEndTellsSubscriptions: when the server ends the connection (its
// context ends: feedd's shutdown), every open subscription gets a last
// event with the error, and Err says it.
func TestEndTellsSubscriptions(t *testing.T) {
	ended := make(chan context.CancelFunc, 1)
	_, url := server(t, transport.Websocket{
		InitFunc: func(ctx context.Context, _ transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			ctx, cancel := context.WithCancel(ctx)
			ended <- cancel
			return ctx, nil, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, url, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	events, err := c.Chan(ctx, "subscription { name }", nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	(<-ended)()
	select {
	case e := <-events:
		if e.Type != "" || e.Err == nil {
			t.Errorf("last event %+v, want the connection's end", e)
		}
	case <-ctx.Done():
		t.Fatal("no event at the connection's end")
	}
	<-c.Done()
	if c.Err() == nil {
		t.Error("Err is nil after the end")
	}
	if _, err := c.Subscribe(ctx, "subscription { name }", nil, func(Event) {}); err == nil {
		t.Error("Subscribe on an ended connection succeeded")
	}
}

// TestRefusedUpgrade: an upgrade the server answers with a status, not
// 101 (feedd's 503 past --max-connections), fails Dial with a
// StatusError that says the status.
func TestRefusedUpgrade(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "too many connections", http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http"), Options{})
	if err == nil {
		c.Close()
		t.Fatal("Dial succeeded against a refusal")
	}
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusServiceUnavailable || CloseCode(err) != -1 {
		t.Errorf("Dial: %v (%T), want a StatusError with 503 and no close code", err, err)
	}
}
