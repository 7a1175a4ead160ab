package metrics

import (
	"bufio"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Writer writes metric families in the Prometheus text exposition format
// (version 0.0.4). Call Family once per metric name, then its samples.
type Writer struct {
	w   *bufio.Writer
	err error
}

// ContentType is the media type of what Writer writes.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// NewWriter returns a Writer on w; call Flush at the end.
func NewWriter(w io.Writer) *Writer { return &Writer{w: bufio.NewWriter(w)} }

// Flush writes out what is buffered and returns the first write error.
func (p *Writer) Flush() error {
	if err := p.w.Flush(); p.err == nil {
		p.err = err
	}
	return p.err
}

// Family writes the HELP and TYPE lines of a metric; typ is counter, gauge
// or histogram.
func (p *Writer) Family(name, typ, help string) {
	p.str("# HELP " + name + " " + escapeHelp(help) + "\n# TYPE " + name + " " + typ + "\n")
}

// Sample writes one sample; labels alternate names and values.
func (p *Writer) Sample(name string, value float64, labels ...string) {
	p.str(name)
	if len(labels) > 0 {
		p.str("{")
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				p.str(",")
			}
			p.str(labels[i] + `="` + escapeLabel(labels[i+1]) + `"`)
		}
		p.str("}")
	}
	p.str(" " + formatFloat(value) + "\n")
}

// Histogram writes a histogram's _bucket, _sum and _count samples. counts
// are per bucket, not cumulative, with one more element than bounds (the
// +Inf bucket).
func (p *Writer) Histogram(name string, bounds []float64, counts []int64, sum float64, labels ...string) {
	var cum int64
	for i, c := range counts {
		cum += c
		le := math.Inf(1)
		if i < len(bounds) {
			le = bounds[i]
		}
		p.Sample(name+"_bucket", float64(cum), append(labels[:len(labels):len(labels)], "le", formatFloat(le))...)
	}
	p.Sample(name+"_sum", sum, labels...)
	p.Sample(name+"_count", float64(cum), labels...)
}

func (p *Writer) str(s string) {
	if p.err == nil {
		_, p.err = p.w.WriteString(s)
	}
}

func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

var (
	labelEscaper = strings.NewReplacer(`\`, `\\`, "\n", `\n`, `"`, `\"`)
	helpEscaper  = strings.NewReplacer(`\`, `\\`, "\n", `\n`)
)

func escapeLabel(s string) string { return labelEscaper.Replace(s) }
func escapeHelp(s string) string  { return helpEscaper.Replace(s) }

// WritePrometheus writes every operation's metrics: round-trip and latency
// histograms and error counters, labelled by operation type and name.
func (r *Registry) WritePrometheus(p *Writer) {
	ops := r.Operations()
	tripBounds := make([]float64, len(TripBuckets))
	for i, b := range TripBuckets {
		tripBounds[i] = float64(b)
	}
	p.Family("feedd_graphql_request_duration_seconds", "histogram", "Time to serve a GraphQL HTTP request, by operation type and name.")
	for _, op := range ops {
		if op.Served > 0 {
			p.Histogram("feedd_graphql_request_duration_seconds", LatencyBuckets, op.Latency, op.Seconds, "type", op.Type, "operation", op.Name)
		}
	}
	p.Family("feedd_graphql_redis_round_trips", "histogram", "Redis round trips one GraphQL operation cost (cache hits are free), by operation type and name.")
	for _, op := range ops {
		if op.Requests > 0 {
			p.Histogram("feedd_graphql_redis_round_trips", tripBounds, op.Buckets, float64(op.RoundTrips), "type", op.Type, "operation", op.Name)
		}
	}
	p.Family("feedd_graphql_errors_total", "counter", "GraphQL errors returned, by operation type and name and extensions.code.")
	for _, op := range ops {
		codes := make([]string, 0, len(op.Errors))
		for c := range op.Errors {
			codes = append(codes, c)
		}
		slices.Sort(codes)
		for _, c := range codes {
			p.Sample("feedd_graphql_errors_total", float64(op.Errors[c]), "type", op.Type, "operation", op.Name, "code", c)
		}
	}
}
