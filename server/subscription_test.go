package server

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/redisstore/storetest"
)

// Subscriptions end to end: the realtime layer runs (Start), the fan-out
// workers too, and a client subscribes over a WebSocket or SSE while
// another user writes through GraphQL.

// followingSub is the followingFeedUpdates subscription of these tests.
const followingSub = `subscription Pill($since: String) {
  followingFeedUpdates(since: $since) { newPostCount newPostAuthors { handle } deletedPostIds }
}`

// liveSub is the liveFeedUpdates subscription of these tests.
const liveSub = `subscription Live { liveFeedUpdates { state session { id title anchor { handle } } } }`

// pill is a followingFeedUpdates update.
type pill struct {
	FollowingFeedUpdates struct {
		NewPostCount   int
		NewPostAuthors []struct{ Handle string }
		DeletedPostIds []string
	}
}

func (p pill) authors() []string {
	var hs []string
	for _, a := range p.FollowingFeedUpdates.NewPostAuthors {
		hs = append(hs, a.Handle)
	}
	return hs
}

// testRealtime are fast realtime options: updates coalesced over 20ms.
var testRealtime = feedcore.RealtimeOptions{MinInterval: 20 * time.Millisecond}

// startRealtime runs the env's realtime and fan-out workers until the test
// ends, and waits until realtime serves subscriptions.
func (e *env) startRealtime(o feedcore.RealtimeOptions) {
	e.t.Helper()
	e.workers()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.svc.Start(ctx, o) }()
	e.t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			e.t.Errorf("realtime: %v", err)
		}
	})
	waitFor(e.t, "realtime to run", e.svc.RealtimeRunning)
}

// subscribed waits until the realtime layer holds n subscriptions: a
// notice from then on reaches them.
func (e *env) subscribed(n int64) {
	e.t.Helper()
	waitFor(e.t, "the subscriptions to be made", func() bool { return e.svc.RealtimeStats().Subscriptions == n })
}

// await reads c's updates of operation id until one satisfies cond,
// failing the test if the stream ends or errs first.
func (c *wsClient) await(id, what string, cond func(pill) bool) pill {
	c.t.Helper()
	for {
		var p pill
		c.result(id).as(c.t, &p)
		if cond(p) {
			return p
		}
		c.t.Logf("waiting for %s; got %+v", what, p)
	}
}

// TestSubscriptionFollowingCounts: a followee's post reaches a subscriber
// as newPostCount 1 with its author, counted by the page's rules (a muted
// followee's post is not); its deletion arrives as its global id in
// deletedPostIds. The first answer carries the subscription's cost.
func TestSubscriptionFollowingCounts(t *testing.T) {
	e := newStreamEnv(t, nil, nil)
	e.users("ann", "bob", "cat")
	ctx := context.Background()
	for _, id := range []feedcore.ID{2, 3} {
		if err := e.svc.Follow(ctx, 1, id); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.svc.Mute(ctx, 1, 3, 0); err != nil {
		t.Fatal(err)
	}
	e.startRealtime(testRealtime)
	e.drain()
	c := e.mustDial(auth.DevHeader, "1")
	c.init(nil)
	c.subscribe("pill", followingSub, nil)
	e.subscribed(1)
	e.publish(3, "muted")
	post := e.publish(2, "hello")
	var first *gqlResponse
	for {
		first = c.result("pill")
		var p pill
		first.as(t, &p)
		if p.FollowingFeedUpdates.NewPostCount > 0 {
			if p.FollowingFeedUpdates.NewPostCount != 1 || !slices.Equal(p.authors(), []string{"bob"}) {
				t.Fatalf("update %+v, want 1 new post by bob (cat is muted)", p)
			}
			break
		}
	}
	for _, m := range []struct {
		name   string
		labels []string
	}{
		{"feedd_subscriptions_open", []string{"field", "followingFeedUpdates"}},
		{"feedd_stream_connections_open", []string{"transport", "websocket"}},
		{"feedd_realtime_subscriptions", nil},
		{"feedd_realtime_notices_sent_total", nil}, // counted once the update is handed on
	} {
		waitFor(t, m.name+" at 1 or more", func() bool {
			n, _ := gather(t, e.metrics.Registry()).value(m.name, m.labels...)
			return n >= 1
		})
	}
	e.do(2, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": post})
	c.await("pill", "the delete", func(p pill) bool {
		return slices.Contains(p.FollowingFeedUpdates.DeletedPostIds, post)
	})
	if id, err := gqltype.DecodeAs(post, gqltype.Post); err != nil || id == 0 {
		t.Errorf("deletedPostIds holds %q, not a global Post id", post)
	}
	c.send("complete", "pill", nil)
	e.subscribed(0)
	if n, _ := gather(t, e.metrics.Registry()).value("feedd_subscriptions_open", "field", "followingFeedUpdates"); n != 0 {
		t.Errorf("subscriptions open after complete: %v", n)
	}
}

// TestSubscriptionCost: subscribing spends the viewer's allowance like any
// operation, once, before it subscribes: the first answer says what it
// cost, and a subscription the allowance cannot pay for is refused with
// RATE_LIMITED without being made.
func TestSubscriptionCost(t *testing.T) {
	e := newStreamEnv(t, func(c *Config) {
		// One subscription (about 30 points) fits, two do not; the
		// allowance refills too slowly to matter.
		c.RateLimit = feedcore.RateLimit{Rate: 0.001, Burst: 45}
	}, nil)
	e.users("ann", "bob")
	if err := e.svc.Follow(context.Background(), 1, 2); err != nil {
		t.Fatal(err)
	}
	e.startRealtime(testRealtime)
	c := e.mustDial(auth.DevHeader, "1")
	c.init(nil)
	c.subscribe("a", followingSub, nil)
	e.subscribed(1)
	if _, err := e.svc.Publish(context.Background(), 2, "x"); err != nil {
		t.Fatal(err)
	}
	r := c.result("a")
	cost, _ := r.Extensions["cost"].(map[string]any)
	if req, _ := cost["requested"].(float64); req < costFollowingUpdates || req > 45 {
		t.Errorf("first answer's cost %v, want between %d and 45 points", r.Extensions["cost"], costFollowingUpdates)
	}
	if rem, _ := cost["remaining"].(float64); rem >= 45 {
		t.Errorf("remaining %v: nothing was spent", cost["remaining"])
	}
	c.subscribe("b", followingSub, nil)
	r = c.result("b")
	if r.code() != "RATE_LIMITED" || len(r.Data) > 0 && string(r.Data) != "null" {
		t.Errorf("second subscription: %+v, want RATE_LIMITED and no data", r)
	}
	c.expect("complete", "b")
	if n := e.svc.RealtimeStats().Subscriptions; n != 1 {
		t.Errorf("%d subscriptions held, want 1: the refused one was made", n)
	}
}

// TestSubscriptionPerViewerLimit: past --max-subscriptions-per-viewer a
// subscription is refused with RATE_LIMITED (and counted); completing one
// makes room.
func TestSubscriptionPerViewerLimit(t *testing.T) {
	e := newStreamEnv(t, nil, nil)
	e.users("ann")
	o := testRealtime
	o.MaxPerViewer = 2
	e.startRealtime(o)
	c := e.mustDial(auth.DevHeader, "1")
	c.init(nil)
	c.subscribe("1", followingSub, nil)
	c.subscribe("2", liveSub, nil)
	e.subscribed(2)
	c.subscribe("3", followingSub, nil)
	if r := c.result("3"); r.code() != "RATE_LIMITED" {
		t.Fatalf("third subscription: %+v, want RATE_LIMITED", r.Errors)
	}
	c.expect("complete", "3")
	if n, _ := gather(t, e.metrics.Registry()).value("feedd_stream_refusals_total", "transport", "websocket", "code", "RATE_LIMITED"); n != 1 {
		t.Errorf("refusals counted: %v, want 1", n)
	}
	c.send("complete", "1", nil)
	e.subscribed(1)
	c.subscribe("4", followingSub, nil)
	e.subscribed(2)
}

// TestSubscriptionSSE: over server-sent events a subscription receives
// its updates, and outlives the request timeout and the HTTP server's
// read and write timeouts (the stream clears its deadlines; its writes
// have their own).
func TestSubscriptionSSE(t *testing.T) {
	e := newShortTimeoutsEnv(t)
	e.users("ann", "bob")
	if err := e.svc.Follow(context.Background(), 1, 2); err != nil {
		t.Fatal(err)
	}
	e.startRealtime(testRealtime)
	s, res := e.sse(context.Background(), followingSub, nil, auth.DevHeader, "1")
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("status %d, %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	e.subscribed(1)
	past := time.Now().Add(3 * shortTimeouts)
	waitFor(t, "every timeout to pass", func() bool { return time.Now().After(past) })
	e.publish(2, "hello")
	for {
		var p pill
		s.next().as(t, &p)
		if p.FollowingFeedUpdates.NewPostCount == 1 {
			break
		}
	}
	if n, _ := gather(t, e.metrics.Registry()).value("feedd_stream_connections_open", "transport", "sse"); n != 1 {
		t.Errorf("open event streams: %v, want 1", n)
	}
}

// TestSubscriptionTokenExpirySSE: an event stream has no close code; at
// its token's expiry it ends with an UNAUTHENTICATED error, then complete.
func TestSubscriptionTokenExpirySSE(t *testing.T) {
	e := newStreamEnv(t, nil, nil)
	e.users("ann")
	e.startRealtime(testRealtime)
	s, _ := e.sse(context.Background(), liveSub, nil, "Authorization", "Bearer "+token(t, 1, 2*time.Second))
	e.subscribed(1)
	r := s.next()
	if r.code() != "UNAUTHENTICATED" || !strings.Contains(r.Errors[0].Message, "expired") {
		t.Fatalf("at expiry: %+v, want UNAUTHENTICATED, expired", r.Errors)
	}
	if name, _, err := s.event(); name != "complete" || err != nil {
		t.Errorf("then %q (%v), want complete", name, err)
	}
	e.subscribed(0)
}

// TestSubscriptionLiveUpdates: an anchor the viewer follows scheduling a
// session reaches the viewer, with the session's anchor hydrated.
func TestSubscriptionLiveUpdates(t *testing.T) {
	e := newStreamEnv(t, nil, nil)
	e.users("ann", "bob")
	if err := e.svc.Follow(context.Background(), 1, 2); err != nil {
		t.Fatal(err)
	}
	// bob has had a session before ann subscribes, which a catch-up may send.
	if _, err := e.svc.ScheduleLiveSession(context.Background(), 2, feedcore.NewLive{Title: "first",
		ScheduledStartAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	e.startRealtime(testRealtime)
	c := e.mustDial(auth.DevHeader, "1")
	c.init(nil)
	c.subscribe("live", liveSub, nil)
	e.subscribed(1)
	if _, err := e.svc.ScheduleLiveSession(context.Background(), 2, feedcore.NewLive{Title: "soon",
		ScheduledStartAt: time.Now().Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	var d struct {
		LiveFeedUpdates struct {
			State   string
			Session struct {
				ID, Title string
				Anchor    struct{ Handle string }
			}
		}
	}
	// A catch-up (the subscription's channels confirmed) may send the
	// first session before.
	for d.LiveFeedUpdates.Session.Title != "soon" {
		c.result("live").as(t, &d)
	}
	if u := d.LiveFeedUpdates; u.State != "PREVIEW" || u.Session.Anchor.Handle != "bob" {
		t.Errorf("live update %+v", u)
	}
}

// TestReadyzRealtimeDown: a replica whose realtime link is down is not
// ready, and says why, though its store answers: its subscribers would
// hear nothing (Mastodon #25157). Here the store answers PING and refuses
// every other command, so realtime never gets its sharded pub/sub.
func TestReadyzRealtimeDown(t *testing.T) {
	svc := serviceOnFake(t, storetest.ErrorReply("ERR refused by the test"))
	srv := httptest.NewServer(New(Config{Service: svc, Metrics: NewMetrics(), Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	e := &opsEnv{env: &env{t: t, svc: svc, srv: srv}}
	if status, body := e.get("/readyz"); status != http.StatusOK {
		t.Fatalf("before realtime starts: %d %s, want ready", status, body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- svc.Start(ctx, testRealtime) }()
	t.Cleanup(func() { cancel(); <-done })
	var status int
	var body string
	waitFor(t, "readyz to report the realtime link", func() bool {
		status, body = e.get("/readyz")
		return status != http.StatusOK
	})
	var a struct {
		Ready  bool
		Reason string
	}
	if err := json.Unmarshal([]byte(body), &a); err != nil || status != http.StatusServiceUnavailable || a.Ready ||
		!strings.HasPrefix(a.Reason, RealtimeDownReason) {
		t.Errorf("readyz: %d %s, want 503 with the reason %q", status, body, RealtimeDownReason)
	}
}

// TestSubscriptionAcrossReplicas: a subscriber on replica A is told of a
// post made through replica B: notices travel between replicas through
// Redis (sharded pub/sub), on one Redis as on a cluster. The embedded
// store serves one process, where notices never leave it.
func TestSubscriptionAcrossReplicas(t *testing.T) {
	storetest.RequireReal(t)
	st := storetest.New(t)
	a := newStreamEnvOn(t, st, nil, nil)
	b := newStreamEnvOn(t, st, nil, nil)
	a.users("ann", "bob")
	if err := a.svc.Follow(context.Background(), 1, 2); err != nil {
		t.Fatal(err)
	}
	a.startRealtime(testRealtime) // A's workers run the fan-out too, as any worker would
	b.startRealtime(testRealtime)
	c := a.mustDial(auth.DevHeader, "1")
	c.init(nil)
	c.subscribe("pill", followingSub, nil)
	a.subscribed(1)
	b.publish(2, "from replica B")
	p := c.await("pill", "B's post", func(p pill) bool { return p.FollowingFeedUpdates.NewPostCount == 1 })
	if !slices.Equal(p.authors(), []string{"bob"}) {
		t.Errorf("authors %v, want bob", p.authors())
	}
	if n := b.svc.RealtimeStats().Subscriptions; n != 0 {
		t.Errorf("replica B holds %d subscriptions: the notice did not cross", n)
	}
}

// TestSubscriptionSlowClientDropped: a client that never reads while its
// updates flow is dropped once its buffers are full (a write to it takes
// longer than the stream write timeout), never buffered for without
// bound; over a WebSocket and over SSE. Both ends' socket buffers are
// made small, so that a few KiB of updates fill them. The realtime
// layer's own queue of live updates is made long: on a busy machine the
// updates' reads fall behind the sessions made here, and that queue would
// fill first and end the subscription (its own bound, tested in
// feedcore), which leaves a WebSocket open with nothing to send.
func TestSubscriptionSlowClientDropped(t *testing.T) {
	for _, tr := range []string{transportWebsocket, transportSSE} {
		t.Run(tr, func(t *testing.T) { slowClientDropped(t, tr) })
	}
}

func slowClientDropped(t *testing.T, tr string) {
	e := newStreamEnv(t, func(c *Config) { c.Streams.WriteTimeout = 200 * time.Millisecond },
		func(s *httptest.Server) { s.Listener = smallBuffers{s.Listener} })
	e.users("ann", "bob")
	ctx := context.Background()
	if err := e.svc.Follow(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	long := testRealtime
	long.LiveQueue = 1 << 20
	e.startRealtime(long)
	title := strings.Repeat("a long title to fill buffers ", 6)
	session := func() {
		l, err := e.svc.ScheduleLiveSession(ctx, 2, feedcore.NewLive{Title: title, ScheduledStartAt: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.svc.EndLive(ctx, 2, l.ID); err != nil {
			t.Fatal(err)
		}
	}
	session() // bob is an anchor already
	if tr == transportWebsocket {
		c := e.dialSmall(auth.DevHeader, "1")
		c.init(nil)
		c.subscribe("live", liveSub, nil)
	} else {
		e.sseSmall(liveSub, auth.DevHeader, "1")
	}
	e.subscribed(1)
	deadline := time.Now().Add(streamWait)
	sessions := 0
	for e.conns.Open(tr) > 0 { // the client reads nothing from here on
		if time.Now().After(deadline) {
			t.Fatalf("a client that reads nothing still connected after %d sessions", sessions)
		}
		session()
		sessions++
	}
	slow, _ := gather(t, e.metrics.Registry()).value("feedd_stream_slow_clients_dropped_total", "transport", tr)
	if slow < 1 && e.svc.RealtimeStats().SlowDropped < 1 {
		t.Errorf("dropped after %d sessions, but neither the stream nor the realtime layer counted a slow client", sessions)
	}
	t.Logf("dropped after %d sessions (stream: %v slow; realtime: %d)", sessions, slow, e.svc.RealtimeStats().SlowDropped)
}

// smallBuffers is a listener whose connections have a small send buffer.
type smallBuffers struct{ net.Listener }

func (l smallBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(1 << 10)
	}
	return c, err
}

// smallClient is an HTTP client whose connections have a small receive
// buffer.
func smallClient() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(1 << 10)
		}
		return c, err
	}}}
}

// sseSmall starts an event stream of query over a connection with a
// small receive buffer, and never reads it.
func (e *env) sseSmall(query string, headers ...string) {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := smallClient().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { res.Body.Close() })
}

// dialSmall is mustDial over a connection with a small receive buffer.
func (e *env) dialSmall(headers ...string) *wsClient {
	e.t.Helper()
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), streamWait)
	defer cancel()
	c, _, err := websocket.Dial(ctx, e.wsURL(), &websocket.DialOptions{HTTPHeader: h,
		Subprotocols: []string{"graphql-transport-ws"}, HTTPClient: smallClient()})
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = c.CloseNow() })
	return &wsClient{t: e.t, c: c}
}

// TestShutdownEndsEventStreams: GoAway (the server shutting down) ends an
// event stream without its complete event, which graphql-sse takes for a
// lost connection and reconnects, to another replica.
func TestShutdownEndsEventStreams(t *testing.T) {
	e := newStreamEnv(t, nil, nil)
	e.users("ann")
	e.startRealtime(testRealtime)
	s, _ := e.sse(context.Background(), liveSub, nil, auth.DevHeader, "1")
	e.subscribed(1)
	e.conns.GoAway()
	for {
		name, data, err := s.event()
		if err != nil {
			break // the stream ended
		}
		t.Errorf("after GoAway: event %q %s, want the stream to end without one", name, data)
	}
	e.subscribed(0)
}

// TestSubscriptionBadInput: a subscription the server cannot make is an
// error with a code, then complete, and the connection serves on: a
// since that is no cursor of the viewer's feed, a subscription without a
// viewer (over SSE: a WebSocket would not have been accepted), a
// subscribe message that is not JSON.
func TestSubscriptionBadInput(t *testing.T) {
	e := newStreamEnv(t, nil, nil)
	e.users("ann")
	e.startRealtime(testRealtime)
	c := e.mustDial(auth.DevHeader, "1")
	c.init(nil)
	c.subscribe("1", followingSub, map[string]any{"since": "garbage"})
	if r := c.result("1"); r.code() != "INVALID_CURSOR" {
		t.Errorf("since garbage: %+v, want INVALID_CURSOR", r.Errors)
	}
	c.expect("complete", "1")
	if err := c.write([]byte(`{"type":"subscribe","id":"2","payload":{"query": 7}}`)); err != nil {
		t.Fatal(err)
	}
	if m := c.next(); m.ID != "2" || m.Type != "error" && m.Type != "next" {
		t.Errorf("a payload that is no request: %s %s", m.Type, m.Payload)
	}
	c.expect("complete", "2") // gqlgen completes it too
	if h := c.who("3"); h != "ann" {
		t.Errorf("the connection after bad input: viewer %q", h)
	}
	s, _ := e.sse(context.Background(), followingSub, nil)
	if r := s.next(); r.code() != "UNAUTHENTICATED" {
		t.Errorf("anonymous over SSE: %+v, want UNAUTHENTICATED", r.Errors)
	}
	if n := e.svc.RealtimeStats().Subscriptions; n != 0 {
		t.Errorf("%d subscriptions made of bad input", n)
	}
}
