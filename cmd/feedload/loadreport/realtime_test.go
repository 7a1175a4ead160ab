package loadreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestRealtimePrint checks the text and JSON forms of --subscribers'
// figures: measured, and each part not measured.
func TestRealtimePrint(t *testing.T) {
	r := report("", 1)
	r.Realtime = &RealtimeReport{Subscribers: 10000, Viewers: 10000, Open: 9998, OpenSeconds: 12.5,
		OpenErrors: map[string]int{"HTTP_503": 2}, ServerSubscriptions: ptr(9998),
		Memory: ConnMemory{GCForced: true, RSSBefore: 100 << 20, RSSAfter: 300 << 20, HeapInuseBefore: 50 << 20, HeapInuseAfter: 150 << 20,
			RSSPerConn: 20971.52, HeapPerConn: 10485.76},
		Notices: NoticeReport{Posts: 20, Expected: 400, Received: 399, Missed: 1, Unexpected: 3, P50: 4.5, P95: 9.25, P99: 12, Max: 30},
		Fanout: []FanoutRun{{Open: 0, Posts: 500, Seconds: 2, PostsPerSecond: 250, InboxWrites: 10000, InboxWritesPerSecond: ptr(5000)},
			{Open: 9998, Posts: 500, Errors: 1, Seconds: 2.1, PostsPerSecond: 237.6, InboxWrites: 9990, InboxWritesPerSecond: ptr(4757.1)},
			{Open: 0, Posts: 500, Seconds: 2, PostsPerSecond: 250, InboxWrites: 10000, InboxWritesPerSecond: ptr(5000)}},
		Ratio: ptr(0.951), Received: 12345, Ended: map[string]int{"CLOSE_1001": 4}}
	var out bytes.Buffer
	if err := r.Print(&out, false); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		"realtime: 9998 of 10000 followingFeedUpdates subscriptions open (graphql-transport-ws, a connection each, over 10000 viewers) in 12.5s; not opened: HTTP_503 2; feedd holds 9998",
		"memory per connection: RSS 20.5 KiB (100.0 MiB to 300.0 MiB), Go heap in use 10.2 KiB (50.0 MiB to 150.0 MiB) on feedd's /metrics, each after a GC",
		"publish-to-notice: 20 posts, 400 updates due, 399 received, 1 missed, 3 unexpected: p50 4.5 ms, p95 9.2 ms, p99 12.0 ms, max 30.0 ms",
		"fan-out with 0 subscriptions open: 500 posts (0 failed) drained in 2.00s: 250.0 posts/s, 5000 inbox writes/s (10000)",
		"fan-out with 9998 subscriptions open: 500 posts (1 failed) drained in 2.10s: 237.6 posts/s, 4757 inbox writes/s (9990)",
		"fan-out throughput with subscriptions open over none: 0.951 (inbox writes a second, over the mean of the bursts before and after)",
		"realtime updates received: 12345; ended by feedd: CLOSE_1001 4",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	var js bytes.Buffer
	if err := r.Print(&js, true); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Realtime == nil || back.Realtime.Notices.P99 != 12 ||
		back.Realtime.Memory.RSSPerConn != 20971.52 || len(back.Realtime.Fanout) != 3 || !back.Realtime.Memory.GCForced || *back.Realtime.Ratio != 0.951 {
		t.Errorf("JSON: %v, %+v", err, back.Realtime)
	}

	r.Realtime = &RealtimeReport{Subscribers: 5, Viewers: 5, GaugeNote: "no feedd_realtime_subscriptions on feedd's /metrics",
		Memory: ConnMemory{Error: "no connection open"}, Notices: NoticeReport{Error: "no subscription open"},
		Fanout: []FanoutRun{{Open: 0, Posts: 10, Error: "needs --redis"}}}
	out.Reset()
	if err := r.Print(&out, false); err != nil {
		t.Fatal(err)
	}
	text = out.String()
	for _, want := range []string{
		"realtime: 0 of 5 followingFeedUpdates subscriptions open (graphql-transport-ws, a connection each, over 5 viewers) in 0.0s; no feedd_realtime_subscriptions",
		"memory per connection: not measured: no connection open",
		"publish-to-notice: not measured: no subscription open",
		"fan-out with 0 subscriptions open: not measured: needs --redis",
		"ended by feedd: none",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "over none") {
		t.Errorf("a ratio without two measured bursts:\n%s", text)
	}
}
