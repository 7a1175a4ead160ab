package loadreport

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// RealtimeReport is what --subscribers found: Subscribers
// followingFeedUpdates subscriptions asked for over graphql-transport-ws,
// one connection each, spread over the active users; Open of them were
// acknowledged (connection_ack, then subscribe sent) in OpenSeconds,
// OpenErrors says why the others were not. ServerSubscriptions is feedd's
// gauge of open subscriptions once they were (nil where feedd has none).
type RealtimeReport struct {
	Subscribers         int            `json:"subscribers"`
	Viewers             int            `json:"viewers"` // distinct viewers they were spread over
	Open                int            `json:"open"`
	OpenSeconds         float64        `json:"openSeconds"`
	OpenErrors          map[string]int `json:"openErrors,omitempty"`
	ServerSubscriptions *float64       `json:"serverSubscriptions,omitempty"`
	GaugeNote           string         `json:"gaugeNote,omitempty"` // why ServerSubscriptions is missing or short
	Memory              ConnMemory     `json:"memory"`
	Notices             NoticeReport   `json:"notices"`
	// Fanout is the fan-out throughput (--fanout-posts) with no
	// subscription open, with the Open ones, and with none again after
	// they closed; Ratio is the second's inbox writes a second over the
	// mean of the first and the third's.
	Fanout []FanoutRun `json:"fanout,omitempty"`
	Ratio  *float64    `json:"fanoutRatio,omitempty"`
	// Received is every update the subscribers got over the run (the
	// probe's, the bursts' and the load's); Ended counts the connections
	// that feedd ended before feedload closed them, by close code, and the
	// subscriptions it ended with an error message, by code.
	Received int64          `json:"received"`
	Ended    map[string]int `json:"ended,omitempty"`
}

// ConnMemory is feedd's memory before and after the subscriptions were
// opened (process_resident_memory_bytes and go_memstats_heap_inuse_bytes
// from its /metrics), and the difference per open connection. GCForced:
// feedd collected its garbage before each reading (its ops listener's
// /debug/pprof/heap?gc=1), so the heap is live memory.
type ConnMemory struct {
	GCForced        bool    `json:"gcForced"`
	RSSBefore       int64   `json:"rssBefore"`
	RSSAfter        int64   `json:"rssAfter"`
	HeapInuseBefore int64   `json:"heapInuseBefore"`
	HeapInuseAfter  int64   `json:"heapInuseAfter"`
	RSSPerConn      float64 `json:"rssPerConnection"`
	HeapPerConn     float64 `json:"heapInusePerConnection"`
	Error           string  `json:"error,omitempty"`
}

// NoticeReport is the publish-to-notice latency: Posts posts, one at a
// time, each by an author some subscribers' viewers follow; Expected
// updates were due (one to each subscription of a follower or of the
// author, whose own feed holds its post), Received came within the
// notice timeout, naming the post's author first, Missed did not;
// Unexpected came to subscribers whose viewers do not follow the author. Latency is from just before the publishPost
// request to the update's arrival.
type NoticeReport struct {
	Posts      int     `json:"posts"`
	Expected   int     `json:"expected"`
	Received   int     `json:"received"`
	Missed     int     `json:"missed"`
	Unexpected int     `json:"unexpected"`
	P50        float64 `json:"p50ms"`
	P95        float64 `json:"p95ms"`
	P99        float64 `json:"p99ms"`
	Max        float64 `json:"maxms"`
	Error      string  `json:"error,omitempty"`
}

// FanoutRun is one burst of --fanout-posts posts (Errors failed),
// published --concurrency at a time by random active users, and the time
// until feedd's fan-out had drained them: the posts and feedd's inbox
// writes (feedd_fanout_processed_total{kind="inbox_writes"}) a second.
type FanoutRun struct {
	Open                 int      `json:"open"` // subscriptions open meanwhile
	Posts                int      `json:"posts"`
	Errors               int      `json:"errors"`
	Seconds              float64  `json:"seconds"`
	PostsPerSecond       float64  `json:"postsPerSecond"`
	InboxWrites          int64    `json:"inboxWrites"`
	InboxWritesPerSecond *float64 `json:"inboxWritesPerSecond,omitempty"`
	Error                string   `json:"error,omitempty"`
}

func (r *RealtimeReport) print(w io.Writer) {
	if r == nil {
		return
	}
	fmt.Fprintf(w, "realtime: %d of %d followingFeedUpdates subscriptions open (graphql-transport-ws, a connection each, over %d viewers) in %.1fs",
		r.Open, r.Subscribers, r.Viewers, r.OpenSeconds)
	if len(r.OpenErrors) > 0 {
		fmt.Fprintf(w, "; not opened: %s", counts(r.OpenErrors))
	}
	switch {
	case r.ServerSubscriptions != nil:
		fmt.Fprintf(w, "; feedd holds %.0f", *r.ServerSubscriptions)
		if r.GaugeNote != "" {
			fmt.Fprintf(w, " (%s)", r.GaugeNote)
		}
	case r.GaugeNote != "":
		fmt.Fprintf(w, "; %s", r.GaugeNote)
	}
	fmt.Fprintln(w)
	if m := r.Memory; m.Error != "" {
		fmt.Fprintf(w, "memory per connection: not measured: %s\n", m.Error)
	} else {
		gc := "no GC forced (no /debug/pprof beside the metrics: --ops-url)"
		if m.GCForced {
			gc = "each after a GC"
		}
		fmt.Fprintf(w, "memory per connection: RSS %s (%s to %s), Go heap in use %s (%s to %s) on feedd's /metrics, %s\n",
			size(int64(m.RSSPerConn)), size(m.RSSBefore), size(m.RSSAfter), size(int64(m.HeapPerConn)), size(m.HeapInuseBefore), size(m.HeapInuseAfter), gc)
	}
	n := r.Notices
	switch {
	case n.Error != "":
		fmt.Fprintf(w, "publish-to-notice: not measured: %s\n", n.Error)
	case n.Posts == 0:
		fmt.Fprintln(w, "publish-to-notice: no post")
	default:
		fmt.Fprintf(w, "publish-to-notice: %d posts, %d updates due, %d received, %d missed, %d unexpected: p50 %.1f ms, p95 %.1f ms, p99 %.1f ms, max %.1f ms (from just before publishPost)\n",
			n.Posts, n.Expected, n.Received, n.Missed, n.Unexpected, n.P50, n.P95, n.P99, n.Max)
	}
	for _, f := range r.Fanout {
		if f.Error != "" {
			fmt.Fprintf(w, "fan-out with %d subscriptions open: not measured: %s\n", f.Open, f.Error)
			continue
		}
		writes := "inbox writes not measured"
		if f.InboxWritesPerSecond != nil {
			writes = fmt.Sprintf("%.0f inbox writes/s (%d)", *f.InboxWritesPerSecond, f.InboxWrites)
		}
		fmt.Fprintf(w, "fan-out with %d subscriptions open: %d posts (%d failed) drained in %.2fs: %.1f posts/s, %s\n",
			f.Open, f.Posts, f.Errors, f.Seconds, f.PostsPerSecond, writes)
	}
	if r.Ratio != nil {
		fmt.Fprintf(w, "fan-out throughput with subscriptions open over none: %.3f (inbox writes a second, over the mean of the bursts before and after)\n", *r.Ratio)
	}
	ended := "none"
	if len(r.Ended) > 0 {
		ended = counts(r.Ended)
	}
	fmt.Fprintf(w, "realtime updates received: %d; ended by feedd: %s\n", r.Received, ended)
}

// counts writes a count by code as "CODE n, CODE n", codes in order.
func counts(m map[string]int) string {
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", c, m[c]))
	}
	return strings.Join(parts, ", ")
}
