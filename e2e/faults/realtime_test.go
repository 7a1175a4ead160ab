package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	graphql "github.com/hasura/go-graphql-client"

	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/server"
)

// TestRealtimeFailover keeps a followingFeedUpdates subscriber (over
// graphql-transport-ws, as an app holds one) through the failover of the
// master that serves its notices: the slot of its bucket's channel and
// presence set. A post before the kill is counted; one published while the
// master is down (its publish retried until acknowledged) and one after
// the killed node is back as a replica are counted too, each within a
// minute: the replica resubscribed by itself (its resubscribe counter
// grew), caught up on what the gap may have hidden, and the WebSocket
// never closed. /readyz answers 200 again after the failover.
func TestRealtimeFailover(t *testing.T) {
	st, cl := faultCluster(t)
	ctx := context.Background()
	svc, err := feedcore.New(ctx, st.Client, feedcore.Options{Prefix: st.Prefix, BigVThreshold: 1 << 30,
		CursorKey: []byte("realtime-failover-cursor-key-01234567")})
	if err != nil {
		t.Fatal(err)
	}
	const author feedcore.ID = 1
	viewer := makeFollowers(t, svc, author, 20)[0]

	var workerLog, serverLog kinds
	wctx, stopWorkers := context.WithCancel(ctx)
	workersDone := make(chan struct{})
	go func() {
		defer close(workersDone)
		_ = svc.RunWorkers(wctx, feedcore.WorkerOptions{Name: "realtime-failover", ReclaimIdle: 2 * time.Second,
			RepairAfter: 5 * time.Second, Block: 50 * time.Millisecond, Logger: countingLogger(&workerLog)})
	}()
	t.Cleanup(func() { stopWorkers(); <-workersDone })
	// Realtime serves subscriptions once this returns (the cluster may be
	// slow to answer after the other failover test).
	feedtest.Realtime(t, svc, feedcore.RealtimeOptions{MinInterval: 100 * time.Millisecond})
	srv := httptest.NewServer(server.New(server.Config{Service: svc, DevAuth: true, Logger: countingLogger(&serverLog)}))
	t.Cleanup(srv.Close)
	poster := client.New(srv.URL+"/query", client.Auth{ViewerID: feedcore.FormatID(author)}, &http.Client{Timeout: 15 * time.Second})

	sub := subscribe(t, "ws"+strings.TrimPrefix(srv.URL, "http")+"/query", feedcore.FormatID(viewer),
		`subscription { followingFeedUpdates { newPostCount newPostAuthors { databaseId } } }`)
	// The layer holds the subscription before the first post: it counts
	// from the top of the feed as it was when it subscribed.
	waitUntil(t, "the realtime layer to hold the subscription", 30*time.Second, func() error {
		select {
		case u := <-sub.updates: // a refusal
			t.Fatalf("the subscription ended before it was held: %s %v", u.data, u.err)
		case <-sub.dropped:
			t.Fatalf("the WebSocket closed before the subscription was held: %v", sub.err())
		default:
		}
		if n := svc.RealtimeStats().Subscriptions; n < 1 {
			return fmt.Errorf("%d subscriptions; RealtimeReady: %v", n, svc.RealtimeReady())
		}
		return nil
	})

	// publish sends post n until it is acknowledged, and returns when the
	// attempt that was began.
	publish := func(n int) time.Time {
		t.Helper()
		key := fmt.Sprintf("realtime-failover-%d", n)
		var last error
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); {
			sent := time.Now()
			actx, cancel := context.WithTimeout(ctx, 10*time.Second)
			_, last = client.PublishPost(actx, poster, client.PublishPostInput{Text: "post " + key, IdempotencyKey: &key})
			cancel()
			if last == nil {
				return sent
			}
			time.Sleep(100 * time.Millisecond) // backoff between retries
		}
		t.Fatalf("post %d not acknowledged within a minute: %v", n, last)
		return time.Time{}
	}
	// expect reads updates until one with newPostCount count, and returns
	// when it arrived.
	expect := func(count int, what string) time.Time {
		t.Helper()
		timeout := time.After(time.Minute)
		for {
			select {
			case u := <-sub.updates:
				if u.err != nil {
					t.Fatalf("%s: the subscription ended: %v", what, u.err)
				}
				var r struct {
					FollowingFeedUpdates struct {
						NewPostCount int `json:"newPostCount"`
					} `json:"followingFeedUpdates"`
				}
				if err := json.Unmarshal(u.data, &r); err != nil {
					t.Fatalf("%s: update %s: %v", what, u.data, err)
				}
				got := r.FollowingFeedUpdates.NewPostCount
				if got > count {
					t.Fatalf("%s: newPostCount %d, want %d", what, got, count)
				}
				if got == count {
					return u.at
				}
			case <-sub.dropped:
				t.Fatalf("%s: the WebSocket closed: %v", what, sub.err())
			case <-timeout:
				t.Fatalf("%s: no update with newPostCount %d within a minute (realtime %+v)",
					what, count, svc.RealtimeStats())
			}
		}
	}

	publish(1)
	expect(1, "before the failover")

	// The master of the viewer's bucket: its channel and presence set.
	channel := svc.Keys.ViewerChannel(store.RealtimeBucket(viewer))
	slot, err := cl.slotOf(channel)
	if err != nil {
		t.Fatal(err)
	}
	port, err := cl.masterOfSlot(cl.ports[0], slot)
	if err != nil {
		t.Fatal(err)
	}
	resubscribes := svc.RealtimeStats().Resubscribes
	killed := time.Now()
	replica, err := cl.kill(port)
	if err != nil {
		t.Fatal(err)
	}
	// A post while the master is down: acknowledged once the cluster
	// lets it be (its own keys may be on any master).
	sent2 := publish(2)
	if err := cl.waitPromoted(port, replica, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	promoted := time.Since(killed)
	during := expect(2, "the post published during the failover").Sub(sent2)
	if err := cl.restart(port); err != nil {
		t.Fatal(err)
	}
	sent3 := publish(3)
	after := expect(3, "the post published after the node rejoined").Sub(sent3)

	waitUntil(t, "the realtime layer to count a resubscribe", 30*time.Second, func() error {
		if n := svc.RealtimeStats().Resubscribes; n <= resubscribes {
			return fmt.Errorf("resubscribes %d, as before the kill", n)
		}
		return nil
	})
	waitUntil(t, "/readyz to answer 200", 30*time.Second, func() error {
		res, err := http.Get(srv.URL + "/readyz")
		if err != nil {
			return err
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			return fmt.Errorf("status %d", res.StatusCode)
		}
		return nil
	})
	if n, c := sub.disconnects.Load(), sub.connects.Load(); n != 0 || c != 1 {
		t.Errorf("the WebSocket closed during the failover: %d disconnects, %d connections (%v)", n, c, sub.err())
	}
	t.Logf("the WebSocket answered %d pings of feedd's meanwhile", sub.pings.Load())
	t.Logf("master %d (slot %d of %s) killed; replica promoted after %.1fs; the post published meanwhile counted %.2fs after its acknowledged publish was sent, the post after the rejoin %.3fs after; realtime %+v",
		port, slot, channel, promoted.Seconds(), during.Seconds(), after.Seconds(), svc.RealtimeStats())
	t.Logf("server warnings and errors (%d):\n%s", serverLog.total(), serverLog.String())
	t.Logf("worker warnings and errors (%d):\n%s", workerLog.total(), workerLog.String())
}

// subscriber is a graphql-transport-ws subscription over one WebSocket
// (hasura/go-graphql-client's SubscriptionClient, as an app holds one),
// and what it saw: its updates (in order, stamped when read), and whether
// the connection ever dropped.
type subscriber struct {
	updates               chan update
	dropped               chan struct{} // closed at the first disconnect
	disconnects, connects atomic.Int64
	pings                 atomic.Int64 // the connection's pings from feedd (OnConnectionAlive)
	lastErr               atomic.Pointer[error]
	closing               atomic.Bool
}

// update is a result's data, or the error that ended the subscription.
type update struct {
	data []byte
	err  error
	at   time.Time
}

// subscribe opens a WebSocket to url as viewer (dev auth, in
// connection_init's payload), starts query, and waits (up to 30s) for
// feedd's connection_ack. The client's own reconnection stays on, as an
// app's would: a disconnect is what the test looks for, not what it hides.
func subscribe(t *testing.T, url, viewer, query string) *subscriber {
	t.Helper()
	s := &subscriber{updates: make(chan update, 64), dropped: make(chan struct{})}
	connected := make(chan struct{})
	var dropOnce sync.Once
	sc := graphql.NewSubscriptionClient(url).
		WithProtocol(graphql.GraphQLWS).
		WithConnectionParams(map[string]any{client.DevHeader: viewer}).
		WithSyncMode(true). // in order, on the reader: each arrival stamped as read
		OnConnected(func() {
			if s.connects.Add(1) == 1 {
				close(connected)
			}
		}).
		OnConnectionAlive(func() { s.pings.Add(1) }).
		OnDisconnected(func() {
			if !s.closing.Load() {
				s.disconnects.Add(1)
				dropOnce.Do(func() { close(s.dropped) })
			}
		}).
		OnError(func(_ *graphql.SubscriptionClient, err error) error {
			s.lastErr.Store(&err)
			return err
		}).
		OnSubscriptionComplete(func(graphql.Subscription) {
			s.updates <- update{err: errors.New("complete from feedd"), at: time.Now()}
		})
	if _, err := sc.Exec(query, nil, func(data []byte, err error) error {
		s.updates <- update{data: data, err: err, at: time.Now()}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan error, 1)
	go func() { ran <- sc.RunWithContext(ctx) }()
	t.Cleanup(func() {
		s.closing.Store(true)
		_ = sc.Close()
		cancel()
		<-ran
	})
	select {
	case <-connected:
	case err := <-ran:
		t.Fatalf("subscribe: the client ended before connection_ack: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatalf("subscribe: no connection_ack within 30s (%v)", s.err())
	}
	return s
}

// err is the error that ended the connection, if the client saw one.
func (s *subscriber) err() error {
	if p := s.lastErr.Load(); p != nil {
		return *p
	}
	return nil
}

// waitUntil polls check until it returns nil, or fails the test at the
// deadline with its last error.
func waitUntil(t *testing.T, what string, within time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s: %v", within, what, err)
		}
		time.Sleep(20 * time.Millisecond) // poll interval, not a synchronisation
	}
}
