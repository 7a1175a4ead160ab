package main

import (
	"errors"
	"flag"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/internal/flagenv"
)

// storeFlags are the flags every command that opens the store shares: where
// Redis is and how the feed behaves. Replicas must agree on them.
type storeFlags struct {
	redisURL     string
	keyPrefix    string
	bigV         int
	activeWindow time.Duration
	dormantAfter time.Duration
	inboxCap     int
	followLimit  int
	maxBlocks    int
	snapshotTTL  time.Duration
	previewGrace time.Duration
	reuse        time.Duration
	devices      int
	cursorKey    string
	streamShards int
	waitReplicas int
	waitTimeout  time.Duration
	handleHold   time.Duration
	flushDelay   time.Duration
	pipelines    int
}

func addStoreFlags(fs *flag.FlagSet) *storeFlags {
	s := &storeFlags{}
	fs.StringVar(&s.redisURL, "redis", "", "Redis or Redis Cluster URL, redis://host:6379[/db]; more seed addresses as ?addr=host2:6379&addr=host3:6379, any one that answers will do; empty means an embedded in-memory store")
	fs.StringVar(&s.keyPrefix, "key-prefix", "", "prepended to every Redis key, so several deployments (or tests) share one Redis; no { or }")
	fs.IntVar(&s.bigV, "bigv-threshold", 10000, "followers above which an author is big-V: its posts are pushed only to active followers")
	fs.DurationVar(&s.activeWindow, "active-window", 168*time.Hour, "how long a reader stays active after a read")
	fs.DurationVar(&s.dormantAfter, "dormant-after", 720*time.Hour, "how long a reader may go unseen before it is dormant: its inboxes are dropped and no author pushes to it until it reads again (merged on read, then rebuilt); one under --active-window counts as --active-window")
	fs.IntVar(&s.inboxCap, "inbox-cap", 800, "inbox length kept per reader")
	fs.IntVar(&s.followLimit, "follow-limit", 2000, "most accounts one user may follow")
	fs.IntVar(&s.maxBlocks, "max-blocks", 10000, "most blocks, mutes and hides one user may have together (ended mutes do not count)")
	fs.DurationVar(&s.snapshotTTL, "snapshot-ttl", 30*time.Minute, "live feed snapshot lifetime")
	fs.DurationVar(&s.previewGrace, "preview-grace", time.Hour, "a live preview whose scheduled start is further past than this is stale: a new live feed snapshot lists it after every timely preview (before the replays), the longest overdue last")
	fs.DurationVar(&s.reuse, "live-snapshot-reuse", 3*time.Second, "a first live feed page within this long of the device's last one reuses its snapshot; 0: always a new one (replacing the device's)")
	fs.IntVar(&s.devices, "live-devices", 5, "most live feed snapshots one viewer holds, one per device (X-Device-Id); a new device drops the oldest")
	fs.IntVar(&s.streamShards, "stream-shards", 0, "fan-out stream shards (1 to 64), each on its own Redis Cluster slot; 0: 4 on a cluster, 1 on a single Redis; change only with the fan-out drained")
	fs.IntVar(&s.waitReplicas, "wait-replicas", 0, "replicas that must have each mutation's commit write before it is acknowledged (Redis WAIT); 0: Redis's asynchronous replication alone")
	fs.DurationVar(&s.waitTimeout, "wait-timeout", time.Second, "how long a mutation waits for --wait-replicas; past it the client gets UNAVAILABLE and may retry")
	fs.DurationVar(&s.handleHold, "handle-hold", 720*time.Hour, "how long a deleted account's handle stays taken before anyone may take it again")
	fs.DurationVar(&s.flushDelay, "redis-flush-delay", DefaultFlushDelay, "how long each Redis connection waits after a write for more commands to send with the next: fewer system calls for feedd and Redis under load, at most this much latency a round trip; 0: write at once")
	fs.IntVar(&s.pipelines, "redis-pipelines", 1, "connections to each Redis node that pipeline the requests' commands: 1, 2, 4 or 8; more lets several cores parse replies at once, but splits a request's multi-key reads over them")
	fs.StringVar(&s.cursorKey, "cursor-key", "", "cursor sealing key; empty: one is created in Redis once and shared by all replicas")
	return s
}

// DefaultFlushDelay is --redis-flush-delay's default: rueidis's own
// suggestion, small next to a page's round trips (docs/performance.md
// measures it).
const DefaultFlushDelay = 20 * time.Microsecond

func (s *storeFlags) embedded() bool { return s.redisURL == "" }

// options turns the flags into feedcore options.
func (s *storeFlags) options() feedcore.Options {
	o := feedcore.Options{
		Prefix:        s.keyPrefix,
		BigVThreshold: s.bigV,
		ActiveWindow:  s.activeWindow,
		DormantAfter:  s.dormantAfter,
		InboxCap:      s.inboxCap,
		FollowLimit:   s.followLimit,
		MaxRelations:  s.maxBlocks,
		StreamShards:  s.streamShards,
		WaitReplicas:  s.waitReplicas,
		WaitTimeout:   s.waitTimeout,
		HandleHold:    s.handleHold,
	}
	if s.cursorKey != "" {
		o.CursorKey = []byte(s.cursorKey)
	}
	o.SnapshotTTL = s.snapshotTTL
	o.SnapshotReuse = s.reuse
	o.PreviewGrace = s.previewGrace
	o.MaxDevices = s.devices
	return o
}

// parse reads environment defaults, then args, and returns the names of the
// flags set by either (see flagenv.Parse).
func parse(fs *flag.FlagSet, args []string) (map[string]bool, error) { return flagenv.Parse(fs, args) }

// validate checks numeric flags that must be positive, naming the
// flag rather than letting a zero silently mean "default" deeper down.
func (s *storeFlags) validate() error {
	return firstBroken(
		flagRule{s.bigV < 1, "--bigv-threshold must be at least 1"},
		flagRule{s.activeWindow <= 0, "--active-window must be positive"},
		flagRule{s.dormantAfter <= 0, "--dormant-after must be positive"},
		flagRule{s.inboxCap < 1, "--inbox-cap must be at least 1"},
		flagRule{s.followLimit < 1, "--follow-limit must be at least 1"},
		flagRule{s.maxBlocks < 1, "--max-blocks must be at least 1"},
		flagRule{s.snapshotTTL <= 0, "--snapshot-ttl must be positive"},
		flagRule{s.previewGrace <= 0, "--preview-grace must be positive"},
		flagRule{s.waitReplicas < 0, "--wait-replicas must not be negative"},
		flagRule{s.waitTimeout <= 0, "--wait-timeout must be positive"},
		flagRule{s.handleHold <= 0, "--handle-hold must be positive"},
		flagRule{s.streamShards < 0 || s.streamShards > 64, "--stream-shards must be between 1 and 64 (0: the default)"},
		flagRule{!slices.Contains([]int{1, 2, 4, 8}, s.pipelines), "--redis-pipelines must be 1, 2, 4 or 8"},
		// A brace in the prefix changes the hash tag of every key: all in
		// one cluster slot, or one user's keys split over several.
		flagRule{strings.ContainsAny(s.keyPrefix, "{}"), "--key-prefix must not contain { or }: keys carry their own {hash tags}"},
	)
}

// flagRule is one check of flag values: broken says they break it, msg
// names the flag and what it must be.
type flagRule struct {
	broken bool
	msg    string
}

// firstBroken returns the message of the first broken rule as an error,
// nil when none is.
func firstBroken(rules ...flagRule) error {
	for _, r := range rules {
		if r.broken {
			return errors.New(r.msg)
		}
	}
	return nil
}

// checkArgs refuses arguments beyond the files a command takes (0 or 1).
func checkArgs(fs *flag.FlagSet, files int) error {
	switch {
	case files == 1 && fs.NArg() != 1:
		return fmt.Errorf("%s takes one file", fs.Name())
	case files == 0 && fs.NArg() > 0:
		return fmt.Errorf("%s takes no arguments, got %q", fs.Name(), fs.Args())
	}
	return nil
}
