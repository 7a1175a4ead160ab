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
	mk := func(id, title, unit, empty string, each func(r *Report, prefix, dash, own string) []series) chartView {
		c := chart{ID: id, Title: title, Unit: unit, Empty: empty, XMax: xMax, Phases: phases}
		for i, r := range reports {
			prefix, dash, own := "", "", colorA
			if len(reports) > 1 {
				prefix = r.Name + " "
				if i > 0 {
					dash, own = dashB, colorB
				}
			}
			if r.Timeline != nil {
				c.Series = append(c.Series, each(r, prefix, dash, own)...)
			}
		}
		return c.layout()
	}
	out := []chartView{
		mk("throughput", "Throughput", "operations/s", "no operations", func(r *Report, prefix, dash, own string) []series {
			return []series{line(r.Timeline, prefix+"operations/s", own, "", func(b Bucket) float64 { return b.PerSecond() })}
		}),
		mk("cpu", "CPU an operation", "ms/op", "CPU not measured", func(r *Report, prefix, dash, _ string) []series {
			return []series{
				line(r.Timeline, prefix+"feedd", colorFeedd, dash, func(b Bucket) float64 { return deref(b.FeeddMsPerOp) }),
				line(r.Timeline, prefix+"Redis", colorRedis, dash, func(b Bucket) float64 { return deref(b.RedisMsPerOp) }),
			}
		}),
		mk("lag", "Fan-out lag (publishPost to a follower's first page)", "ms", "no lag samples", func(r *Report, prefix, _, own string) []series {
			s := series{Name: prefix + "fan-out lag", Color: own, Dots: true}
			for _, p := range r.Timeline.Lag {
				s.X, s.Y = append(s.X, p.At), append(s.Y, p.Ms)
			}
			return []series{s}
		}),
	}
	for _, o := range reports[0].Ops {
		out = append(out, mk("latency-"+o.Name, o.Name+" latency", "ms", "no successful calls", func(r *Report, prefix, dash, _ string) []series {
			var ss []series
			for i, q := range []struct {
				name string
				get  func(Quantiles) float64
			}{{"p50", func(q Quantiles) float64 { return q.P50 }}, {"p95", func(q Quantiles) float64 { return q.P95 }},
				{"p99", func(q Quantiles) float64 { return q.P99 }}} {
				ss = append(ss, line(r.Timeline, prefix+q.name, quantileColors[i], dash, func(b Bucket) float64 {
					if l, ok := b.Latency[o.Name]; ok && l.Samples > 0 {
						return q.get(l)
					}
					return math.NaN()
				}))
			}
			return ss
		}))
	}
	return out
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
