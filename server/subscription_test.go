package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
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
	const short = 300 * time.Millisecond
	e := newStreamEnv(t, func(c *Config) {
		c.RequestTimeout = short
		c.Streams.PingInterval = short / 3
	}, func(s *http.Server) {
		s.ReadTimeout, s.WriteTimeout = short, short
	})
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
	past := time.Now().Add(3 * short)
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
	// bob is an anchor (has had a session) before ann subscribes.
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
	c.result("live").as(t, &d)
	if u := d.LiveFeedUpdates; u.State != "PREVIEW" || u.Session.Title != "soon" || u.Session.Anchor.Handle != "bob" {
		t.Errorf("live update %+v", u)
	}
}
