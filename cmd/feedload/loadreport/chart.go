package loadreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// series is one line of a chart in data coordinates (seconds of load on
// x); a NaN y is a gap. Dots draws the points only: samples, not a trend.
type series struct {
	Name  string
	Color string
	Dash  string // stroke-dasharray; "" is solid
	Dots  bool
	X, Y  []float64
}

// chart is a chart before layout. Empty is what it says when no series
// has a point.
type chart struct {
	ID, Title, Unit, Empty string
	XMax                   float64
	Phases                 []float64
	Series                 []series
}

// Chart geometry, in SVG user units.
const (
	chartW, chartH                          = 720, 260
	plotLeft, plotRight, plotTop, plotBelow = 60, 12, 14, 34
)

// chartView is a chart laid out for the template.
type chartView struct {
	ID, Title, Unit, Empty string
	W, H                   int
	Left, Right            float64
	Top, Bottom            float64
	MidX, MidY             float64 // the plot's centre, for Empty
	XTicks, YTicks         []tick
	Phases                 []float64
	Series                 []seriesView
}

type tick struct {
	Pos   float64
	Label string
}

type seriesView struct {
	Name, Color, Dash string
	Paths             []string // one per run of points without a gap
	Dots              []dot
}

type dot struct {
	X, Y  float64
	Title string
}

// layout places c's series on its axes: x from 0 to XMax seconds, y from 0
// to a round number above the highest point.
func (c chart) layout() chartView {
	v := chartView{ID: c.ID, Title: c.Title, Unit: c.Unit, W: chartW, H: chartH,
		Left: plotLeft, Right: chartW - plotRight, Top: plotTop, Bottom: chartH - plotBelow}
	v.MidX, v.MidY = (v.Left+v.Right)/2, (v.Top+v.Bottom)/2
	xMax, yMax := c.XMax, 0.0
	points := 0
	for _, s := range c.Series {
		for i, y := range s.Y {
			if !math.IsNaN(y) {
				points++
				yMax = max(yMax, y)
				xMax = max(xMax, s.X[i])
			}
		}
	}
	if points == 0 {
		v.Empty = c.Empty
	}
	xStep, xTop := axis(xMax)
	yStep, yTop := axis(yMax)
	px := func(x float64) float64 { return v.Left + (v.Right-v.Left)*x/xTop }
	py := func(y float64) float64 { return v.Bottom - (v.Bottom-v.Top)*y/yTop }
	for x := 0.0; x <= xTop+xStep/2; x += xStep {
		v.XTicks = append(v.XTicks, tick{px(x), label(x)})
	}
	for y := 0.0; y <= yTop+yStep/2; y += yStep {
		v.YTicks = append(v.YTicks, tick{py(y), label(y)})
	}
	for _, p := range c.Phases {
		v.Phases = append(v.Phases, px(p))
	}
	for _, s := range c.Series {
		sv := seriesView{Name: s.Name, Color: s.Color, Dash: s.Dash}
		var run []string
		flush := func(i int) {
			switch {
			case len(run) > 1:
				sv.Paths = append(sv.Paths, "M"+strings.Join(run, "L"))
			case len(run) == 1 && !s.Dots: // a lone point of a line: shown as a dot
				sv.Dots = append(sv.Dots, dot{px(s.X[i]), py(s.Y[i]), pointTitle(s, i, c.Unit)})
			}
			run = run[:0]
		}
		for i, y := range s.Y {
			if math.IsNaN(y) {
				flush(i - 1)
				continue
			}
			if s.Dots {
				sv.Dots = append(sv.Dots, dot{px(s.X[i]), py(y), pointTitle(s, i, c.Unit)})
				continue
			}
			run = append(run, fmt.Sprintf("%.1f %.1f", px(s.X[i]), py(y)))
		}
		flush(len(s.Y) - 1)
		v.Series = append(v.Series, sv)
	}
	return v
}

func pointTitle(s series, i int, unit string) string {
	return fmt.Sprintf("%s at %ss: %s %s", s.Name, label(s.X[i]), Number(&s.Y[i]), unit)
}

// axis is the smallest round step (1, 2, 2.5 or 5 times a power of ten)
// that reaches top in at most six intervals, and the first multiple of it
// at or above top (1 for an empty axis). A top within 1% of a step past a
// multiple (a run of 30.02 s) ends at that multiple: the point stands a
// hair past the axis rather than a whole step short of its end.
func axis(top float64) (step, end float64) {
	if !(top > 0) {
		return 0.25, 1
	}
	intervals := func(step float64) float64 { return max(1, math.Ceil(top/step-0.01)) }
	mag := math.Pow(10, math.Floor(math.Log10(top/4)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step = m * mag; intervals(step) <= 6 {
			break
		}
	}
	return step, intervals(step) * step
}

// label writes a tick value without trailing zeros.
func label(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}
