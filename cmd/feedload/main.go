// Command feedload builds a synthetic network in Redis and runs a mixed
// workload against a running feedd through the typed Go client (package
// client), then prints, per operation, throughput, latency percentiles and
// errors by code, the CPU an operation cost feedd and Redis, the inbox
// writes a post cost feedd's fan-out, Redis's busiest commands, the
// fan-out lag, and Redis memory per user and per inbox entry.
// --subscribers opens that many followingFeedUpdates subscriptions and
// reports feedd's memory per connection, the publish-to-notice latency and
// (--fanout-posts) the fan-out throughput without and with them open.
// --dormant-share makes a share of the users dormant, --return-ratio of
// the sessions then being a returning reader's; --workload live runs first
// live pages only (a fresh device each), --warm-readers has every user
// read once before the load; --compare drives two servers in alternation
// and sets their figures side by side, --html writes a page of charts. See docs/performance.md, "Load tool".
//
//	feedload --redis redis://127.0.0.1:6379 --key-prefix loadtest: --users 10000 \
//	    --url http://127.0.0.1:8080/query --concurrency 16 --duration 30s --html report.html
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/feedd/feedd/cmd/feedload/loadreport"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/importer/importgen"
	"github.com/feedd/feedd/internal/flagenv"
	"github.com/feedd/feedd/redisstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "feedload:", err)
		}
		os.Exit(1)
	}
}

// flags are feedload's settings.
type flags struct {
	redisURL, keyPrefix string
	bigVThreshold       int
	streamShards        int
	inboxCap            int
	skipBuild           bool
	importFile          string
	spec                importgen.Spec
	load                loadConfig
	jwtSecret           string
	json                bool
	noMemory            bool
	clean               bool
	opsURL              string
	html                string
	// The second server of a comparison, and how many phases it has.
	compareURL, compareKeyPrefix, compareOpsURL string
	phases                                      int
	cpuProfile                                  string
}

func parseFlags(args []string, stderr io.Writer) (*flags, error) {
	f := &flags{}
	fs := flag.NewFlagSet("feedload", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&f.redisURL, "redis", "", "Redis URL the network is imported into and memory is measured on (the one feedd serves from); empty: no build and no memory figures")
	fs.StringVar(&f.keyPrefix, "key-prefix", "", "key prefix of the network: feedd's --key-prefix; use your own, so the keys can be deleted by a prefix scan afterwards")
	fs.IntVar(&f.bigVThreshold, "bigv-threshold", 10000, "feedd's --bigv-threshold, used while importing")
	fs.IntVar(&f.inboxCap, "inbox-cap", 800, "feedd's --inbox-cap, used while importing")
	fs.IntVar(&f.streamShards, "stream-shards", 0, "feedd's --stream-shards, used while importing; 0: one")
	fs.BoolVar(&f.skipBuild, "skip-build", false, "reuse the network already under --key-prefix (built with the same --users, --seed and --dormant-share)")
	fs.StringVar(&f.importFile, "import-file", "", "keep the generated import file here (JSON Lines); empty: a temporary file, removed after the import")
	fs.IntVar(&f.spec.Users, "users", 10000, "users in the network, ids 1..N; with --skip-build, the network's")
	fs.IntVar(&f.spec.FollowsPerUser, "follows-per-user", 20, "mean accounts a user follows (heavy-tailed; followees Zipf-distributed)")
	fs.IntVar(&f.spec.BigV, "bigv", 10, "accounts that every user also follows with probability --bigv-followers")
	fs.Float64Var(&f.spec.BigVFollowers, "bigv-followers", 0.3, "probability that a user follows each --bigv account")
	fs.IntVar(&f.spec.Posts, "posts", 50000, "posts, spread over --days before now")
	fs.IntVar(&f.spec.Days, "days", 7, "days the posts span")
	fs.IntVar(&f.spec.Lives, "lives", 1000, "live sessions: live now, scheduled and replays")
	fs.Uint64Var(&f.spec.Seed, "seed", 1, "random seed of the network and the workload")
	fs.StringVar(&f.load.URL, "url", "http://127.0.0.1:8080/query", "feedd's GraphQL endpoint")
	fs.IntVar(&f.load.Concurrency, "concurrency", 16, "concurrent clients")
	fs.DurationVar(&f.load.Duration, "duration", 30*time.Second, "how long the workload runs")
	fs.IntVar(&f.load.Pages, "pages", 5, "deepest page a feed scroll reaches (following endCursor)")
	fs.IntVar(&f.load.PageSize, "page-size", 20, "items a page asks for (--workload live: 10 unless given)")
	fs.Float64Var(&f.load.WriteRatio, "write-ratio", 0.01, "writes (publish, like, follow, unfollow) per read; 0.01 is 100 reads to a write")
	fs.Float64Var(&f.load.DormantShare, "dormant-share", 0, "share of the users made dormant after the build (inboxes dropped, no pushes; a deterministic choice by --seed, which --skip-build assumes was made); sessions leave them alone but for returning readers")
	fs.Float64Var(&f.load.ReturnRatio, "return-ratio", 0.02, "with --dormant-share, sessions of a returning reader (a dormant user, once each): its first page is the operation followingFeed.return")
	fs.StringVar(&f.load.Workload, "workload", workloadMixed, "mixed: sessions of the following and live feeds with writes; live: first live pages only, liveFeed(first: --page-size, default 10 here) for a random viewer on a fresh device each (a new snapshot), no writes, no lag samples")
	fs.BoolVar(&f.load.WarmReaders, "warm-readers", false, "before the load, every active user reads the workload's first page once and the fan-out that queued (first reads' upgrades) is waited for, so the load measures readers that have read before")
	fs.IntVar(&f.load.LagSamples, "lag-samples", 5, "fan-out lag samples: publish, then poll a follower's first page until the post shows")
	fs.DurationVar(&f.load.LagTimeout, "lag-timeout", 30*time.Second, "longest wait for one fan-out lag sample")
	fs.StringVar(&f.jwtSecret, "jwt-secret", "", "HS256 secret of feedd's --jwt-secret: clients send bearer tokens minted with it; empty: the X-Viewer-Id header (feedd --dev-auth)")
	fs.BoolVar(&f.json, "json", false, "print the final report as JSON")
	fs.BoolVar(&f.clean, "clean", false, "delete every key under --key-prefix (SCAN and UNLINK, never FLUSHDB) and exit; stop feedd first")
	fs.BoolVar(&f.noMemory, "no-memory", false, "skip the Redis memory figures (a SCAN and MEMORY USAGE over the prefix)")
	fs.StringVar(&f.opsURL, "ops-url", "", "feedd's ops listener (feedd serve --ops-addr), e.g. http://127.0.0.1:9090, whose /metrics gives feedd's CPU (process_cpu_seconds_total); empty: /metrics beside --url")
	fs.StringVar(&f.html, "html", "", "also write the report as one self-contained HTML page of charts to this file")
	fs.DurationVar(&f.load.Interval, "interval", time.Second, "width of the time series' intervals (the HTML report's charts); CPU is read once an interval")
	fs.IntVar(&f.load.Realtime.Subscribers, "subscribers", 0, "before the load, open this many followingFeedUpdates subscriptions (graphql-transport-ws, a connection each, spread over the active users) and keep them open through it; report feedd's memory per connection (its /metrics before and after) and the publish-to-notice latency (--notice-posts); feedd's --max-connections and --max-subscriptions-per-viewer must allow them")
	fs.IntVar(&f.load.Realtime.OpenConcurrency, "subscribe-concurrency", 64, "with --subscribers, connections opened at a time")
	fs.IntVar(&f.load.Realtime.NoticePosts, "notice-posts", 20, "with --subscribers, posts published one at a time by authors the subscribers' viewers follow, timed from just before publishPost to each due update")
	fs.DurationVar(&f.load.Realtime.NoticeGap, "notice-gap", time.Second, "with --subscribers, the quiet (no update to any subscriber) before each --notice-posts post: feedd's --subscription-min-interval, so no update waits on the coalescing of an earlier one")
	fs.DurationVar(&f.load.Realtime.NoticeTimeout, "notice-timeout", 10*time.Second, "with --subscribers, the longest wait for a --notice-posts post's updates; those not in by then are missed")
	fs.IntVar(&f.load.Realtime.FanoutPosts, "fanout-posts", 0, "with --subscribers and --redis, the fan-out throughput without and with realtime: this many posts published (--concurrency at a time) and drained with no subscription open, then again with --subscribers open; 0: not measured")
	fs.StringVar(&f.compareURL, "compare", "", "a second feedd's GraphQL endpoint (B, --url being A): drive both in alternation with the same workload and print their figures side by side, with B/A")
	fs.StringVar(&f.compareKeyPrefix, "compare-key-prefix", "", "B's key prefix (B's --key-prefix) on the same --redis: its own network, built as A's with the same seed; needed with --compare and --redis")
	fs.StringVar(&f.compareOpsURL, "compare-ops-url", "", "B's ops listener, as --ops-url is A's")
	fs.StringVar(&f.cpuProfile, "cpu-profile", "", "write feedload's own CPU profile (pprof) to this file: what the load tool spends, on the cores it shares with feedd and Redis")
	fs.IntVar(&f.phases, "phases", 4, "with --compare, phases in all (even), in the order A B B A, repeated; each server gets --duration over its half of them")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: feedload [flags]   (flags also from FEED_* environment variables)")
		fs.PrintDefaults()
	}
	set, err := flagenv.Parse(fs, args)
	if err != nil {
		return nil, err
	}
	if fs.NArg() != 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	switch {
	case f.spec.Users < 2:
		return nil, errors.New("--users must be at least 2")
	case f.load.Concurrency < 1:
		return nil, errors.New("--concurrency must be at least 1")
	case f.load.Duration <= 0:
		return nil, errors.New("--duration must be positive")
	case f.load.Pages < 1 || f.load.PageSize < 1:
		return nil, errors.New("--pages and --page-size must be at least 1")
	case f.load.WriteRatio < 0 || f.load.WriteRatio > 1:
		return nil, errors.New("--write-ratio must be between 0 and 1")
	case f.load.DormantShare < 0 || f.load.DormantShare >= 1:
		return nil, errors.New("--dormant-share must be at least 0 and below 1")
	case f.load.ReturnRatio < 0 || f.load.ReturnRatio > 1:
		return nil, errors.New("--return-ratio must be between 0 and 1")
	case f.load.Workload != workloadMixed && f.load.Workload != workloadLive:
		return nil, fmt.Errorf("--workload must be %s or %s, not %q", workloadMixed, workloadLive, f.load.Workload)
	case f.load.Workload == workloadLive && f.load.DormantShare > 0:
		return nil, errors.New("--workload live takes no --dormant-share (its viewers are all active)")
	case f.load.Workload == workloadLive && (set["write-ratio"] || set["lag-samples"] || set["pages"]):
		return nil, errors.New("--workload live reads first live pages only: no --write-ratio, --lag-samples or --pages")
	case strings.ContainsAny(f.keyPrefix, "{}"):
		return nil, errors.New("--key-prefix must not contain { or }")
	case f.clean && (f.redisURL == "" || f.keyPrefix == ""):
		return nil, errors.New("--clean needs --redis and a --key-prefix")
	case f.redisURL == "" && !f.skipBuild:
		return nil, errors.New("building the network needs --redis (or --skip-build)")
	case f.load.Interval <= 0:
		return nil, errors.New("--interval must be positive")
	case f.compareURL != "" && (f.phases < 2 || f.phases%2 != 0):
		return nil, errors.New("--phases must be even and at least 2")
	case f.compareURL != "" && f.redisURL != "" && f.compareKeyPrefix == "":
		return nil, errors.New("--compare with --redis needs --compare-key-prefix: B's network, beside A's on the same Redis")
	case f.compareKeyPrefix != "" && (f.compareKeyPrefix == f.keyPrefix || strings.ContainsAny(f.compareKeyPrefix, "{}")):
		return nil, errors.New("--compare-key-prefix must differ from --key-prefix and not contain { or }")
	}
	if err := f.checkRealtime(set); err != nil {
		return nil, err
	}
	if f.load.Workload == workloadLive {
		// First pages only, of issue 28's size unless told.
		f.load.WriteRatio, f.load.LagSamples, f.load.Pages = 0, 0, 1
		if !set["page-size"] {
			f.load.PageSize = 10
		}
	}
	f.load.Users = f.spec.Users
	f.load.Seed = f.spec.Seed
	f.spec.End = time.Now()
	if f.jwtSecret != "" {
		f.load.Secret = []byte(f.jwtSecret)
	}
	return f, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if f.cpuProfile != "" {
		stop, err := startCPUProfile(f.cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	var st *redisstore.Store
	if f.redisURL != "" {
		if st, err = redisstore.Open(ctx, redisstore.Options{URL: f.redisURL, ClientName: "feedload"}); err != nil {
			return err
		}
		defer st.Close()
	}
	if f.clean {
		return clean(ctx, st, []string{f.keyPrefix, f.compareKeyPrefix}, stdout)
	}
	a, err := f.prepare(ctx, st, f.load.URL, f.keyPrefix, f.opsURL, stderr)
	if err != nil {
		return err
	}
	if f.compareURL == "" {
		if n := f.load.Realtime.Subscribers; n > 0 {
			// A descriptor a connection, and some for the rest.
			if err := raiseFileLimit(uint64(n + 4*f.load.Concurrency + 256)); err != nil {
				fmt.Fprintf(stderr, "feedload: %v\n", err)
			}
		}
		if err := runLoad(ctx, a.cfg, a.rep); err != nil {
			return err
		}
		a.measureMemory(ctx, f)
		return output(f, a.rep, stdout)
	}
	b, err := f.prepare(ctx, st, f.compareURL, f.compareKeyPrefix, f.compareOpsURL, stderr)
	if err != nil {
		return err
	}
	c, err := runCompare(ctx, [2]loadConfig{a.cfg, b.cfg}, [2]*loadreport.Report{a.rep, b.rep}, f.phases)
	if err != nil {
		return err
	}
	a.measureMemory(ctx, f)
	b.measureMemory(ctx, f)
	c.Figures = loadreport.Figures(c.A, c.B)
	return output(f, c, stdout)
}

// checkRealtime checks --subscribers and its companions, and derives the
// WebSocket URL from --url.
func (f *flags) checkRealtime(set map[string]bool) error {
	rt := &f.load.Realtime
	switch {
	case rt.Subscribers < 0:
		return errors.New("--subscribers must not be negative")
	case rt.Subscribers == 0 && (set["notice-posts"] || set["fanout-posts"] || set["notice-gap"] || set["notice-timeout"] || set["subscribe-concurrency"]):
		return errors.New("--notice-posts, --notice-gap, --notice-timeout, --fanout-posts and --subscribe-concurrency need --subscribers")
	case rt.Subscribers == 0:
		return nil
	case f.compareURL != "":
		return errors.New("--subscribers drives one server: not with --compare")
	case rt.OpenConcurrency < 1:
		return errors.New("--subscribe-concurrency must be at least 1")
	case rt.NoticePosts < 0 || rt.FanoutPosts < 0:
		return errors.New("--notice-posts and --fanout-posts must not be negative")
	case rt.NoticeGap < 0 || rt.NoticeTimeout <= 0:
		return errors.New("--notice-gap must not be negative and --notice-timeout must be positive")
	case rt.FanoutPosts > 0 && f.redisURL == "":
		return errors.New("--fanout-posts needs --redis, where the fan-out's backlog is read")
	}
	var err error
	if rt.WSURL, err = wsURL(f.load.URL); err != nil {
		return fmt.Errorf("--url: %w", err)
	}
	return nil
}

// clean deletes every key under each prefix given.
func clean(ctx context.Context, st *redisstore.Store, prefixes []string, stdout io.Writer) error {
	for _, p := range prefixes {
		if p == "" {
			continue
		}
		n, err := redisstore.DeletePrefix(ctx, st.Client, p)
		fmt.Fprintf(stdout, "deleted %d keys under %q\n", n, p)
		if err != nil {
			return err
		}
	}
	return nil
}

// loadTarget is one server to drive: its workload, where its network is,
// and its report so far.
type loadTarget struct {
	cfg    loadConfig
	svc    *feedcore.Service // nil without --redis
	prefix string
	rep    *loadreport.Report
}

// prepare readies the server at url: its network under prefix (built
// unless --skip-build), and where its CPU is read.
func (f *flags) prepare(ctx context.Context, st *redisstore.Store, url, prefix, opsURL string, stderr io.Writer) (*loadTarget, error) {
	t := &loadTarget{cfg: f.load, prefix: prefix, rep: &loadreport.Report{}}
	t.cfg.URL, t.cfg.Progress = url, stderr
	if f.redisURL != "" {
		t.rep.KeyPrefix = prefix
	}
	var err error
	if t.cfg.MetricsURL, err = metricsURL(url, opsURL); err != nil {
		return nil, err
	}
	t.cfg.Dormant = dormantUsers(f.spec.Seed, f.spec.Users, f.load.DormantShare)
	if f.load.DormantShare > 0 {
		t.rep.Dormant = &loadreport.DormantReport{}
	}
	if st == nil {
		return t, nil
	}
	t.cfg.Redis = st.Client
	t.svc, err = feedcore.New(ctx, st.Client, feedcore.Options{Prefix: prefix,
		BigVThreshold: f.bigVThreshold, InboxCap: f.inboxCap, StreamShards: f.streamShards})
	if err != nil {
		return nil, fmt.Errorf("open the feed service: %w", err)
	}
	t.cfg.Backlog = t.svc.Backlog
	t.cfg.Drain = t.svc.Drain
	if !f.skipBuild {
		if t.rep.Build, err = build(ctx, t.svc, f.spec, f.importFile, stderr); err != nil {
			return nil, err
		}
	}
	switch {
	case len(t.cfg.Dormant) == 0:
	case !f.skipBuild:
		took, err := sleepUsers(ctx, t.svc, t.cfg.Dormant, stderr)
		if err != nil {
			return nil, err
		}
		t.rep.Dormant.SleepSeconds = took.Seconds()
	default:
		// The network was built with this share and seed; those who
		// returned in an earlier run (and were upgraded) are awake.
		chosen := len(t.cfg.Dormant)
		if t.cfg.Dormant, err = stillDormant(ctx, t.svc, t.cfg.Dormant); err != nil {
			return nil, err
		}
		fmt.Fprintf(stderr, "feedload: %d of the dormant share's %d users are dormant\n", len(t.cfg.Dormant), chosen)
	}
	return t, nil
}

func (t *loadTarget) measureMemory(ctx context.Context, f *flags) {
	if t.svc != nil && !f.noMemory {
		t.rep.Memory = measureMemory(ctx, t.svc.Client(), t.prefix)
	}
}

// result is a report or a comparison.
type result interface {
	Print(w io.Writer, asJSON bool) error
	WriteHTML(w io.Writer) error
}

// output prints r, and writes it as HTML with --html.
func output(f *flags, r result, stdout io.Writer) error {
	if f.html != "" {
		out, err := os.Create(f.html)
		if err != nil {
			return fmt.Errorf("--html: %w", err)
		}
		err = r.WriteHTML(out)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("--html %s: %w", f.html, err)
		}
	}
	return r.Print(stdout, f.json)
}

// startCPUProfile profiles feedload's CPU into the file at path until
// the returned stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	out, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	if err := pprof.StartCPUProfile(out); err != nil {
		out.Close()
		return nil, fmt.Errorf("--cpu-profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		out.Close()
	}, nil
}
