package feedcore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// ownClientStore opens a store with a client of its own, named name in
// CLIENT LIST, under st's prefix (whose cleanup deletes the keys).
func ownClientStore(tb testing.TB, st *storetest.Store, name string) *storetest.Store {
	tb.Helper()
	own, err := redisstore.Open(context.Background(), redisstore.Options{URL: os.Getenv(storetest.Env), ClientName: name, Timeout: 30 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(own.Close)
	return &storetest.Store{Store: own, Prefix: st.Prefix, Real: true}
}

// killSubscribers kills, on every node, the connections named name that
// hold a subscription: this test's own, never another client's.
func killSubscribers(tb testing.TB, st *storetest.Store, name string) int {
	tb.Helper()
	ctx := context.Background()
	killed := 0
	for _, n := range st.Client.Nodes() {
		list, err := n.Do(ctx, n.B().ClientList().Build()).ToString()
		if err != nil {
			tb.Fatal(err)
		}
		for _, line := range strings.Split(list, "\n") {
			f := map[string]string{}
			for _, kv := range strings.Fields(line) {
				k, v, _ := strings.Cut(kv, "=")
				f[k] = v
			}
			if f["name"] != name || f["ssub"] == "0" && f["sub"] == "0" {
				continue
			}
			id, err := strconv.ParseInt(f["id"], 10, 64)
			if err != nil {
				tb.Fatalf("CLIENT LIST line %q: %v", line, err)
			}
			if err := n.Do(ctx, n.B().ClientKill().Id(id).Build()).Error(); err != nil {
				tb.Fatal(err)
			}
			killed++
		}
	}
	return killed
}

// A replica whose Redis link drops resubscribes by itself: its
// subscriptions' connections are killed (CLIENT KILL ID, this test's
// client alone, found by its name), the losses and resubscriptions are
// counted, and updates flow again. RealtimeReady's error in the gap is
// logged when the test happens to see it.
func TestRealtimeResubscribes(t *testing.T) {
	storetest.RequireReal(t)
	st := storetest.New(t)
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "feedd-test-rt-" + hex.EncodeToString(b[:])
	s := newService(t, ownClientStore(t, st, name), Options{})
	startWorkers(t, s, WorkerOptions{})
	mustUsers(t, s, 1, 2)
	follow(t, s, 1, []store.ID{2})
	drain(t, s)
	startRealtime(t, s, rtOptions)
	u := &updates{ch: followingUpdates(t, s, 1, "")}
	waitFor(t, "the moderation and viewer channels", func() bool { return s.RealtimeStats().Channels == 2 })
	before := s.RealtimeStats()
	if n := killSubscribers(t, st, name); n == 0 {
		t.Fatal("no subscribed connection of this test's client found")
	}
	sawDown := false
	waitFor(t, "both subscriptions back", func() bool {
		sawDown = sawDown || s.RealtimeReady() != nil
		st := s.RealtimeStats()
		return st.Resubscribes >= before.Resubscribes+2 && st.Channels == 2
	})
	if st := s.RealtimeStats(); st.LinkLosses < before.LinkLosses+2 {
		t.Errorf("%d link losses counted, want at least 2 more than %d", st.LinkLosses, before.LinkLosses)
	}
	if err := s.RealtimeReady(); err != nil {
		t.Errorf("ready after resubscribing: %v", err)
	}
	t.Logf("RealtimeReady seen failing in the gap: %v", sawDown)
	if _, err := s.Publish(context.Background(), 2, "after the drop"); err != nil {
		t.Fatal(err)
	}
	u.awaitCount(t, 1, []store.ID{2})
}

// Every goroutine a subscription holds ends with it: subscriptions of
// both kinds opened, told of a post and closed leave the replica with
// the goroutines it had before. A first round warms the client up (on a
// cluster it connects to the nodes of the channels' slots, and a
// connection's goroutines stay with it).
func TestRealtimeReleasesSubscriptions(t *testing.T) {
	s := testService(t, Options{})
	mustUsers(t, s, 1, 2, 3)
	follow(t, s, 1, []store.ID{2})
	follow(t, s, 3, []store.ID{2})
	drain(t, s)
	startRealtime(t, s, rtOptions)
	round := func() {
		ctx, cancel := context.WithCancel(context.Background())
		var chans []<-chan FollowingUpdate
		for _, v := range []store.ID{1, 3} {
			ch, err := s.FollowingFeedUpdates(ctx, v, "")
			if err != nil {
				t.Fatal(err)
			}
			chans = append(chans, ch)
			if _, err := s.LiveFeedUpdates(ctx, v); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Publish(ctx, 2, "x"); err != nil {
			t.Fatal(err)
		}
		for _, ch := range chans {
			(&updates{ch: ch}).await(t, "the post", func(u *updates) bool { return u.last.NewPostCount > 0 })
		}
		cancel()
		for _, ch := range chans {
			for range ch {
			}
		}
		waitFor(t, "the subscriptions to close", func() bool { return s.RealtimeStats().Subscriptions == 0 })
		waitFor(t, "the channels to go", func() bool { return s.RealtimeStats().Channels == 1 })
	}
	round()
	base := runtime.NumGoroutine()
	round()
	waitFor(t, "the goroutines to end", func() bool { return runtime.NumGoroutine() <= base })
}
