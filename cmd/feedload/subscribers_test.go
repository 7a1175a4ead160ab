package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/cmd/feedload/loadreport"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/server"
)

func TestRealtimeFlags(t *testing.T) {
	var stderr bytes.Buffer
	f, err := parseFlags([]string{"--skip-build", "--subscribers", "10", "--url", "https://feedd.example/query"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	rt := f.load.Realtime
	if rt.Subscribers != 10 || rt.WSURL != "wss://feedd.example/query" || rt.NoticePosts != 20 || rt.NoticeGap != time.Second ||
		rt.NoticeTimeout != 10*time.Second || rt.FanoutPosts != 0 || rt.OpenConcurrency != 64 {
		t.Errorf("--subscribers 10: %+v", rt)
	}
	if f, err := parseFlags([]string{"--skip-build"}, &stderr); err != nil || f.load.Realtime.Subscribers != 0 || f.load.Realtime.WSURL != "" {
		t.Errorf("default: %+v, %v", f.load.Realtime, err)
	}
	t.Run("env", func(t *testing.T) {
		t.Setenv("FEED_SUBSCRIBERS", "3")
		if f, err := parseFlags([]string{"--redis", "redis://x", "--fanout-posts", "50", "--notice-posts", "0"}, &stderr); err != nil ||
			f.load.Realtime.Subscribers != 3 || f.load.Realtime.FanoutPosts != 50 || f.load.Realtime.NoticePosts != 0 ||
			f.load.Realtime.WSURL != "ws://127.0.0.1:8080/query" {
			t.Errorf("FEED_SUBSCRIBERS=3 --fanout-posts 50: %+v, %v", f.load.Realtime, err)
		}
	})
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--skip-build", "--subscribers", "-1"}, "--subscribers must not be negative"},
		{[]string{"--skip-build", "--notice-posts", "5"}, "need --subscribers"},
		{[]string{"--skip-build", "--fanout-posts", "5"}, "need --subscribers"},
		{[]string{"--skip-build", "--subscribers", "10", "--compare", "http://127.0.0.1:2/query"}, "not with --compare"},
		{[]string{"--skip-build", "--subscribers", "10", "--fanout-posts", "100"}, "--fanout-posts needs --redis"},
		{[]string{"--skip-build", "--subscribers", "10", "--notice-timeout", "0s"}, "--notice-timeout must be positive"},
		{[]string{"--skip-build", "--subscribers", "10", "--notice-gap", "-1s"}, "--notice-gap must not be negative"},
		{[]string{"--skip-build", "--subscribers", "10", "--notice-posts", "-1"}, "must not be negative"},
		{[]string{"--skip-build", "--subscribers", "10", "--subscribe-concurrency", "0"}, "--subscribe-concurrency"},
		{[]string{"--skip-build", "--subscribers", "10", "--url", "ftp://feedd/query"}, "--url"},
	} {
		if _, err := parseFlags(tc.args, &stderr); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%q: %v, want an error with %q", tc.args, err, tc.wantErr)
		}
	}
}

// TestSubscribers builds the tiny network, serves it with realtime (a
// 100ms coalescing interval) and its fan-out workers in this process, and
// runs the load with --subscribers 150 (some of the 120 users hold two)
// and the fan-out bursts: every subscription opens and feedd counts them,
// every update due to the probe's posts arrives and is timed, the bursts
// are measured with none and with 150 open, and the report says it all.
// With a JWT, the subscribers identify in connection_init's payload as
// Authorization; with dev auth, as X-Viewer-Id.
func TestSubscribers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		secret []byte
	}{{"dev-auth", nil}, {"jwt", []byte("feedload-test-secret-0123456789ab")}} {
		t.Run(tc.name, func(t *testing.T) {
			st := storetest.New(t)
			var log bytes.Buffer
			svc := newService(t, st, st.Prefix)
			feedtest.Realtime(t, svc, feedcore.RealtimeOptions{MinInterval: 100 * time.Millisecond})
			if _, err := build(context.Background(), svc, testSpec, "", &log); err != nil {
				t.Fatalf("build: %v\n%s", err, log.String())
			}
			ts := serve(t, svc, tc.secret)
			rep := &loadreport.Report{}
			cfg := loadConfig{URL: ts.srv.URL + "/query", Users: testSpec.Users, Concurrency: 2, Duration: time.Second,
				Pages: 2, PageSize: 5, WriteRatio: 0.1, Seed: 1, Secret: tc.secret, Progress: &log, Backlog: svc.Backlog,
				Drain: svc.Drain, MetricsURL: ts.srv.URL + "/metrics", Redis: st.Client, Interval: 500 * time.Millisecond,
				Realtime: realtimeConfig{Subscribers: 150, OpenConcurrency: 8, WSURL: "ws" + strings.TrimPrefix(ts.srv.URL, "http") + "/query",
					NoticePosts: 3, NoticeGap: 100 * time.Millisecond, NoticeTimeout: 20 * time.Second, FanoutPosts: 20}}
			if err := runLoad(context.Background(), cfg, rep); err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			var out bytes.Buffer
			if err := rep.Print(&out, false); err != nil {
				t.Fatal(err)
			}
			t.Logf("\n%s", out.String())

			r := rep.Realtime
			if r == nil {
				t.Fatal("no realtime figures in the report")
			}
			if r.Subscribers != 150 || r.Open != 150 || len(r.OpenErrors) != 0 || r.Viewers != 120 || r.OpenSeconds <= 0 {
				t.Errorf("opened %d of %d over %d viewers in %.2fs, errors %v", r.Open, r.Subscribers, r.Viewers, r.OpenSeconds, r.OpenErrors)
			}
			if r.ServerSubscriptions == nil || *r.ServerSubscriptions < 150 || r.GaugeNote != "" {
				t.Errorf("feedd's gauge: %v (%s), want 150", r.ServerSubscriptions, r.GaugeNote)
			}
			if m := r.Memory; m.Error != "" || m.RSSAfter <= 0 || m.HeapInuseAfter <= 0 {
				t.Errorf("memory %+v", m)
			}
			n := r.Notices
			if n.Error != "" || n.Posts != 3 || n.Expected == 0 || n.Received != n.Expected || n.Missed != 0 || n.Unexpected != 0 ||
				n.P50 <= 0 || n.P99 < n.P50 || n.Max < n.P99 {
				t.Errorf("publish-to-notice %+v, want every update due received", n)
			}
			if len(r.Fanout) != 3 || r.Ratio == nil {
				t.Fatalf("fan-out runs %+v, ratio %v", r.Fanout, r.Ratio)
			}
			for i, f := range r.Fanout {
				if f.Error != "" || f.Posts != 20 || f.Errors != 0 || f.Seconds <= 0 || f.InboxWritesPerSecond == nil || f.Open != []int{0, 150, 0}[i] {
					t.Errorf("fan-out run %d: %+v", i, f)
				}
			}
			if r.Received < int64(n.Received) || len(r.Ended) != 0 {
				t.Errorf("%d updates received in all (%d timed), ended by feedd: %v", r.Received, n.Received, r.Ended)
			}
			if len(rep.Errors) != 0 {
				t.Errorf("errors by code: %v", rep.Errors)
			}
			// The report's end closed them all.
			waitFor(t, "the subscriptions to close", func() bool { return svc.RealtimeStats().Subscriptions == 0 })
		})
	}
}

// TestSubscribersPastTheLimit: with feedd's per-viewer limit at 1, the
// subscriptions past it (130 over 120 viewers) are refused with
// RATE_LIMITED, and the report counts them; the probe times the others.
func TestSubscribersPastTheLimit(t *testing.T) {
	st := storetest.New(t)
	var log bytes.Buffer
	svc := newService(t, st, st.Prefix)
	feedtest.Realtime(t, svc, feedcore.RealtimeOptions{MinInterval: 100 * time.Millisecond, MaxPerViewer: 1})
	if _, err := build(context.Background(), svc, testSpec, "", &log); err != nil {
		t.Fatalf("build: %v\n%s", err, log.String())
	}
	ts := serve(t, svc, nil)
	rep := &loadreport.Report{}
	cfg := loadConfig{URL: ts.srv.URL + "/query", Users: testSpec.Users, Concurrency: 1, Duration: 500 * time.Millisecond,
		Pages: 1, PageSize: 5, Seed: 2, Progress: &log, MetricsURL: ts.srv.URL + "/metrics", Interval: 250 * time.Millisecond,
		Realtime: realtimeConfig{Subscribers: 130, OpenConcurrency: 4, WSURL: "ws" + strings.TrimPrefix(ts.srv.URL, "http") + "/query",
			NoticePosts: 2, NoticeGap: 100 * time.Millisecond, NoticeTimeout: 20 * time.Second}}
	if err := runLoad(context.Background(), cfg, rep); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	r := rep.Realtime
	if r == nil || r.Ended["ERROR_RATE_LIMITED"] != 10 || r.ServerSubscriptions == nil || *r.ServerSubscriptions != 120 {
		t.Fatalf("realtime %+v, want 10 refused with RATE_LIMITED and 120 held", r)
	}
	if n := r.Notices; n.Posts != 2 || n.Missed != 0 || n.Received == 0 {
		t.Errorf("publish-to-notice %+v, want the refused left out of the updates due", n)
	}
}

// waitFor polls cond until it holds, or fails the test after 20s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestSubscriberConnections drives subscribers' connections one by one
// against feedd with room for two: both open and are held; the third's
// upgrade is refused (503) and counted as HTTP_503 once, without a retry;
// when feedd goes away (1001 to every WebSocket), each subscriber counts
// its end once and its connection ends with CLOSE_1001, and it does not
// dial again.
func TestSubscriberConnections(t *testing.T) {
	st := storetest.New(t)
	svc := newService(t, st, st.Prefix)
	feedtest.Realtime(t, svc, feedcore.RealtimeOptions{MinInterval: 100 * time.Millisecond})
	for id := range feedcore.ID(3) {
		if err := svc.PutUser(context.Background(), feedcore.User{ID: id + 1, Handle: "conn" + feedcore.FormatID(id+1)}); err != nil {
			t.Fatal(err)
		}
	}
	conns := server.NewConnections()
	h := server.New(server.Config{Service: svc, DevAuth: true, Connections: conns,
		Logger:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		APIConfig: server.APIConfig{Streams: server.StreamLimits{MaxConnections: 2}}})
	var upgrades atomic.Int64 // the dials: one each, no retry
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" {
			upgrades.Add(1)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	rt := &realtimeRun{cfg: realtimeConfig{WSURL: "ws" + strings.TrimPrefix(srv.URL, "http") + "/query"},
		hc: &http.Client{Transport: &http.Transport{}}, subs: make([]*subscriber, 3), ended: map[string]int{}, gone: map[int]bool{}}
	ctx := context.Background()
	for i := range 2 {
		if err := rt.connect(ctx, i, map[string]any{client.DevHeader: strconv.Itoa(i + 1)}); err != nil {
			t.Fatalf("subscriber %d: %v", i, err)
		}
	}
	waitFor(t, "feedd to hold both subscriptions", func() bool { return svc.RealtimeStats().Subscriptions == 2 })
	err := rt.connect(ctx, 2, map[string]any{client.DevHeader: "3"})
	if kind := wsErrorKind(err); kind != "HTTP_503" {
		t.Errorf("the third connection: %v (%s), want HTTP_503", err, kind)
	}
	if rt.subs[2] != nil || rt.endedCount() != 0 {
		t.Errorf("a refused upgrade kept as a subscriber, or counted as ended: %v", rt.ended)
	}
	if n := upgrades.Load(); n != 3 {
		t.Errorf("%d upgrade requests for 3 subscribers, want one each", n)
	}

	conns.GoAway()
	for i, s := range rt.subs[:2] {
		select {
		case err := <-s.ran: // Run returned: no dial again
			if kind := wsErrorKind(s.err(err)); kind != "CLOSE_1001" {
				t.Errorf("subscriber %d's connection ended with %v (%s), want CLOSE_1001", i, err, kind)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("subscriber %d's client still running after feedd went away", i)
		}
		s.ran <- nil // for close, below
	}
	rt.mu.Lock()
	ended := maps.Clone(rt.ended)
	rt.mu.Unlock()
	// Each counted once: by the close, or by the complete feedd may send
	// for its subscription before it.
	if ended["CLOSE_1001"]+ended["COMPLETE"] != 2 || len(ended) > 2 {
		t.Errorf("ended by feedd: %v, want 2 in all, each CLOSE_1001 or COMPLETE", ended)
	}
	rt.close()
	if n := upgrades.Load(); n != 3 {
		t.Errorf("%d upgrade requests after feedd went away, want the 3 before: a client dialled again", n)
	}
}
