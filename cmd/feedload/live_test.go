package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/cmd/feedload/loadreport"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestLiveWorkload builds the tiny network as the command does (flags,
// then prepare) and drives it with --workload live --warm-readers: every
// user reads once first and the fan-out drains, then every operation is a
// first live page on a device of its own, and the report gives first live
// pages a second with feedd's CPU a page (Redis's too on a real Redis).
func TestLiveWorkload(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	var log bytes.Buffer
	ts := serve(t, newService(t, st, st.Prefix), nil)
	args := []string{"--redis", "redis://unused", "--key-prefix", st.Prefix, // prepare is given the test's store
		"--users", "120", "--follows-per-user", "6", "--bigv", "2", "--bigv-followers", "0.5", "--posts", "600",
		"--days", "3", "--lives", "60", "--bigv-threshold", "40", "--url", ts.srv.URL + "/query",
		"--concurrency", "4", "--duration", "2s", "--interval", "500ms", "--json", "--no-memory",
		"--workload", "live", "--warm-readers"}
	f, err := parseFlags(args, &log)
	if err != nil {
		t.Fatal(err)
	}
	if c := f.load; c.PageSize != 10 || c.WriteRatio != 0 || c.LagSamples != 0 || !c.WarmReaders {
		t.Fatalf("live flags: %+v", c)
	}
	a, err := f.prepare(ctx, st.Store, f.load.URL, f.keyPrefix, f.opsURL, &log)
	if err != nil {
		t.Fatalf("prepare: %v\n%s", err, log.String())
	}
	if err := runLoad(ctx, a.cfg, a.rep); err != nil {
		t.Fatal(err)
	}
	rep, text := reportOf(t, f, a.rep)

	if len(rep.Ops) != 1 || rep.Ops[0].Name != opLiveFresh {
		t.Fatalf("operations %+v, want %s alone", rep.Ops, opLiveFresh)
	}
	o := rep.Ops[0]
	if o.Count == 0 || o.ErrorCount != 0 || o.P50 <= 0 || rep.Writes != 0 || rep.Reads != o.Count || len(rep.Errors) != 0 {
		t.Errorf("%s: %+v, %d reads, %d writes, errors %v; want first pages only, none failed", o.Name, o, rep.Reads, rep.Writes, rep.Errors)
	}
	if rep.FanoutLag.Samples != 0 || rep.Cost == nil || rep.Cost.Posts != 0 {
		t.Errorf("lag %+v, cost %+v: the live workload publishes nothing", rep.FanoutLag, rep.Cost)
	}
	l := rep.Live
	if rep.Workload != workloadLive || l == nil || l.PageSize != 10 || l.Pages != o.Count || l.Errors != 0 || l.PerSecond != o.PerSecond ||
		l.FeeddMsPerPage == nil || *l.FeeddMsPerPage <= 0 || *l.FeeddMsPerPage != rep.Cost.FeeddMsPerOp {
		t.Fatalf("workload %q, live report %+v, cost %+v", rep.Workload, l, rep.Cost)
	}
	if (l.RedisMsPerPage != nil) != st.Real || st.Real && *l.RedisMsPerPage <= 0 {
		t.Errorf("Redis CPU a page %v on a real Redis %v", l.RedisMsPerPage, st.Real)
	}
	// The tool's own CPU: every page it asked for cost it something.
	if l.LoadMsPerPage == nil || *l.LoadMsPerPage <= 0 || rep.Cost.LoadMsPerOp == nil || *l.LoadMsPerPage != *rep.Cost.LoadMsPerOp {
		t.Errorf("feedload's CPU a page %v (cost's %v), want the same figure above 0", l.LoadMsPerPage, rep.Cost.LoadMsPerOp)
	}
	if w := rep.Warm; w == nil || w.Readers != 120 || w.Read != "liveFeed(first: 10)" || !w.Drained || w.Seconds <= 0 {
		t.Errorf("warm readers %+v, want all 120 read once and the fan-out drained", w)
	}
	for _, want := range []string{"first live pages: ", " a second (", "liveFeed(first: 10)", "CPU a first live page: feedd ", ", feedload itself ", "warm readers: 120 users read once"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q", want)
		}
	}

	// Every page came from a device of its own; the warm-up's device read
	// once for each user.
	ts.mu.Lock()
	fresh, reused := 0, 0
	for d, n := range ts.devices {
		switch {
		case d == "feedload-warm":
			if n != 120 {
				t.Errorf("the warm-up device served %d requests, want 120", n)
			}
		case n == 1:
			fresh++
		default:
			reused++
		}
	}
	ts.mu.Unlock()
	if reused != 0 || fresh < o.Count {
		t.Errorf("%d devices with one request, %d with more, for %d pages", fresh, reused, o.Count)
	}

	figs := loadreport.Figures(&rep, nil)
	if len(figs) < 3 || figs[0].Name != "first live pages/s" || figs[1].Name != "feedd CPU ms/first live page" ||
		figs[2].Name != "Redis CPU ms/first live page" && st.Real {
		t.Errorf("figures %+v, want first live pages/s and CPU a page first", figs[:min(3, len(figs))])
	}
	var page bytes.Buffer
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "first live pages (liveFeed(first: 10), a fresh device each): ") {
		t.Error("HTML report lacks the first live pages")
	}
}

// TestLiveCompare alternates two servers with the live workload: the
// figures set first live pages a second and CPU a page side by side.
func TestLiveCompare(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	var log bytes.Buffer
	servers := [2]*testServer{startServer(t, st, st.Prefix+"a:", nil, &log), startServer(t, st, st.Prefix+"b:", nil, &log)}
	var cfgs [2]loadConfig
	for i, s := range servers {
		cfgs[i] = loadConfig{URL: s.srv.URL + "/query", Users: testSpec.Users, Concurrency: 2, Duration: 2 * time.Second,
			Pages: 1, PageSize: 10, Seed: 1, Progress: &log, Backlog: s.svc.Backlog, Drain: s.svc.Drain,
			MetricsURL: s.srv.URL + "/metrics", Redis: st.Client, Interval: 500 * time.Millisecond,
			Workload: workloadLive, WarmReaders: true}
	}
	reps := [2]*loadreport.Report{{}, {}}
	c, err := runCompare(ctx, cfgs, reps, 2)
	if err != nil {
		t.Fatal(err)
	}
	c.Figures = loadreport.Figures(c.A, c.B)
	var out bytes.Buffer
	if err := c.Print(&out, false); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", out.String())
	for _, r := range reps {
		if r.Live == nil || r.Live.Pages == 0 || r.Live.Errors != 0 || r.Warm == nil || r.Warm.Readers != 120 {
			t.Errorf("%s: live %+v, warm %+v", r.Name, r.Live, r.Warm)
		}
		// Each server's pages went to it, from its own fresh devices.
		if mine, _ := servers[slices.Index([]string{"A", "B"}, r.Name)].served("feedload-" + r.Name); mine < r.Reads {
			t.Errorf("%s: served %d requests of its clients for %d pages", r.Name, mine, r.Reads)
		}
	}
	want := []string{"first live pages/s", "feedd CPU ms/first live page"}
	for i, name := range want {
		if f := c.Figures[i]; f.Name != name || f.A == nil || f.B == nil || f.Ratio == nil {
			t.Errorf("figure %d: %+v, want %s of both with B/A", i, f, name)
		}
	}
	if !strings.Contains(out.String(), "first live pages/s") {
		t.Error("the side-by-side table lacks first live pages/s")
	}
}
