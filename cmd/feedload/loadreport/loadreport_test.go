package loadreport

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func ptr(v float64) *float64 { return &v }

func TestRatio(t *testing.T) {
	for _, tc := range []struct {
		a, b *float64
		want string
	}{
		{ptr(2), ptr(3), "1.50"},
		{ptr(4), ptr(1), "0.25"},
		{ptr(0), ptr(3), "-"}, // no ratio to nothing
		{ptr(0), ptr(0), "-"},
		{nil, ptr(3), "-"},
		{ptr(3), nil, "-"},
		{ptr(-2), ptr(1), "-0.50"},
	} {
		if got := RatioText(Ratio(tc.a, tc.b)); got != tc.want {
			t.Errorf("Ratio(%v, %v) = %s, want %s", Number(tc.a), Number(tc.b), got, tc.want)
		}
	}
}

func TestNumber(t *testing.T) {
	for _, tc := range []struct {
		v    *float64
		want string
	}{
		{nil, "-"}, {ptr(0), "0"}, {ptr(1099.4), "1099"}, {ptr(12.25), "12.2"}, {ptr(12), "12"},
		{ptr(1), "1.00"}, {ptr(0.9634), "0.963"}, {ptr(-0.5), "-0.500"}, {ptr(250), "250"},
	} {
		if got := Number(tc.v); got != tc.want {
			t.Errorf("Number(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// report is a small report with cost figures; k scales its latencies
// and costs.
func report(name string, k float64) *Report {
	return &Report{Name: name, URL: "http://127.0.0.1:1/query", Seconds: 10, PerSecond: 100 * k, Errors: map[string]int{"UNAVAILABLE": 1},
		Ops: []OpReport{
			{Name: "followingFeed", Count: 10, PerSecond: 1, P50: 2 * k, P95: 3 * k, P99: 4 * k},
			{Name: "unfollowUser", Count: 1, ErrorCount: 1, PerSecond: 0.1}, // never succeeded
		},
		FanoutLag: LagReport{Samples: 2, P50: 5 * k, Max: 9 * k},
		Cost: &Cost{FeeddMsPerOp: 1 * k, RedisMsPerOp: 0.5 * k, InboxWrites: int64(30 * k), Posts: 10, InboxWritesPerPost: ptr(3 * k), Commands: []CommandReport{
			{Name: "EVALSHA", Calls: 16, Usec: 1792, CallsPerOp: 1.6, UsecPerCall: 112 * k},
			{Name: "GET", Calls: 2, Usec: 2, CallsPerOp: 0.2, UsecPerCall: 1},
		}}}
}

func TestFigures(t *testing.T) {
	a, b := report("A", 1), report("B", 2)
	b.Cost.Commands = []CommandReport{{Name: "ZADD", Calls: 5, Usec: 50, CallsPerOp: 0.5, UsecPerCall: 10}, b.Cost.Commands[0]}
	b.Cost.RedisError = "INFO cpu: no"
	got := map[string]Figure{}
	var names []string
	for _, f := range Figures(a, b) {
		got[f.Name] = f
		names = append(names, f.Name)
	}
	want := []string{"operations/s", "errors", "feedd CPU ms/op", "Redis CPU ms/op", "inbox writes/post",
		"followingFeed per s", "followingFeed p50 ms", "followingFeed p95 ms", "followingFeed p99 ms", "unfollowUser per s",
		"fan-out lag p50 ms", "fan-out lag max ms",
		"Redis EVALSHA calls/op", "Redis EVALSHA µs/call", "Redis GET calls/op", "Redis GET µs/call",
		"Redis ZADD calls/op", "Redis ZADD µs/call"}
	if strings.Join(names, "|") != strings.Join(want, "|") {
		t.Errorf("figures\n%q\nwant\n%q", names, want)
	}
	check := func(name string, a, b *float64, ratio string) {
		t.Helper()
		f := got[name]
		if Number(f.A) != Number(a) || Number(f.B) != Number(b) || RatioText(f.Ratio) != ratio {
			t.Errorf("%s: %s %s %s, want %s %s %s", name, Number(f.A), Number(f.B), RatioText(f.Ratio), Number(a), Number(b), ratio)
		}
	}
	check("operations/s", ptr(100), ptr(200), "2.00")
	check("followingFeed p99 ms", ptr(4), ptr(8), "2.00")
	check("Redis CPU ms/op", ptr(0.5), nil, "-") // B's not measured
	check("Redis EVALSHA µs/call", ptr(112), ptr(224), "2.00")
	check("Redis GET calls/op", ptr(0.2), nil, "-")  // not among B's commands
	check("Redis ZADD calls/op", nil, ptr(0.5), "-") // nor ZADD among A's
	check("errors", ptr(1), ptr(1), "1.00")
	check("inbox writes/post", ptr(3), ptr(6), "2.00")

	// One report: figures without B or ratios.
	for _, f := range Figures(a, nil) {
		if f.A == nil || f.B != nil || f.Ratio != nil {
			t.Errorf("single report's %s: %+v", f.Name, f)
		}
	}
}

func TestComparisonPrint(t *testing.T) {
	a, b := report("A", 1), report("B", 1.5)
	c := &Comparison{Phases: []string{"A", "B", "B", "A"}, PhaseSeconds: 5, A: a, B: b, Figures: Figures(a, b)}
	var out bytes.Buffer
	if err := c.Print(&out, false); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"== A: http://127.0.0.1:1/query", "== B:", "phases A B B A of 5.0s each",
		"figure", "B/A", "CPU: feedd 1.000 ms an operation", "EVALSHA"} {
		if !strings.Contains(text, want) {
			t.Errorf("comparison's text lacks %q:\n%s", want, text)
		}
	}
	var row string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, "followingFeed p50 ms") {
			row = strings.Join(strings.Fields(l), " ")
		}
	}
	if row != "followingFeed p50 ms 2.00 3.00 1.50" {
		t.Errorf("row %q, want A, B and B/A", row)
	}
	out.Reset()
	if err := c.Print(&out, true); err != nil {
		t.Fatal(err)
	}
	var back Comparison
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || len(back.Figures) != len(c.Figures) ||
		back.Figures[0].Ratio == nil || *back.Figures[0].Ratio != 1.5 || back.B.Cost.FeeddMsPerOp != 1.5 {
		t.Errorf("JSON comparison %s: %v", out.String(), err)
	}
}

func TestPrintCost(t *testing.T) {
	r := report("", 1)
	var out bytes.Buffer
	if err := r.Print(&out, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CPU: feedd 1.000 ms an operation", "Redis 0.500 ms an operation",
		"\ninbox writes: 3.0 a post (30 for 10 posts published;",
		"redis commands by total time (INFO commandstats over the run, top 2 of 2)", "EVALSHA     16      1.60    112.0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	r.Cost = &Cost{FeeddError: "scrape: refused", RedisError: "no --redis", CommandsError: "no --redis",
		InboxWritesError: "no feedd_fanout_processed_total{kind=\"inbox_writes\"}"}
	r.Dormant = &DormantReport{Share: 0.1, ReturnRatio: 0.02, Users: 9, SleepSeconds: 1.25, Returned: 2, Left: 7}
	r.Users = 100
	out.Reset()
	if err := r.Print(&out, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CPU: feedd not measured: scrape: refused; Redis not measured: no --redis", "redis commands: not measured: no --redis",
		`inbox writes: not measured: no feedd_fanout_processed_total{kind="inbox_writes"}`,
		"dormant: 9 of 100 users (share 0.10) at the start, put to sleep in 1.2s; 2 returned (return ratio 0.02), 7 still dormant"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

func TestAxis(t *testing.T) {
	for _, tc := range []struct{ top, step, end float64 }{
		{0, 0.25, 1}, {math.NaN(), 0.25, 1}, {7, 2, 8}, {400, 100, 400}, {0.9, 0.2, 1}, {1099, 200, 1200},
		{12.2, 2.5, 12.5}, {0.042, 0.01, 0.05}, {10.02, 2, 10}, {8.004, 2, 8}, {8.1, 2, 10}, {10, 2, 10}, {1, 0.2, 1}, {39.9, 10, 40},
	} {
		step, end := axis(tc.top)
		if math.Abs(step-tc.step) > 1e-12 || math.Abs(end-tc.end) > 1e-12 {
			t.Errorf("axis(%v) = %v, %v; want %v, %v", tc.top, step, end, tc.step, tc.end)
		}
	}
}

func TestLayout(t *testing.T) {
	nan := math.NaN()
	c := chart{ID: "x", Unit: "ms", XMax: 4, Empty: "nothing", Series: []series{
		{Name: "gaps", X: []float64{1, 2, 3, 4, 5, 6}, Y: []float64{1, 2, nan, 4, nan, 6}},
		{Name: "dots", Dots: true, X: []float64{1, 2}, Y: []float64{8, nan}},
	}}
	v := c.layout()
	if v.Empty != "" || len(v.Series) != 2 {
		t.Fatalf("layout: %+v", v)
	}
	gaps, dots := v.Series[0], v.Series[1]
	// 1-2 is a line; 4 and 6 stand alone, shown as dots.
	if len(gaps.Paths) != 1 || strings.Count(gaps.Paths[0], "L") != 1 || len(gaps.Dots) != 2 {
		t.Errorf("gaps: paths %q, dots %+v", gaps.Paths, gaps.Dots)
	}
	if len(dots.Paths) != 0 || len(dots.Dots) != 1 || !strings.Contains(dots.Dots[0].Title, "dots at 1s: 8.00 ms") {
		t.Errorf("dots: %+v", dots)
	}
	// The x axis reaches the last point (6 > XMax), the y axis the highest (8).
	if last := v.XTicks[len(v.XTicks)-1]; last.Label != "6" || last.Pos != v.Right {
		t.Errorf("x ticks %+v", v.XTicks)
	}
	if top := v.YTicks[len(v.YTicks)-1]; top.Label != "8" || top.Pos != v.Top || v.YTicks[0].Pos != v.Bottom {
		t.Errorf("y ticks %+v", v.YTicks)
	}
	for _, d := range append(gaps.Dots, dots.Dots...) {
		if d.X < v.Left || d.X > v.Right || d.Y < v.Top || d.Y > v.Bottom {
			t.Errorf("dot %+v outside the plot", d)
		}
	}
	if e := (chart{Empty: "nothing", Series: []series{{X: []float64{1}, Y: []float64{nan}}}}).layout(); e.Empty != "nothing" {
		t.Errorf("a chart without points: Empty %q", e.Empty)
	}
}
