// Command feedload builds a synthetic network in Redis and runs a mixed
// workload against a running feedd through the typed Go client (package
// client), then prints, per operation, throughput, latency percentiles and
// errors by code, the fan-out lag, and Redis memory per user and per inbox
// entry. See the README's "Load tool" section.
//
//	feedload --redis redis://127.0.0.1:6379 --key-prefix loadtest: --users 10000 \
//	    --url http://127.0.0.1:8080/query --concurrency 16 --duration 30s
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

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
	fs.BoolVar(&f.skipBuild, "skip-build", false, "reuse the network already under --key-prefix (built with the same --users)")
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
	fs.IntVar(&f.load.PageSize, "page-size", 20, "items a page asks for")
	fs.Float64Var(&f.load.WriteRatio, "write-ratio", 0.01, "writes (publish, like, follow, unfollow) per read; 0.01 is 100 reads to a write")
	fs.IntVar(&f.load.LagSamples, "lag-samples", 5, "fan-out lag samples: publish, then poll a follower's first page until the post shows")
	fs.DurationVar(&f.load.LagTimeout, "lag-timeout", 30*time.Second, "longest wait for one fan-out lag sample")
	fs.StringVar(&f.jwtSecret, "jwt-secret", "", "HS256 secret of feedd's --jwt-secret: clients send bearer tokens minted with it; empty: the X-Viewer-Id header (feedd --dev-auth)")
	fs.BoolVar(&f.json, "json", false, "print the final report as JSON")
	fs.BoolVar(&f.clean, "clean", false, "delete every key under --key-prefix (SCAN and UNLINK, never FLUSHDB) and exit; stop feedd first")
	fs.BoolVar(&f.noMemory, "no-memory", false, "skip the Redis memory figures (a SCAN and MEMORY USAGE over the prefix)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: feedload [flags]   (flags also from FEED_* environment variables)")
		fs.PrintDefaults()
	}
	if _, err := flagenv.Parse(fs, args); err != nil {
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
	case strings.ContainsAny(f.keyPrefix, "{}"):
		return nil, errors.New("--key-prefix must not contain { or }")
	case f.clean && (f.redisURL == "" || f.keyPrefix == ""):
		return nil, errors.New("--clean needs --redis and a --key-prefix")
	case f.redisURL == "" && !f.skipBuild:
		return nil, errors.New("building the network needs --redis (or --skip-build)")
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
	if f.clean {
		st, err := redisstore.Open(ctx, redisstore.Options{URL: f.redisURL, ClientName: "feedload"})
		if err != nil {
			return err
		}
		defer st.Close()
		n, err := redisstore.DeletePrefix(ctx, st.Client, f.keyPrefix)
		fmt.Fprintf(stdout, "deleted %d keys under %q\n", n, f.keyPrefix)
		return err
	}
	rep := &Report{}
	var svc *feedcore.Service
	if f.redisURL != "" {
		st, err := redisstore.Open(ctx, redisstore.Options{URL: f.redisURL, ClientName: "feedload"})
		if err != nil {
			return err
		}
		defer st.Close()
		svc, err = feedcore.New(ctx, st.Client, feedcore.Options{Prefix: f.keyPrefix,
			BigVThreshold: f.bigVThreshold, InboxCap: f.inboxCap, StreamShards: f.streamShards})
		if err != nil {
			return fmt.Errorf("open the feed service: %w", err)
		}
	}
	if !f.skipBuild {
		if rep.Build, err = build(ctx, svc, f.spec, f.importFile, stderr); err != nil {
			return err
		}
	}
	f.load.Progress = stderr
	if svc != nil {
		f.load.Backlog = svc.Backlog
	}
	if err := runLoad(ctx, f.load, rep); err != nil {
		return err
	}
	if svc != nil && !f.noMemory {
		rep.Memory = measureMemory(ctx, svc.Client(), f.keyPrefix)
	}
	return rep.Print(stdout, f.json)
}
