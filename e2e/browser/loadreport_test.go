package browser

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/cmd/feedload/loadreport"
)

// reportOps are the operations of the synthetic reports.
var reportOps = []string{"followingFeed", "followingFeed.scroll", "liveFeed", "publishPost"}

// syntheticReport is a short run of a server as feedload reports it:
// 20 one-second intervals, in two phases, with latencies, CPU and lag
// samples that wave around values scaled by k, so that every chart has
// lines and the two servers of a comparison differ.
func syntheticReport(name string, k float64) *loadreport.Report {
	r := &loadreport.Report{Name: name, URL: "http://127.0.0.1:" + map[string]string{"": "18080", "A": "18080", "B": "18081"}[name] + "/query", KeyPrefix: "lt" + name + ":",
		Users: 500, Concurrency: 4, Seconds: 20, PerSecond: 400 / k, Reads: 7900, Writes: 80, Errors: map[string]int{},
		FanoutLag: loadreport.LagReport{Author: "u7", Followers: 40, Samples: 4, P50: 12 * k, Max: 20 * k},
		Timeline:  &loadreport.Timeline{Interval: 1},
		Cost: &loadreport.Cost{MetricsURL: "http://127.0.0.1:9090/metrics", FeeddCPUSeconds: 8 * k, FeeddMsPerOp: 1 * k,
			RedisMasters: 1, RedisCPUSeconds: 3 * k, RedisMsPerOp: 0.4 * k,
			Commands: []loadreport.CommandReport{
				{Name: "EVALSHA", Calls: 12000, Usec: 1344000, CallsPerOp: 1.6, UsecPerCall: 112 * k, Share: 0.6},
				{Name: "EVALSHA_RO", Calls: 19000, Usec: 665000, CallsPerOp: 2.4, UsecPerCall: 35 * k, Share: 0.4},
			}},
	}
	if name != "" { // a comparison's server: two phases of ten seconds
		r.Timeline.PhaseStarts = []float64{10}
	}
	for i, op := range reportOps {
		r.Ops = append(r.Ops, loadreport.OpReport{Name: op, Count: 2000 - 400*i, PerSecond: float64(100 - 20*i),
			P50: float64(10+i) * k, P95: float64(30+i) * k, P99: float64(60+i) * k, Errors: map[string]int{}})
	}
	for s := 1; s <= 20; s++ {
		wave := 1 + 0.2*math.Sin(float64(s)/3)
		feedd, redis := 1*k*wave, 0.4*k*wave
		b := loadreport.Bucket{End: float64(s), Seconds: 1, Ops: int(400 / k * wave), Latency: map[string]loadreport.Quantiles{},
			FeeddMsPerOp: &feedd, RedisMsPerOp: &redis}
		for i, op := range reportOps {
			if op == "publishPost" && s%3 == 0 {
				continue // a write that did not run every second: a gap in its lines
			}
			b.Latency[op] = loadreport.Quantiles{P50: float64(10+i) * k * wave, P95: float64(30+i) * k * wave, P99: float64(60+i) * k * wave, Samples: 50}
		}
		r.Timeline.Buckets = append(r.Timeline.Buckets, b)
	}
	for i := range 4 {
		r.Timeline.Lag = append(r.Timeline.Lag, loadreport.LagPoint{At: float64(2 + 5*i), Ms: float64(10+3*i) * k})
	}
	return r
}

// writeReports writes a single run's report and a comparison's to dir and
// returns their paths.
func writeReports(t *testing.T, dir string) (single, compared string) {
	t.Helper()
	a, b := syntheticReport("A", 1), syntheticReport("B", 1.3)
	c := &loadreport.Comparison{Phases: []string{"A", "B", "B", "A"}, PhaseSeconds: 10, A: a, B: b, Figures: loadreport.Figures(a, b)}
	one := syntheticReport("", 1)
	single, compared = filepath.Join(dir, "single.html"), filepath.Join(dir, "compare.html")
	for path, write := range map[string]func(*bytes.Buffer) error{
		single:   func(w *bytes.Buffer) error { return one.WriteHTML(w) },
		compared: func(w *bytes.Buffer) error { return c.WriteHTML(w) },
	} {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return single, compared
}

var externalRef = regexp.MustCompile(`(?i)(?:\bsrc\s*=|\bhref\s*=|url\(|@import|<script|<link|<img|<iframe|<object)`)

// TestLoadReportSelfContained checks, without a browser, what makes the
// report open with no network: it names no resource at all (no src, href,
// url(), script, link or image), and its Content-Security-Policy forbids
// every load but its inline style.
func TestLoadReportSelfContained(t *testing.T) {
	single, compared := writeReports(t, t.TempDir())
	for _, path := range []string{single, compared} {
		page, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if m := externalRef.FindAll(page, -1); len(m) > 0 {
			t.Errorf("%s refers to resources: %q", filepath.Base(path), m)
		}
		if !bytes.Contains(page, []byte(`content="default-src 'none'; style-src 'unsafe-inline'"`)) {
			t.Errorf("%s has no Content-Security-Policy forbidding loads", filepath.Base(path))
		}
		if n := bytes.Count(page, []byte(`<figure class="chart"`)); n != 3+len(reportOps) {
			t.Errorf("%s has %d charts, want %d", filepath.Base(path), n, 3+len(reportOps))
		}
	}
}

// chartSeen is what the page shows of one chart.
type chartSeen struct {
	ID     string    `json:"id"`
	Width  float64   `json:"width"`  // the SVG as laid out, in CSS pixels
	Series []string  `json:"series"` // data-series of each series group
	Legend []string  `json:"legend"`
	Paths  []int     `json:"paths"`  // per series: drawn paths with a length
	Dots   []int     `json:"dots"`   // per series: dots drawn
	Length []float64 `json:"length"` // per series: total length of its paths
	Empty  string    `json:"empty"`
}

const jsCharts = `[...document.querySelectorAll('figure.chart')].map(f => {
	const svg = f.querySelector('svg.plot'), groups = [...svg.querySelectorAll('g.series')];
	const paths = g => [...g.querySelectorAll('path')].filter(p => p.getTotalLength() > 0);
	return {
		id: f.dataset.chart,
		width: svg.getBoundingClientRect().width,
		series: groups.map(g => g.dataset.series),
		legend: [...f.querySelectorAll('ul.legend li')].map(li => li.textContent.trim()),
		paths: groups.map(g => paths(g).length),
		dots: groups.map(g => [...g.querySelectorAll('circle')].filter(c => c.getBBox().width > 0).length),
		length: groups.map(g => paths(g).reduce((n, p) => n + p.getTotalLength(), 0)),
		empty: (svg.querySelector('text.empty') || {}).textContent || '',
	};
})`

// TestLoadReportInChromium opens feedload's HTML reports, a single run's
// and a comparison's, from files in headless Chromium with every request
// for another host refused, and checks from the page that each chart
// rendered: its SVG laid out, each series drawn (paths the browser gives a
// length, or dots with a size), gaps left as gaps, and a legend naming
// each series, both servers' in the comparison.
func TestLoadReportInChromium(t *testing.T) {
	bin := chromiumOrSkip(t)
	dir := t.TempDir()
	single, compared := writeReports(t, dir)
	for _, tc := range []struct {
		path     string
		prefixes []string // of the series' names: one per server
	}{{single, []string{""}}, {compared, []string{"A ", "B "}}} {
		t.Run(strings.TrimSuffix(filepath.Base(tc.path), ".html"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			log := &pageLog{}
			trap := startTrap(t)
			c, s := openPage(ctx, t, bin, trap, log)
			origin := "file://" + dir
			defer checkOffline(ctx, t, c, s, origin, 1, log, trap)
			if err := c.call(ctx, s, "Page.navigate", map[string]any{"url": "file://" + tc.path}, nil); err != nil {
				t.Fatal(err)
			}
			charts := waitFor(ctx, t, c, s, "the report's charts", `document.readyState === 'complete' ? `+jsCharts+` : []`,
				30*time.Second, func(cs []chartSeen) bool { return len(cs) > 0 })
			checkCharts(t, charts, tc.prefixes)
			screenshot(ctx, t, c, s, "loadreport-"+filepath.Base(tc.path)+".png")
		})
	}
}

func checkCharts(t *testing.T, charts []chartSeen, prefixes []string) {
	t.Helper()
	want := []string{"throughput", "cpu", "lag"}
	for _, op := range reportOps {
		want = append(want, "latency-"+op)
	}
	var ids []string
	for _, ch := range charts {
		ids = append(ids, ch.ID)
	}
	if !slices.Equal(ids, want) {
		t.Fatalf("charts %q, want %q", ids, want)
	}
	perServer := map[string][]string{"throughput": {"operations/s"}, "cpu": {"feedd", "Redis"}, "lag": {"fan-out lag"}}
	for _, ch := range charts {
		names := perServer[ch.ID]
		if names == nil {
			names = []string{"p50", "p95", "p99"}
		}
		var wantSeries []string
		for _, p := range prefixes {
			for _, n := range names {
				wantSeries = append(wantSeries, p+n)
			}
		}
		if ch.Width < 300 || ch.Empty != "" {
			t.Errorf("%s: laid out %v px wide, empty %q", ch.ID, ch.Width, ch.Empty)
		}
		if !slices.Equal(ch.Series, wantSeries) || !slices.Equal(ch.Legend, wantSeries) {
			t.Errorf("%s: series %q, legend %q; want %q", ch.ID, ch.Series, ch.Legend, wantSeries)
			continue
		}
		for i, name := range ch.Series {
			switch {
			case ch.ID == "lag":
				// Samples, not a trend: a dot each.
				if ch.Dots[i] != 4 || ch.Paths[i] != 0 {
					t.Errorf("%s %s: %d dots, %d paths; want 4 dots", ch.ID, name, ch.Dots[i], ch.Paths[i])
				}
			case ch.ID == "latency-publishPost":
				// Every third interval has no call: a line per run of
				// two intervals, broken at each gap.
				if ch.Paths[i] != 7 || ch.Length[i] <= 0 {
					t.Errorf("%s %s: %d paths, length %v; want 7 runs between the gaps", ch.ID, name, ch.Paths[i], ch.Length[i])
				}
			default:
				if ch.Paths[i] != 1 || ch.Length[i] < 300 {
					t.Errorf("%s %s: %d paths, length %v; want one line across the chart", ch.ID, name, ch.Paths[i], ch.Length[i])
				}
			}
		}
	}
}
