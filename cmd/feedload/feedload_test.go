package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/cmd/feedload/loadreport"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/importer/importgen"
	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/server"
)

// TestEndToEnd builds a tiny network in the test store, runs the workload
// for a second or two against feedd in this process (as e2e/ does), and
// checks every operation ran without an error, that the fan-out lag was
// measured, and that the JSON report carries it all.
func TestEndToEnd(t *testing.T) {
	for _, tc := range []struct {
		name   string
		secret []byte
	}{{"dev-auth", nil}, {"jwt", []byte("feedload-test-secret-0123456789ab")}} {
		t.Run(tc.name, func(t *testing.T) {
			st := storetest.New(t)
			ctx := context.Background()
			var log bytes.Buffer
			ts := startServer(t, st, st.Prefix, tc.secret, &log)
			svc, srv := ts.svc, ts.srv

			// Two seconds is plenty on an idle machine; under -race beside
			// other packages' tests a run may be too slow for a write of
			// every kind or a lag sample, so it is repeated, longer, before
			// the test gives up. Every run must be free of errors.
			var rep *loadreport.Report
			for d := 2 * time.Second; ; d *= 2 {
				rep = &loadreport.Report{Build: ts.build}
				err := runLoad(ctx, loadConfig{URL: srv.URL + "/query", Users: testSpec.Users, Concurrency: 4,
					Duration: d, Pages: 3, PageSize: 5, WriteRatio: 0.25, LagSamples: 2,
					Seed: uint64(d), Secret: tc.secret, Progress: &log, Backlog: svc.Backlog,
					MetricsURL: srv.URL + "/metrics", Redis: st.Client, Interval: 500 * time.Millisecond}, rep)
				if err != nil {
					t.Fatal(err)
				}
				if len(rep.Errors) != 0 || d >= 16*time.Second || rep.FanoutLag.Samples > 0 &&
					!slices.ContainsFunc(rep.Ops, func(o loadreport.OpReport) bool { return o.Count == 0 }) {
					break
				}
				t.Logf("%v: too slow for every operation and a lag sample; again for longer", d)
			}
			rep.Memory = measureMemory(ctx, st.Client, st.Prefix)
			var out bytes.Buffer
			if err := rep.Print(&out, false); err != nil {
				t.Fatal(err)
			}
			t.Logf("\n%s", out.String())

			if len(rep.Ops) != len(allOps) {
				t.Fatalf("%d operations in the report, want %d", len(rep.Ops), len(allOps))
			}
			for _, o := range rep.Ops {
				if o.Count == 0 || o.ErrorCount != 0 || o.PerSecond <= 0 || o.P50 <= 0 || o.P99 < o.P50 {
					t.Errorf("%s: %+v, want calls and no errors", o.Name, o)
				}
			}
			if len(rep.Errors) != 0 {
				t.Errorf("errors by code: %v", rep.Errors)
			}
			if rep.Reads <= rep.Writes {
				t.Errorf("%d reads, %d writes", rep.Reads, rep.Writes)
			}
			if rep.FanoutLag.Samples == 0 || rep.FanoutLag.Followers == 0 || rep.FanoutLag.Timeouts != 0 {
				t.Errorf("fan-out lag %+v, want samples from an author with followers", rep.FanoutLag)
			}
			if m := rep.Memory; m.Error == "" && (m.Users != 120 || m.BytesPerUser <= 0 || m.BytesPerInboxEntry <= 0) {
				t.Errorf("memory %+v", m)
			}
			checkCost(t, rep, st.Real)
			checkTimeline(t, rep)
			if st.Real {
				if n, err := redisstore.DeletePrefix(ctx, st.Client, st.Prefix); err != nil || n == 0 {
					t.Errorf("redisstore.DeletePrefix: %d keys, %v", n, err)
				}
			}
			var js bytes.Buffer
			if err := rep.Print(&js, true); err != nil {
				t.Fatal(err)
			}
			var back loadreport.Report
			if err := json.Unmarshal(js.Bytes(), &back); err != nil || len(back.Ops) != len(allOps) {
				t.Errorf("JSON report %s: %v", js.String(), err)
			}
		})
	}
}

// TestDormantShare builds the tiny network as the command does (flags,
// then prepare) with --dormant-share 0.5 while feedd runs, and drives it:
// half the users are put to sleep after the build, sessions of returning
// readers (half of them, while any is left) have their first page as an
// operation of its own, and the report says what inbox writes a post
// cost. A --skip-build rerun knows the same users, less those the returns
// woke.
func TestDormantShare(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	var log bytes.Buffer
	ts := serve(t, newService(t, st, st.Prefix), nil)
	args := []string{"--redis", "redis://unused", "--key-prefix", st.Prefix, // prepare is given the test's store
		"--users", "120", "--follows-per-user", "6", "--bigv", "2", "--bigv-followers", "0.5", "--posts", "600",
		"--days", "3", "--lives", "60", "--bigv-threshold", "40", "--url", ts.srv.URL + "/query",
		"--concurrency", "4", "--duration", "2s", "--pages", "3", "--page-size", "5", "--write-ratio", "0.25",
		"--lag-samples", "2", "--interval", "500ms", "--json", "--dormant-share", "0.5", "--return-ratio", "0.5"}
	f, err := parseFlags(args, &log)
	if err != nil {
		t.Fatal(err)
	}
	a, err := f.prepare(ctx, st.Store, f.load.URL, f.keyPrefix, f.opsURL, &log)
	if err != nil {
		t.Fatalf("prepare: %v\n%s", err, log.String())
	}
	dormant := a.cfg.Dormant
	if want := dormantUsers(1, 120, 0.5); len(dormant) < 40 || len(dormant) > 80 || !slices.Equal(dormant, want) {
		t.Fatalf("%d dormant users %v, want about half: %v", len(dormant), dormant, want)
	}
	if awake, err := ts.svc.Awake(ctx, storeIDs(dormant)); err != nil || len(awake) != 0 {
		t.Fatalf("after prepare, %v of the dormant share are awake (%v)", awake, err)
	}
	if err := runLoad(ctx, a.cfg, a.rep); err != nil {
		t.Fatal(err)
	}
	a.measureMemory(ctx, f)
	rep, text := reportOf(t, f, a.rep)

	if len(rep.Ops) != len(allOps)+1 || rep.Ops[1].Name != opFeedReturn {
		t.Fatalf("operations %+v, want followingFeed.return after followingFeed", rep.Ops)
	}
	ret := rep.Ops[1]
	if ret.Count == 0 || ret.ErrorCount != 0 || ret.P50 <= 0 || ret.P99 < ret.P50 {
		t.Errorf("followingFeed.return: %+v, want calls and no errors", ret)
	}
	if len(rep.Errors) != 0 {
		t.Errorf("errors by code: %v", rep.Errors)
	}
	d := rep.Dormant
	if d == nil || d.Share != 0.5 || d.ReturnRatio != 0.5 || d.Users != len(dormant) || d.SleepSeconds <= 0 ||
		d.Returned != ret.Count || d.Returned+d.Left > d.Users || d.Returned+d.Left < d.Users-f.load.Concurrency {
		t.Errorf("dormant report %+v, want %d users asleep and %d returned", d, len(dormant), ret.Count)
	}
	c := rep.Cost
	if c == nil || c.InboxWritesError != "" || c.Posts == 0 || c.InboxWritesPerPost == nil {
		t.Errorf("inbox writes per post not measured: %+v", c)
	}
	for _, want := range []string{"followingFeed.return", "inbox writes: ", " a post (", "dormant: "} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q", want)
		}
	}
	if m := rep.Memory; m == nil || m.Error == "" && m.Users != 120 {
		t.Errorf("memory %+v", m)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page.String(), `<figure class="chart"`); n != 3+len(rep.Ops) ||
		!strings.Contains(page.String(), "inbox writes a post: ") || !strings.Contains(page.String(), "users at the start, ") {
		t.Errorf("HTML report has %d charts (want %d), or lacks the inbox writes or the dormant share", n, 3+len(rep.Ops))
	}

	// A rerun on the network built: the same choice, less the returned
	// readers whose upgrade woke them.
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, err := ts.svc.Backlog(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 || time.Now().After(deadline) {
			break
		}
	}
	f, err = parseFlags(append(args, "--skip-build"), &log)
	if err != nil {
		t.Fatal(err)
	}
	b, err := f.prepare(ctx, st.Store, f.load.URL, f.keyPrefix, f.opsURL, &log)
	if err != nil {
		t.Fatal(err)
	}
	again := b.cfg.Dormant
	if len(again) >= len(dormant) || slices.ContainsFunc(again, func(u int) bool { return !slices.Contains(dormant, u) }) {
		t.Errorf("--skip-build: dormant %v, want fewer of %v (%d returned)", again, dormant, d.Returned)
	}
	if b.rep.Build != nil || b.rep.Dormant == nil || b.rep.Dormant.SleepSeconds != 0 {
		t.Errorf("--skip-build built %+v, slept %+v", b.rep.Build, b.rep.Dormant)
	}
}

func storeIDs(us []int) []store.ID {
	out := make([]store.ID, len(us))
	for i, u := range us {
		out[i] = store.ID(u)
	}
	return out
}

// checkCost checks the CPU figures of a run against the test's server:
// feedd's from its /metrics always (this process's CPU: the server and
// the clients both), Redis's and its busiest commands on a real Redis; the
// embedded store has no INFO cpu, which the report says.
func checkCost(t *testing.T, rep *loadreport.Report, real bool) {
	t.Helper()
	c := rep.Cost
	if c == nil || c.FeeddError != "" || c.FeeddCPUSeconds <= 0 || c.FeeddMsPerOp <= 0 {
		t.Fatalf("feedd's CPU not measured: %+v", c)
	}
	// The test's feedd runs its fan-out workers, whose inbox writes its
	// /metrics counts; every operation ran, publishPost too.
	if c.InboxWritesError != "" || c.Posts == 0 || c.InboxWritesPerPost == nil || *c.InboxWritesPerPost < 0 {
		t.Errorf("inbox writes per post not measured: %q, %d posts, %v a post", c.InboxWritesError, c.Posts, c.InboxWritesPerPost)
	}
	if !real {
		if !strings.Contains(c.RedisError, "INFO cpu") || !strings.Contains(c.CommandsError, "INFO commandstats") {
			t.Errorf("Redis CPU on the embedded store: %q, %q; want errors naming INFO", c.RedisError, c.CommandsError)
		}
		return
	}
	if c.RedisError != "" || c.RedisMsPerOp <= 0 || c.RedisMasters < 1 {
		t.Errorf("Redis CPU: %+v", c)
	}
	// Every page is a script or a pipeline of reads: the commands the
	// workload ran are counted, busiest first, and per operation.
	if c.CommandsError != "" || len(c.Commands) == 0 {
		t.Fatalf("Redis commands: %q, %v", c.CommandsError, c.Commands)
	}
	var share float64
	for i, m := range c.Commands {
		if m.Calls <= 0 || m.CallsPerOp <= 0 || (i > 0 && m.Usec > c.Commands[i-1].Usec) {
			t.Errorf("command %d: %+v (after %+v)", i, m, c.Commands[max(i-1, 0)])
		}
		share += m.Share
	}
	if share < 0.999 || share > 1.001 {
		t.Errorf("commands' shares add up to %v", share)
	}
}

// checkTimeline checks the run's time series: buckets of about the
// interval that add up to the run's operations, each with latencies.
func checkTimeline(t *testing.T, rep *loadreport.Report) {
	t.Helper()
	tl := rep.Timeline
	if tl == nil || len(tl.Buckets) < 2 {
		t.Fatalf("timeline %+v, want a bucket every 500ms", tl)
	}
	ops := 0
	for i, b := range tl.Buckets {
		ops += b.Ops
		if b.Seconds <= 0 || b.Seconds > 2*0.5 || b.Ops == 0 || len(b.Latency) == 0 || b.FeeddMsPerOp == nil {
			t.Errorf("bucket %d: %+v", i, b)
		}
		if i > 0 && b.End <= tl.Buckets[i-1].End {
			t.Errorf("bucket %d ends at %v, after %v", i, b.End, tl.Buckets[i-1].End)
		}
	}
	// A last sliver of the run is counted but not charted.
	if total := rep.Reads + rep.Writes; ops > total || ops < total*9/10 {
		t.Errorf("buckets hold %d operations, the run %d", ops, total)
	}
	if len(tl.Lag) != rep.FanoutLag.Samples {
		t.Errorf("%d lag points, %d samples", len(tl.Lag), rep.FanoutLag.Samples)
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page.String(), `<figure class="chart"`); n != 3+len(allOps) {
		t.Errorf("HTML report has %d charts, want %d", n, 3+len(allOps))
	}
}

// testSpec is the tiny network the tests build.
var testSpec = importgen.Spec{Users: 120, FollowsPerUser: 6, BigV: 2, BigVFollowers: 0.5,
	Posts: 600, Days: 3, End: time.Now(), Lives: 60, Seed: 1}

// testServer is feedd in this process, with its fan-out workers, over the
// tiny network feedload built under its prefix.
type testServer struct {
	svc     *feedcore.Service
	srv     *httptest.Server
	build   *loadreport.BuildReport
	mu      sync.Mutex
	devices map[string]int // GraphQL requests served, by X-Device-Id
}

// served is how many GraphQL requests the server answered from devices
// named with prefix, and from any other.
func (ts *testServer) served(prefix string) (mine, others int) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	for d, n := range ts.devices {
		if strings.HasPrefix(d, prefix) {
			mine += n
		} else {
			others += n
		}
	}
	return mine, others
}

func startServer(t *testing.T, st *storetest.Store, prefix string, secret []byte, log *bytes.Buffer) *testServer {
	t.Helper()
	svc := newService(t, st, prefix)
	b, err := build(context.Background(), svc, testSpec, "", log)
	if err != nil {
		t.Fatalf("build: %v\n%s", err, log.String())
	}
	if b.Users != 120 || b.Posts != 600 || b.Lives != 60 || b.Follows < 500 {
		t.Errorf("built %+v", b)
	}
	ts := serve(t, svc, secret)
	ts.build = b
	return ts
}

func newService(t *testing.T, st *storetest.Store, prefix string) *feedcore.Service {
	t.Helper()
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{Prefix: prefix, BigVThreshold: 40})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// serve starts feedd in this process over svc's network (which may not be
// built yet), with its fan-out workers.
func serve(t *testing.T, svc *feedcore.Service, secret []byte) *testServer {
	t.Helper()
	feedtest.Workers(t, svc)
	cfg := server.Config{Service: svc, DevAuth: secret == nil,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if secret != nil {
		cfg.Verifier = &auth.Verifier{HS256Secret: secret}
	}
	ts := &testServer{svc: svc, devices: map[string]int{}}
	h := server.New(cfg)
	ts.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if d := r.Header.Get(server.DeviceHeader); r.URL.Path == "/query" && d != "" {
			ts.mu.Lock()
			ts.devices[d]++
			ts.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.srv.Close)
	return ts
}

// TestCompare drives two servers, each over its own network (two prefixes
// in one store, built with the same seed), in four phases, and checks
// that each got its half of the load, that the time series follow each
// server's own phases, and that the figures and the page set them side by
// side.
func TestCompare(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	var log bytes.Buffer
	servers := [2]*testServer{startServer(t, st, st.Prefix+"a:", nil, &log), startServer(t, st, st.Prefix+"b:", nil, &log)}
	var cfgs [2]loadConfig
	for i, s := range servers {
		cfgs[i] = loadConfig{URL: s.srv.URL + "/query", Users: testSpec.Users, Concurrency: 2, Duration: 2 * time.Second,
			Pages: 3, PageSize: 5, WriteRatio: 0.1, LagSamples: 2, Seed: 1, Progress: &log, Backlog: s.svc.Backlog,
			MetricsURL: s.srv.URL + "/metrics", Redis: st.Client, Interval: 500 * time.Millisecond}
	}
	reps := [2]*loadreport.Report{{}, {}}
	c, err := runCompare(ctx, cfgs, reps, 4)
	if err != nil {
		t.Fatal(err)
	}
	c.Figures = loadreport.Figures(c.A, c.B)
	var out bytes.Buffer
	if err := c.Print(&out, false); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())

	if !slices.Equal(c.Phases, []string{"A", "B", "B", "A"}) || c.PhaseSeconds != 1 || c.A != reps[0] || c.B != reps[1] {
		t.Errorf("phases %v of %vs", c.Phases, c.PhaseSeconds)
	}
	for i, r := range reps {
		ops := r.Reads + r.Writes
		// Each server's load went to it: every request it served came
		// from its own clients (devices feedload-A0, feedload-lagA, ...),
		// and they made at least its operations.
		mine, others := servers[i].served("feedload-" + r.Name)
		lag, _ := servers[i].served("feedload-lag" + r.Name)
		if mine+lag < ops || others != lag {
			t.Errorf("%s: served %d requests of its clients and %d of the lag probe for %d operations, %d of others",
				r.Name, mine, lag, ops, others-lag)
		}
		if r.Seconds < 2 || r.Seconds > 3.5 || ops == 0 || len(r.Errors) != 0 || r.Cost == nil || r.Cost.FeeddError != "" {
			t.Errorf("%s: %.2fs, %d operations, errors %v, cost %+v", r.Name, r.Seconds, ops, r.Errors, r.Cost)
		}
		tl := r.Timeline
		if len(tl.PhaseStarts) != 1 || tl.PhaseStarts[0] < 1 || tl.PhaseStarts[0] > 2 || len(tl.Buckets) < 3 {
			t.Fatalf("%s: timeline phases %v, %d buckets", r.Name, tl.PhaseStarts, len(tl.Buckets))
		}
		for j := 1; j < len(tl.Buckets); j++ {
			if tl.Buckets[j].End <= tl.Buckets[j-1].End {
				t.Errorf("%s: bucket %d ends at %v, after %v", r.Name, j, tl.Buckets[j].End, tl.Buckets[j-1].End)
			}
		}
	}
	if f := c.Figures[0]; f.Name != "operations/s" || f.A == nil || f.B == nil || f.Ratio == nil || *f.Ratio != *f.B / *f.A {
		t.Errorf("first figure %+v", f)
	}
	var page bytes.Buffer
	if err := c.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-series="A operations/s"`, `data-series="B operations/s"`, `data-series="B p99"`} {
		if !strings.Contains(page.String(), want) {
			t.Errorf("HTML comparison lacks %s", want)
		}
	}
}

func TestFlags(t *testing.T) {
	t.Setenv("FEED_CONCURRENCY", "3")
	var stderr bytes.Buffer
	f, err := parseFlags([]string{"--skip-build", "--users", "50", "--duration", "1s"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if f.load.Concurrency != 3 || f.load.Users != 50 || f.load.Duration != time.Second || f.load.DormantShare != 0 || f.load.ReturnRatio != 0.02 {
		t.Errorf("parsed %+v", f.load)
	}
	for _, tc := range []struct {
		args    []string
		wantErr string
	}{
		{[]string{"--users", "50"}, "needs --redis"},
		{[]string{"--skip-build", "--compare", "http://127.0.0.1:2/query", "--phases", "3"}, "--phases must be even"},
		{[]string{"--redis", "redis://x", "--compare", "http://127.0.0.1:2/query"}, "needs --compare-key-prefix"},
		{[]string{"--redis", "redis://x", "--key-prefix", "a:", "--compare", "http://127.0.0.1:2/query", "--compare-key-prefix", "a:"}, "must differ"},
		{[]string{"--skip-build", "--interval", "0s"}, "--interval"},
		{[]string{"--skip-build", "--dormant-share", "1"}, "--dormant-share"},
		{[]string{"--skip-build", "--dormant-share", "-0.1"}, "--dormant-share"},
		{[]string{"--skip-build", "--dormant-share", "0.1", "--return-ratio", "1.5"}, "--return-ratio"},
		{[]string{"--skip-build", "--workload", "scroll"}, `--workload must be mixed or live, not "scroll"`},
		{[]string{"--skip-build", "--workload", "live", "--dormant-share", "0.1"}, "no --dormant-share"},
		{[]string{"--skip-build", "--workload", "live", "--write-ratio", "0.1"}, "no --write-ratio"},
		{[]string{"--skip-build", "--workload", "live", "--lag-samples", "3"}, "--lag-samples"},
		{[]string{"--skip-build", "--workload", "live", "--pages", "3"}, "--pages"},
	} {
		if _, err := parseFlags(tc.args, &stderr); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%q: %v, want an error with %q", tc.args, err, tc.wantErr)
		}
	}
	if f.load.Workload != workloadMixed || f.load.PageSize != 20 || f.load.WriteRatio != 0.01 || f.load.LagSamples != 5 || f.load.WarmReaders {
		t.Errorf("default workload: %+v", f.load)
	}
	t.Setenv("FEED_WORKLOAD", "live")
	if f, err := parseFlags([]string{"--skip-build", "--page-size", "7"}, &stderr); err != nil ||
		f.load.Workload != workloadLive || f.load.PageSize != 7 || f.load.WriteRatio != 0 || f.load.LagSamples != 0 {
		t.Errorf("FEED_WORKLOAD=live --page-size 7: %+v, %v", f, err)
	}
	t.Setenv("FEED_WORKLOAD", "mixed")
	f, err = parseFlags([]string{"--redis", "redis://x", "--key-prefix", "a:", "--compare", "http://127.0.0.1:2/query",
		"--compare-key-prefix", "b:", "--compare-ops-url", "http://127.0.0.1:9091", "--html", "r.html"}, &stderr)
	if err != nil || f.phases != 4 || f.compareKeyPrefix != "b:" || f.html != "r.html" || f.load.Interval != time.Second {
		t.Errorf("compare flags: %+v, %v", f, err)
	}
}

// reportOf is the run's JSON report as the command writes it, read back,
// and its text form (logged too).
func reportOf(t *testing.T, f *flags, r result) (loadreport.Report, string) {
	t.Helper()
	var js bytes.Buffer
	if err := output(f, r, &js); err != nil {
		t.Fatal(err)
	}
	var rep loadreport.Report
	if err := json.Unmarshal(js.Bytes(), &rep); err != nil {
		t.Fatalf("JSON report %s: %v", js.String(), err)
	}
	var text bytes.Buffer
	if err := rep.Print(&text, false); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	return rep, text.String()
}
