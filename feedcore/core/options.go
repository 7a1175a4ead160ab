package core

import (
	"cmp"
	"context"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/internal/hostmatch"
)

// Options tunes a Service. A field left zero (or, for a number or a
// duration, negative) takes the default its comment names.
type Options struct {
	// Prefix is prepended to every key, so tests and tenants can share a Redis.
	Prefix string
	// BigVThreshold: an author with more followers than this pushes new posts
	// only to its active followers; the others pull on read. Default 10000.
	BigVThreshold int
	// BigVThresholdFunc, when set, is asked for the threshold each time an
	// author is checked against it (a follow, a publish's fan-out, a
	// rebuild) instead of BigVThreshold, so whoever owns it can move the
	// threshold while the service runs (the model test does); authors cross
	// it on their next follow or publish. Big-V status is sticky.
	BigVThresholdFunc func() int
	// ActiveWindow: a reader seen within this long is active. Default 7 days.
	ActiveWindow time.Duration
	// DormantAfter: a reader not seen for this long is dormant: its
	// inboxes are dropped and no author pushes to it, until it reads again
	// (served by merge, then rebuilt). Default 720h; never less than
	// ActiveWindow.
	DormantAfter time.Duration
	// InboxCap is the most entries an inbox keeps. Default 800.
	InboxCap int
	// FollowLimit is the most accounts one user may follow. Default 2000.
	FollowLimit int
	// CursorKey seals cursors. Empty: a key is created once in Redis and
	// shared by every replica using the same store.
	CursorKey []byte
	// SnapshotTTL is how long a live feed snapshot lives: a paging session
	// idle longer gets CURSOR_EXPIRED. Default 30 minutes.
	SnapshotTTL time.Duration
	// SnapshotReuse: a first live feed page reuses its device's snapshot
	// when it was taken less than this long ago, rather than building a new
	// one. 0 (the default): every first page builds a snapshot, replacing
	// the device's previous one.
	SnapshotReuse time.Duration
	// PreviewGrace: a PREVIEW session whose scheduled start is further
	// past than this when a live feed snapshot is taken is stale, and the
	// snapshot files it after every timely preview (live/live_snapshot.go),
	// so an anchor who schedules and never shows does not sit first among
	// every follower's upcoming sessions. Default 1h.
	PreviewGrace time.Duration
	// MaxDevices is the most live feed snapshots one viewer holds, one per
	// device; a new device's first page drops the oldest. Default 5.
	MaxDevices int
	// MaxTextLen is the longest post text, in characters. Default 2000.
	MaxTextLen int
	// MediaHosts are the hosts https media and cover URLs may name
	// (--media-hosts): exact names or "*.example.com" (content.URLPolicy).
	// Empty: no media URL is accepted, unless DevMediaURLs.
	MediaHosts []string
	// DevMediaURLs accepts media and cover URLs on any https host, and
	// http ones on this machine (dev auth: the demo's own media).
	DevMediaURLs bool
	// StreamShards is how many shards the fan-out streams are split into
	// (at most 64), each on its own Redis Cluster slot. Default: 4 on a
	// Redis Cluster, 1 on a single Redis (one node has nothing to spread
	// them over, and each shard's blocked readers cost the embedded store a
	// wake-up per command). Change it only with the workers drained: a
	// user's events and idempotency records live on the shard its id maps
	// to.
	StreamShards int
	// WaitReplicas, when positive, makes every mutation's commit write wait
	// until that many replicas have it (Redis WAIT) before the mutation is
	// acknowledged: a master failover then cannot lose an acknowledged
	// mutation. Costs the replication delay on each mutation. Default 0.
	WaitReplicas int
	// WaitTimeout bounds that wait; past it the mutation answers
	// UNAVAILABLE (a retry is safe). Default 1s.
	WaitTimeout time.Duration
	// CleanupGrace is how long reads keep skipping an author hidden from
	// a viewer after the safety clean-up took its items out of the
	// viewer's inboxes: a fan-out task that read its targets before the
	// relation may still push one. Default 2 minutes.
	CleanupGrace time.Duration
	// HandleHold is how long a deleted account's handle stays taken before
	// anyone may take it again (safety_account.go). Default 720h (30 days).
	HandleHold time.Duration
	// MaxRelations is the most blocks, mutes and hides one user may have
	// together (--max-blocks). Default 10000.
	MaxRelations int
	// SettleFollow, when set, is handed each follow's settle (the
	// followers side, active sets and the backfill of the followee's
	// recent posts), which a follow from the API runs after it answers;
	// it may run it whenever it likes, or never (the journal's repair
	// then does, RepairAfter on). Nil: a goroutine of its own runs it at
	// once. Tests hold settles to make follows settle late. A settle's
	// error is the journal's to repair.
	SettleFollow func(settle func(context.Context) error)
	// Notices says how the notices realtime subscriptions live on travel
	// between replicas (notices.go): NoticesAuto (the default) by sharded
	// pub/sub when the server has it, in this process on the embedded
	// store; NoticesOff for a process that serves no subscriptions and
	// whose writes no subscriber awaits (import, export, rebuild).
	Notices NoticeMode
	// Now is the clock; tests move it to age readers. Default time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	SetDefault(&o.BigVThreshold, 10000)
	SetDefault(&o.ActiveWindow, 7*24*time.Hour)
	SetDefault(&o.DormantAfter, 720*time.Hour)
	o.DormantAfter = max(o.DormantAfter, o.ActiveWindow)
	SetDefault(&o.InboxCap, 800)
	SetDefault(&o.FollowLimit, 2000)
	SetDefault(&o.SnapshotTTL, 30*time.Minute)
	SetDefault(&o.PreviewGrace, time.Hour)
	SetDefault(&o.MaxDevices, 5)
	SetDefault(&o.MaxTextLen, 2000)
	SetDefault(&o.MaxRelations, 10000)
	SetDefault(&o.StreamShards, 1)
	o.StreamShards = min(o.StreamShards, MaxShards)
	SetDefault(&o.WaitTimeout, defaultWaitTimeout)
	SetDefault(&o.CleanupGrace, DefaultCleanupGrace)
	SetDefault(&o.HandleHold, 720*time.Hour)
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// BigVThresholdNow is the big-V threshold in force.
func (o Options) BigVThresholdNow() int64 {
	if o.BigVThresholdFunc != nil {
		return int64(o.BigVThresholdFunc())
	}
	return int64(o.BigVThreshold)
}

// urlPolicy is the service's policy for what users publish.
func urlPolicy(o Options) content.URLPolicy {
	return content.URLPolicy{Hosts: hostmatch.New(o.MediaHosts), AnyHost: o.DevMediaURLs}
}

// SetDefault fills in an option left unset: *v becomes def when it is
// its type's zero value or, for a number or a duration, negative. Every
// options struct of the package (Options, WorkerOptions, ExportSink's and
// RebuildOptions' batch sizes) fills its defaults so.
func SetDefault[T cmp.Ordered](v *T, def T) {
	var zero T
	if *v <= zero {
		*v = def
	}
}

// DefaultCleanupGrace is Options.CleanupGrace's default.
const DefaultCleanupGrace = 2 * time.Minute
