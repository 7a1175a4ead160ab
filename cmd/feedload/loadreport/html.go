package loadreport

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"
)

// The page is one file with everything inline: its style, and charts drawn
// as SVG here, in Go. It runs no script and loads nothing (its
// Content-Security-Policy forbids it), so it opens the same with no
// network, attached to a mail or years later.
//
//go:embed report.html.tmpl
var pageText string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"num":   Number,
	"ratio": RatioText,
	"ms":    func(usec int64) float64 { return float64(usec) / 1000 },
	"top":   func(c *Cost) []CommandReport { return c.Top() },
	"pct":   func(v float64) string { return fmt.Sprintf("%.1f%%", 100*v) },
}).Parse(pageText))

type pageData struct {
	Title     string
	Generated string
	Phases    string
	Compare   bool
	Servers   []*Report
	Figures   []Figure
	Charts    []chartView
}

// WriteHTML writes the report as one self-contained HTML page.
func (r *Report) WriteHTML(w io.Writer) error {
	return writePage(w, pageData{Title: "feedload: " + r.URL, Servers: []*Report{r}, Figures: Figures(r, nil)})
}

// WriteHTML writes the comparison as one self-contained HTML page, both
// servers on the same charts.
func (c *Comparison) WriteHTML(w io.Writer) error {
	return writePage(w, pageData{Title: fmt.Sprintf("feedload: A %s against B %s", c.A.URL, c.B.URL),
		Phases:  fmt.Sprintf("phases %s, %.1f s each", strings.Join(c.Phases, " "), c.PhaseSeconds),
		Compare: true, Servers: []*Report{c.A, c.B}, Figures: c.Figures})
}

func writePage(w io.Writer, d pageData) error {
	d.Generated = time.Now().Format(time.RFC3339)
	d.Charts = charts(d.Servers)
	if err := page.Execute(w, d); err != nil {
		return fmt.Errorf("write the HTML report: %w", err)
	}
	return nil
}
