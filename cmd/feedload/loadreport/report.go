// Package loadreport is what a feedload run found and how it is shown: the
// report's figures (throughput, latency, errors, fan-out lag, the CPU an
// operation costs feedd and Redis, Redis's busiest commands, memory), its
// time series, the side-by-side figures of two servers compared, and the
// text, JSON and self-contained HTML forms of all that. It measures
// nothing: cmd/feedload fills it.
package loadreport

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// Report is one server's result; --json prints it as is.
type Report struct {
	Name        string         `json:"name,omitempty"` // "A" or "B" in a comparison
	URL         string         `json:"url"`
	KeyPrefix   string         `json:"keyPrefix,omitempty"`
	Users       int            `json:"users"`
	Concurrency int            `json:"concurrency"`
	Seconds     float64        `json:"seconds"`
	Build       *BuildReport   `json:"build,omitempty"`
	Dormant     *DormantReport `json:"dormant,omitempty"` // the dormant share (--dormant-share), if any
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
	Cost         *Cost         `json:"cost,omitempty"`
	Memory       *MemoryReport `json:"memory,omitempty"`
	Timeline     *Timeline     `json:"timeline,omitempty"`
	// Workload is --workload: "mixed" or "live"; Live has the live
	// workload's figures, Warm what --warm-readers did, if it was given.
	Workload string      `json:"workload,omitempty"`
	Live     *LiveReport `json:"live,omitempty"`
	Warm     *WarmReport `json:"warmReaders,omitempty"`
	// Realtime is what --subscribers found, if it was given.
	Realtime *RealtimeReport `json:"realtime,omitempty"`
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

// BuildReport is what building the network wrote and how long it took.
type BuildReport struct {
	Users          int     `json:"users"`
	Follows        int     `json:"follows"`
	Posts          int     `json:"posts"`
	Lives          int     `json:"lives"`
	GenerateSecond float64 `json:"generateSeconds"`
	ImportSeconds  float64 `json:"importSeconds"`
	FanoutSeconds  float64 `json:"fanoutSeconds"`
}

// DormantReport is the dormant share: Users of the network's users were
// dormant when the load began (put to sleep after the build, in
// SleepSeconds, or still so from an earlier run with --skip-build).
// Sessions left them alone but for returning readers, ReturnRatio of the
// sessions while any was left (followingFeed.return is such a reader's
// first page): Returned of them returned, Left were never picked (a return
// that the run's end cut short is in neither).
type DormantReport struct {
	Share        float64 `json:"share"`
	ReturnRatio  float64 `json:"returnRatio"`
	Users        int     `json:"users"`
	SleepSeconds float64 `json:"sleepSeconds,omitempty"`
	Returned     int     `json:"returned"`
	Left         int     `json:"left"`
}

// LiveReport is the live workload's (--workload live) figures: every
// operation was a first live page, liveFeed(first: PageSize) for a random
// viewer on a fresh device (so a new snapshot: the expensive first page),
// Pages of them (Errors failed), PerSecond a second, each costing feedd
// and Redis the CPU of the run's Cost over its pages (nil where not
// measured).
type LiveReport struct {
	PageSize       int      `json:"pageSize"`
	Pages          int      `json:"pages"`
	Errors         int      `json:"errors"`
	PerSecond      float64  `json:"pagesPerSecond"`
	FeeddMsPerPage *float64 `json:"feeddCpuMsPerPage"`
	RedisMsPerPage *float64 `json:"redisCpuMsPerPage"`
	LoadMsPerPage  *float64 `json:"loadCpuMsPerPage,omitempty"`
}

// WarmReport is what --warm-readers did before the load: Readers users
// (every active one) read their workload's first page once, in Seconds,
// with Read the operation; the fan-out their reads queued (the upgrades
// of readers reading for the first time) then drained in DrainSeconds,
// unless Drained is false (no --redis to watch the backlog on).
type WarmReport struct {
	Read         string  `json:"read"`
	Readers      int     `json:"readers"`
	Seconds      float64 `json:"seconds"`
	Drained      bool    `json:"drained"`
	DrainSeconds float64 `json:"drainSeconds,omitempty"`
}

// MemoryReport is Redis memory as the network uses it. KeyBytes is the sum
// of MEMORY USAGE over the prefix's keys (every Stride-th key, scaled up,
// on a large database); per user is KeyBytes over the user profiles, per
// inbox entry is the inboxes' bytes over their entries.
type MemoryReport struct {
	UsedMemory         int64   `json:"usedMemory"` // INFO memory used_memory, the whole server
	Keys               int64   `json:"keys"`
	Stride             int64   `json:"stride"`
	KeyBytes           int64   `json:"keyBytes"`
	Users              int64   `json:"users"`
	BytesPerUser       float64 `json:"bytesPerUser"`
	Inboxes            int64   `json:"inboxes"`
	InboxEntries       int64   `json:"inboxEntries"`
	InboxBytes         int64   `json:"inboxBytes"`
	BytesPerInboxEntry float64 `json:"bytesPerInboxEntry"`
	Error              string  `json:"error,omitempty"`
}

// Cost is what the run's operations cost in CPU: feedd's, from
// process_cpu_seconds_total on its /metrics, and Redis's, from INFO cpu
// summed over the masters, each read before and after the run (each
// phase, in a comparison) and divided by the operations. Redis's figure is
// the whole server's: feedd's fan-out workers and anything else using that
// Redis are in it. An Error says why a figure is missing.
type Cost struct {
	MetricsURL      string  `json:"metricsUrl,omitempty"`
	FeeddCPUSeconds float64 `json:"feeddCpuSeconds"`
	FeeddMsPerOp    float64 `json:"feeddCpuMsPerOp"`
	FeeddError      string  `json:"feeddError,omitempty"`
	RedisMasters    int     `json:"redisMasters,omitempty"`
	RedisCPUSeconds float64 `json:"redisCpuSeconds"`
	RedisMsPerOp    float64 `json:"redisCpuMsPerOp"`
	// RedisMainMsPerOp is the main thread's share (the thread that runs
	// commands), where Redis reports it.
	RedisMainMsPerOp *float64 `json:"redisMainThreadCpuMsPerOp,omitempty"`
	RedisError       string   `json:"redisError,omitempty"`
	// LoadMsPerOp is feedload's own CPU an operation (user and system,
	// all its goroutines: clients, probes, reports), which shares the
	// machine's cores with feedd and Redis when they run on one; nil
	// where not measured.
	LoadMsPerOp *float64 `json:"loadCpuMsPerOp,omitempty"`
	// InboxWrites are feedd's fan-out inbox writes over the run
	// (feedd_fanout_processed_total{kind="inbox_writes"} on its /metrics:
	// that process's own workers, follows' backfills and returning
	// readers' rebuilds included), Posts the posts published meanwhile
	// (publishPost and the lag probe's), InboxWritesPerPost their ratio
	// (nil without a post). InboxWritesError says why they are missing.
	InboxWrites        int64    `json:"inboxWrites"`
	Posts              int      `json:"posts"`
	InboxWritesPerPost *float64 `json:"inboxWritesPerPost,omitempty"`
	InboxWritesError   string   `json:"inboxWritesError,omitempty"`
	// Commands are INFO commandstats over the run, busiest first.
	Commands      []CommandReport `json:"redisCommands,omitempty"`
	CommandsError string          `json:"redisCommandsError,omitempty"`
}

// CommandReport is one Redis command over the run: calls, the time Redis
// spent in it, per operation of the workload and per call.
type CommandReport struct {
	Name        string  `json:"name"`
	Calls       int64   `json:"calls"`
	Usec        int64   `json:"usec"`
	CallsPerOp  float64 `json:"callsPerOp"`
	UsecPerCall float64 `json:"usecPerCall"`
	Share       float64 `json:"share"` // of the time of every command over the run
}

// TopCommands is how many of the busiest Redis commands the text and HTML
// reports show (the JSON has them all).
const TopCommands = 10

// Print writes the report as a table, or as JSON.
func (r *Report) Print(w io.Writer, asJSON bool) error {
	if asJSON {
		return printJSON(w, r)
	}
	if b := r.Build; b != nil {
		fmt.Fprintf(w, "network: %d users, %d follows, %d posts, %d live sessions; imported in %.1fs, fan-out drained %.1fs later\n",
			b.Users, b.Follows, b.Posts, b.Lives, b.ImportSeconds, b.FanoutSeconds)
	}
	fmt.Fprintf(w, "load: %d clients for %.1fs against %s (%d users): %.0f operations/s, %d reads to %d writes\n",
		r.Concurrency, r.Seconds, r.URL, r.Users, r.PerSecond, r.Reads, r.Writes)
	r.Dormant.print(w, r.Users)
	r.Warm.print(w)
	r.Live.print(w)
	r.Realtime.print(w)
	r.Cost.printCPU(w)
	r.Cost.printInboxWrites(w)
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
		fmt.Fprintf(w, "errors by code: %s\n", counts(r.Errors))
	}
	l := r.FanoutLag
	if l.Samples > 0 || l.Timeouts > 0 {
		fmt.Fprintf(w, "fan-out lag: %d samples from %s (%d followers): p50 %.1f ms, max %.1f ms; %d not visible within the lag timeout\n",
			l.Samples, l.Author, l.Followers, l.P50, l.Max, l.Timeouts)
	} else {
		fmt.Fprintln(w, "fan-out lag: no samples")
	}
	fmt.Fprintf(w, "fan-out backlog: %d at the start, %d at the end\n", r.BacklogStart, r.BacklogEnd)
	if err := r.Cost.printCommands(w); err != nil {
		return err
	}
	r.Memory.print(w)
	return nil
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// printCPU writes the CPU an operation cost feedd and Redis.
func (c *Cost) printCPU(w io.Writer) {
	if c == nil {
		return
	}
	feedd := fmt.Sprintf("feedd %.3f ms an operation (%.2f s of CPU, process_cpu_seconds_total from %s)",
		c.FeeddMsPerOp, c.FeeddCPUSeconds, c.MetricsURL)
	if c.FeeddError != "" {
		feedd = "feedd not measured: " + c.FeeddError
	}
	redis := fmt.Sprintf("Redis %.3f ms an operation (%.2f s of CPU, INFO cpu over %d master(s))",
		c.RedisMsPerOp, c.RedisCPUSeconds, c.RedisMasters)
	if c.RedisMainMsPerOp != nil {
		redis += fmt.Sprintf(", main thread %.3f ms", *c.RedisMainMsPerOp)
	}
	if c.RedisError != "" {
		redis = "Redis not measured: " + c.RedisError
	}
	load := ""
	if c.LoadMsPerOp != nil {
		load = fmt.Sprintf("; feedload itself %.3f ms", *c.LoadMsPerOp)
	}
	fmt.Fprintf(w, "CPU: %s; %s%s\n", feedd, redis, load)
}

// printInboxWrites writes the inbox writes a post cost feedd's fan-out.
func (c *Cost) printInboxWrites(w io.Writer) {
	switch {
	case c == nil:
	case c.InboxWritesError != "":
		fmt.Fprintf(w, "inbox writes: not measured: %s\n", c.InboxWritesError)
	case c.InboxWritesPerPost == nil:
		fmt.Fprintf(w, "inbox writes: %d, no post published\n", c.InboxWrites)
	default:
		fmt.Fprintf(w, "inbox writes: %.1f a post (%d for %d posts published; feedd_fanout_processed_total{kind=\"inbox_writes\"}: feedd's own workers)\n",
			*c.InboxWritesPerPost, c.InboxWrites, c.Posts)
	}
}

func (d *DormantReport) print(w io.Writer, users int) {
	if d == nil {
		return
	}
	fmt.Fprintf(w, "dormant: %d of %d users (share %.2f) at the start", d.Users, users, d.Share)
	if d.SleepSeconds > 0 {
		fmt.Fprintf(w, ", put to sleep in %.1fs", d.SleepSeconds)
	}
	fmt.Fprintf(w, "; %d returned (return ratio %.2f), %d still dormant\n", d.Returned, d.ReturnRatio, d.Left)
}

func (l *LiveReport) print(w io.Writer) {
	if l == nil {
		return
	}
	cpu := func(v *float64) string {
		if v == nil {
			return "not measured"
		}
		return fmt.Sprintf("%.3f ms", *v)
	}
	fmt.Fprintf(w, "first live pages: %.1f a second (%d pages, %d errors; liveFeed(first: %d), each for a random viewer on a fresh device); CPU a first live page: feedd %s, Redis %s, feedload itself %s\n",
		l.PerSecond, l.Pages, l.Errors, l.PageSize, cpu(l.FeeddMsPerPage), cpu(l.RedisMsPerPage), cpu(l.LoadMsPerPage))
}

func (m *WarmReport) print(w io.Writer) {
	if m == nil {
		return
	}
	fmt.Fprintf(w, "warm readers: %d users read once (%s) in %.1fs before the load", m.Readers, m.Read, m.Seconds)
	if m.Drained {
		fmt.Fprintf(w, ", their fan-out drained %.1fs later\n", m.DrainSeconds)
	} else {
		fmt.Fprintln(w, "; their fan-out not waited for (no --redis)")
	}
}

// printCommands writes the busiest Redis commands.
func (c *Cost) printCommands(w io.Writer) error {
	switch {
	case c == nil:
		return nil
	case c.CommandsError != "":
		fmt.Fprintf(w, "redis commands: not measured: %s\n", c.CommandsError)
		return nil
	case len(c.Commands) == 0:
		fmt.Fprintln(w, "redis commands: none")
		return nil
	}
	fmt.Fprintf(w, "redis commands by total time (INFO commandstats over the run, top %d of %d):\n", min(TopCommands, len(c.Commands)), len(c.Commands))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "command\tcalls\tcalls/op\tµs/call\ttotal ms\tshare\t")
	for _, m := range c.Top() {
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.1f\t%.1f\t%.1f%%\t\n", m.Name, m.Calls, m.CallsPerOp, m.UsecPerCall, float64(m.Usec)/1000, 100*m.Share)
	}
	return tw.Flush()
}

// Top is the TopCommands busiest commands.
func (c *Cost) Top() []CommandReport {
	if c == nil {
		return nil
	}
	return c.Commands[:min(TopCommands, len(c.Commands))]
}

func (m *MemoryReport) print(w io.Writer) {
	switch {
	case m == nil:
	case m.Error != "":
		fmt.Fprintf(w, "redis memory: not measured: %s\n", m.Error)
	default:
		fmt.Fprintf(w, "redis memory: used_memory %s; %d keys under the prefix, %s: %s a user (%d users); %d inboxes, %d entries: %.1f B an entry\n",
			size(m.UsedMemory), m.Keys, size(m.KeyBytes), size(int64(m.BytesPerUser)), m.Users, m.Inboxes, m.InboxEntries, m.BytesPerInboxEntry)
	}
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
