package loadreport

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
)

// Comparison is two servers driven in alternation with the same workload
// (--compare): both reports, the order of the phases, and every figure of
// both side by side with their ratio.
type Comparison struct {
	Phases       []string `json:"phases"` // "A", "B", "B", "A"
	PhaseSeconds float64  `json:"phaseSeconds"`
	A            *Report  `json:"a"`
	B            *Report  `json:"b"`
	Figures      []Figure `json:"figures"`
}

// Figure is one figure of a report, or of two side by side: nil where a
// report does not have it (a cost not measured, an operation that never
// succeeded).
type Figure struct {
	Name  string   `json:"name"`
	A     *float64 `json:"a"`
	B     *float64 `json:"b"`
	Ratio *float64 `json:"ratio"` // B/A
}

// Ratio is b/a, or nil when either is missing or a is 0.
func Ratio(a, b *float64) *float64 {
	if a == nil || b == nil || *a == 0 {
		return nil
	}
	r := *b / *a
	return &r
}

// Figures lists every figure of a, and of b beside it when b is not nil,
// in the order the reports print them.
func Figures(a, b *Report) []Figure {
	s := &figureSet{a: a, b: b}
	s.totals()
	s.operations()
	s.lag()
	s.commands()
	s.memory()
	return s.out
}

// figureSet collects the figures of a and b.
type figureSet struct {
	a, b *Report
	out  []Figure
}

// add adds the figure get reads from each report, unless neither has it.
func (s *figureSet) add(name string, get func(*Report) *float64) {
	f := Figure{Name: name, A: get(s.a)}
	if s.b != nil {
		f.B = get(s.b)
		f.Ratio = Ratio(f.A, f.B)
	}
	if f.A != nil || f.B != nil {
		s.out = append(s.out, f)
	}
}

func (s *figureSet) totals() {
	if s.a.Live != nil || s.b != nil && s.b.Live != nil {
		live := func(get func(*LiveReport) *float64) func(*Report) *float64 {
			return func(r *Report) *float64 {
				if r.Live == nil {
					return nil
				}
				return get(r.Live)
			}
		}
		s.add("first live pages/s", live(func(l *LiveReport) *float64 { return val(l.PerSecond) }))
		s.add("feedd CPU ms/first live page", live(func(l *LiveReport) *float64 { return l.FeeddMsPerPage }))
		s.add("Redis CPU ms/first live page", live(func(l *LiveReport) *float64 { return l.RedisMsPerPage }))
		s.add("feedload CPU ms/first live page", live(func(l *LiveReport) *float64 { return l.LoadMsPerPage }))
	}
	s.add("operations/s", func(r *Report) *float64 { return val(r.PerSecond) })
	s.add("errors", func(r *Report) *float64 { return val(float64(sum(r.Errors))) })
	s.add("feedd CPU ms/op", func(r *Report) *float64 {
		return when(r.Cost != nil && r.Cost.FeeddError == "", func() float64 { return r.Cost.FeeddMsPerOp })
	})
	s.add("Redis CPU ms/op", func(r *Report) *float64 {
		return when(r.Cost != nil && r.Cost.RedisError == "", func() float64 { return r.Cost.RedisMsPerOp })
	})
	s.add("Redis main-thread CPU ms/op", func(r *Report) *float64 {
		if r.Cost == nil || r.Cost.RedisError != "" {
			return nil
		}
		return r.Cost.RedisMainMsPerOp
	})
	s.add("inbox writes/post", func(r *Report) *float64 {
		if r.Cost == nil || r.Cost.InboxWritesError != "" {
			return nil
		}
		return r.Cost.InboxWritesPerPost
	})
}

// operations are each operation's throughput and latencies; an operation
// that never succeeded has no latency.
func (s *figureSet) operations() {
	for _, o := range s.a.Ops {
		for _, q := range []struct {
			name string
			get  func(OpReport) float64
		}{
			{"per s", func(o OpReport) float64 { return o.PerSecond }},
			{"p50 ms", func(o OpReport) float64 { return o.P50 }},
			{"p95 ms", func(o OpReport) float64 { return o.P95 }},
			{"p99 ms", func(o OpReport) float64 { return o.P99 }},
		} {
			s.add(o.Name+" "+q.name, func(r *Report) *float64 {
				ro, ok := r.op(o.Name)
				return when(ok && (q.name == "per s" || ro.Count > ro.ErrorCount), func() float64 { return q.get(ro) })
			})
		}
	}
}

func (s *figureSet) lag() {
	lag := func(get func(LagReport) float64) func(*Report) *float64 {
		return func(r *Report) *float64 {
			return when(r.FanoutLag.Samples > 0, func() float64 { return get(r.FanoutLag) })
		}
	}
	s.add("fan-out lag p50 ms", lag(func(l LagReport) float64 { return l.P50 }))
	s.add("fan-out lag max ms", lag(func(l LagReport) float64 { return l.Max }))
}

// commands are the busiest Redis commands of either report.
func (s *figureSet) commands() {
	for _, name := range topNames(s.a, s.b) {
		s.add("Redis "+name+" calls/op", func(r *Report) *float64 {
			c, ok := r.command(name)
			return when(ok, func() float64 { return c.CallsPerOp })
		})
		s.add("Redis "+name+" µs/call", func(r *Report) *float64 {
			c, ok := r.command(name)
			return when(ok, func() float64 { return c.UsecPerCall })
		})
	}
}

func (s *figureSet) memory() {
	mem := func(get func(*MemoryReport) float64) func(*Report) *float64 {
		return func(r *Report) *float64 {
			return when(r.Memory != nil && r.Memory.Error == "", func() float64 { return get(r.Memory) })
		}
	}
	s.add("memory B/user", mem(func(m *MemoryReport) float64 { return m.BytesPerUser }))
	s.add("memory B/inbox entry", mem(func(m *MemoryReport) float64 { return m.BytesPerInboxEntry }))
}

func val(v float64) *float64 { return &v }

// when is get's value if ok, else nil (get is not called).
func when(ok bool, get func() float64) *float64 {
	if !ok {
		return nil
	}
	return val(get())
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func (r *Report) op(name string) (OpReport, bool) {
	for _, o := range r.Ops {
		if o.Name == name {
			return o, true
		}
	}
	return OpReport{}, false
}

func (r *Report) command(name string) (CommandReport, bool) {
	if r.Cost != nil {
		for _, c := range r.Cost.Commands {
			if c.Name == name {
				return c, true
			}
		}
	}
	return CommandReport{}, false
}

// topNames are the busiest commands of a, then those of b not among them.
func topNames(a, b *Report) []string {
	var names []string
	for _, r := range []*Report{a, b} {
		if r == nil {
			continue
		}
		for _, c := range r.Cost.Top() {
			if !slices.Contains(names, c.Name) {
				names = append(names, c.Name)
			}
		}
	}
	return names
}

// Print writes both reports, then every figure side by side; or the
// whole comparison as JSON.
func (c *Comparison) Print(w io.Writer, asJSON bool) error {
	if asJSON {
		return printJSON(w, c)
	}
	for _, r := range []*Report{c.A, c.B} {
		fmt.Fprintf(w, "== %s: %s", r.Name, r.URL)
		if r.KeyPrefix != "" {
			fmt.Fprintf(w, " (key prefix %q)", r.KeyPrefix)
		}
		fmt.Fprintln(w)
		if err := r.Print(w, false); err != nil {
			return err
		}
	}
	fmt.Fprintf(w, "== side by side: phases %s of %.1fs each\n", strings.Join(c.Phases, " "), c.PhaseSeconds)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "figure\tA\tB\tB/A\t")
	for _, f := range c.Figures {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", f.Name, Number(f.A), Number(f.B), RatioText(f.Ratio))
	}
	return tw.Flush()
}

// Number formats a figure with the digits that matter at its size; "-"
// for none.
func Number(v *float64) string {
	switch {
	case v == nil:
		return "-"
	case *v == 0 || *v == math.Trunc(*v) && math.Abs(*v) >= 10 && math.Abs(*v) < 1e15: // a count
		return fmt.Sprintf("%.0f", *v)
	case *v >= 100 || *v <= -100:
		return fmt.Sprintf("%.0f", *v)
	case *v >= 10 || *v <= -10:
		return fmt.Sprintf("%.1f", *v)
	case *v >= 1 || *v <= -1:
		return fmt.Sprintf("%.2f", *v)
	}
	return fmt.Sprintf("%.3f", *v)
}

// RatioText formats a ratio; "-" for none.
func RatioText(r *float64) string {
	if r == nil {
		return "-"
	}
	return fmt.Sprintf("%.2f", *r)
}
