package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
)

// Report is feedload's result; --json prints it as is.
type Report struct {
	URL         string         `json:"url"`
	Users       int            `json:"users"`
	Concurrency int            `json:"concurrency"`
	Seconds     float64        `json:"seconds"`
	Build       *BuildReport   `json:"build,omitempty"`
	Ops         []OpReport     `json:"operations"`
	Reads       int            `json:"reads"`
	Writes      int            `json:"writes"`
	PerSecond   float64        `json:"perSecond"`
	Errors      map[string]int `json:"errors"` // by extensions.code
	FanoutLag   LagReport      `json:"fanoutLag"`
	// BacklogStart and BacklogEnd are the fan-out backlog (events, tasks
	// and journal entries not yet done) when the load began and ended;
	// with --redis only.
	BacklogStart int64         `json:"backlogStart"`
	BacklogEnd   int64         `json:"backlogEnd"`
	Memory       *MemoryReport `json:"memory,omitempty"`
}

// OpReport is one operation's figures; latencies are of successful calls.
type OpReport struct {
	Name       string         `json:"name"`
	Count      int            `json:"count"`
	ErrorCount int            `json:"errorCount"`
	PerSecond  float64        `json:"perSecond"`
	P50        float64        `json:"p50ms"`
	P95        float64        `json:"p95ms"`
	P99        float64        `json:"p99ms"`
	Errors     map[string]int `json:"errors"`
}

// LagReport is the fan-out lag: from publishPost's answer until the post is
// on a follower's first page.
type LagReport struct {
	Author    string  `json:"author,omitempty"`
	Followers int     `json:"followers"`
	Samples   int     `json:"samples"`
	Timeouts  int     `json:"timeouts"` // not visible within the lag timeout
	P50       float64 `json:"p50ms"`
	Max       float64 `json:"maxms"`
}

// Print writes the report as a table, or as JSON.
func (r *Report) Print(w io.Writer, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	}
	if b := r.Build; b != nil {
		fmt.Fprintf(w, "network: %d users, %d follows, %d posts, %d live sessions; imported in %.1fs, fan-out drained %.1fs later\n",
			b.Users, b.Follows, b.Posts, b.Lives, b.ImportSeconds, b.FanoutSeconds)
	}
	fmt.Fprintf(w, "load: %d clients for %.1fs against %s (%d users): %.0f operations/s, %d reads to %d writes\n",
		r.Concurrency, r.Seconds, r.URL, r.Users, r.PerSecond, r.Reads, r.Writes)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "operation\tcount\tper s\tp50 ms\tp95 ms\tp99 ms\terrors\t")
	for _, o := range r.Ops {
		fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.2f\t%.2f\t%.2f\t%d\t\n", o.Name, o.Count, o.PerSecond, o.P50, o.P95, o.P99, o.ErrorCount)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(r.Errors) == 0 {
		fmt.Fprintln(w, "errors by code: none")
	} else {
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(r.Errors)) {
			parts = append(parts, fmt.Sprintf("%s %d", c, r.Errors[c]))
		}
		fmt.Fprintf(w, "errors by code: %s\n", strings.Join(parts, ", "))
	}
	l := r.FanoutLag
	if l.Samples > 0 || l.Timeouts > 0 {
		fmt.Fprintf(w, "fan-out lag: %d samples from %s (%d followers): p50 %.1f ms, max %.1f ms; %d not visible within the lag timeout\n",
			l.Samples, l.Author, l.Followers, l.P50, l.Max, l.Timeouts)
	} else {
		fmt.Fprintln(w, "fan-out lag: no samples")
	}
	fmt.Fprintf(w, "fan-out backlog: %d at the start, %d at the end\n", r.BacklogStart, r.BacklogEnd)
	if m := r.Memory; m != nil {
		if m.Error != "" {
			fmt.Fprintf(w, "redis memory: not measured: %s\n", m.Error)
		} else {
			fmt.Fprintf(w, "redis memory: used_memory %s; %d keys under the prefix, %s: %s a user (%d users); %d inboxes, %d entries: %.1f B an entry\n",
				size(m.UsedMemory), m.Keys, size(m.KeyBytes), size(int64(m.BytesPerUser)), m.Users, m.Inboxes, m.InboxEntries, m.BytesPerInboxEntry)
		}
	}
	return nil
}

func size(b int64) string {
	switch {
	case b >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(b)/(1<<30))
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(b)/(1<<10))
	}
	return fmt.Sprintf("%d B", b)
}
