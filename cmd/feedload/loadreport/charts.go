package loadreport

import "math"

// Colours: a server's own colour where a chart has a line per server; by
// figure where it has several (latency quantiles, feedd and Redis), the
// second server's lines then dashed.
const (
	colorA, colorB = "#2b6cb0", "#c05621"
	colorFeedd     = "#2f855a"
	colorRedis     = "#c53030"
	dashB          = "6 4"
)

var quantileColors = [3]string{"#2b6cb0", "#d69e2e", "#c53030"}

// look is how one server's series are drawn: their names' prefix ("A ",
// "B ", or none alone), their dash, and the server's own colour.
type look struct {
	prefix, dash, color string
}

// charts are the report's charts for one server, or two compared (their
// series on the same charts): throughput, CPU an operation, fan-out lag,
// then each operation's latency quantiles.
func charts(reports []*Report) []chartView {
	var xMax float64
	var phases []float64
	for _, r := range reports {
		if t := r.Timeline; t != nil {
			if n := len(t.Buckets); n > 0 {
				xMax = max(xMax, t.Buckets[n-1].End)
			}
			phases = t.PhaseStarts
		}
	}
	mk := func(c chart, each func(t *Timeline, l look) []series) chartView {
		c.XMax, c.Phases = xMax, phases
		for i, r := range reports {
			l := look{color: colorA}
			if len(reports) > 1 {
				l.prefix = r.Name + " "
				if i > 0 {
					l.dash, l.color = dashB, colorB
				}
			}
			if r.Timeline != nil {
				c.Series = append(c.Series, each(r.Timeline, l)...)
			}
		}
		return c.layout()
	}
	out := []chartView{
		mk(chart{ID: "throughput", Title: "Throughput", Unit: "operations/s", Empty: "no operations"}, throughput),
		mk(chart{ID: "cpu", Title: "CPU an operation", Unit: "ms/op", Empty: "CPU not measured"}, cpu),
		mk(chart{ID: "lag", Title: "Fan-out lag (publishPost to a follower's first page)", Unit: "ms", Empty: "no lag samples"}, lag),
	}
	for _, o := range reports[0].Ops {
		out = append(out, mk(chart{ID: "latency-" + o.Name, Title: o.Name + " latency", Unit: "ms", Empty: "no successful calls"},
			func(t *Timeline, l look) []series { return latency(t, l, o.Name) }))
	}
	return out
}

func throughput(t *Timeline, l look) []series {
	return []series{line(t, l.prefix+"operations/s", l.color, "", func(b Bucket) float64 { return b.PerSecond() })}
}

func cpu(t *Timeline, l look) []series {
	return []series{
		line(t, l.prefix+"feedd", colorFeedd, l.dash, func(b Bucket) float64 { return deref(b.FeeddMsPerOp) }),
		line(t, l.prefix+"Redis", colorRedis, l.dash, func(b Bucket) float64 { return deref(b.RedisMsPerOp) }),
	}
}

// lag draws the samples as dots: samples, not a trend.
func lag(t *Timeline, l look) []series {
	s := series{Name: l.prefix + "fan-out lag", Color: l.color, Dots: true}
	for _, p := range t.Lag {
		s.X, s.Y = append(s.X, p.At), append(s.Y, p.Ms)
	}
	return []series{s}
}

// latency is op's p50, p95 and p99; a gap where an interval had no
// successful call of it.
func latency(t *Timeline, l look, op string) []series {
	var ss []series
	for i, q := range []struct {
		name string
		get  func(Quantiles) float64
	}{{"p50", func(q Quantiles) float64 { return q.P50 }}, {"p95", func(q Quantiles) float64 { return q.P95 }},
		{"p99", func(q Quantiles) float64 { return q.P99 }}} {
		ss = append(ss, line(t, l.prefix+q.name, quantileColors[i], l.dash, func(b Bucket) float64 {
			if v, ok := b.Latency[op]; ok && v.Samples > 0 {
				return q.get(v)
			}
			return math.NaN()
		}))
	}
	return ss
}

// line is a series with a point at the end of each bucket.
func line(t *Timeline, name, color, dash string, y func(Bucket) float64) series {
	s := series{Name: name, Color: color, Dash: dash}
	for _, b := range t.Buckets {
		s.X, s.Y = append(s.X, b.End), append(s.Y, y(b))
	}
	return s
}

func deref(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}
