package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/cmd/feedload/loadreport"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
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
			svc, err := feedcore.New(ctx, st.Client, feedcore.Options{Prefix: st.Prefix, BigVThreshold: 40})
			if err != nil {
				t.Fatal(err)
			}
			spec := importgen.Spec{Users: 120, FollowsPerUser: 6, BigV: 2, BigVFollowers: 0.5,
				Posts: 600, Days: 3, End: time.Now(), Lives: 60, Seed: 1}
			var log bytes.Buffer
			b, err := build(ctx, svc, spec, "", &log)
			if err != nil {
				t.Fatalf("build: %v\n%s", err, log.String())
			}
			if b.Users != 120 || b.Posts != 600 || b.Lives != 60 || b.Follows < 500 {
				t.Errorf("built %+v", b)
			}
			feedtest.Workers(t, svc)
			cfg := server.Config{Service: svc, DevAuth: tc.secret == nil,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
			if tc.secret != nil {
				cfg.Verifier = &auth.Verifier{HS256Secret: tc.secret}
			}
			srv := httptest.NewServer(server.New(cfg))
			t.Cleanup(srv.Close)

			// Two seconds is plenty on an idle machine; under -race beside
			// other packages' tests a run may be too slow for a write of
			// every kind or a lag sample, so it is repeated, longer, before
			// the test gives up. Every run must be free of errors.
			var rep *loadreport.Report
			for d := 2 * time.Second; ; d *= 2 {
				rep = &loadreport.Report{Build: b}
				err = runLoad(ctx, loadConfig{URL: srv.URL + "/query", Users: spec.Users, Concurrency: 4,
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
		if b.Seconds <= 0 || b.Seconds > 0.5*1.5 || b.Ops == 0 || len(b.Latency) == 0 || b.FeeddMsPerOp == nil {
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

func TestFlags(t *testing.T) {
	t.Setenv("FEED_CONCURRENCY", "3")
	var stderr bytes.Buffer
	f, err := parseFlags([]string{"--skip-build", "--users", "50", "--duration", "1s"}, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	if f.load.Concurrency != 3 || f.load.Users != 50 || f.load.Duration != time.Second {
		t.Errorf("parsed %+v", f.load)
	}
	if _, err := parseFlags([]string{"--users", "50"}, &stderr); err == nil {
		t.Error("building without --redis: no error")
	}
}
