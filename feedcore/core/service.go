package core

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/keyword"
	"github.com/feedd/feedd/feedcore/ratelimit"
	"github.com/feedd/feedd/feedcore/store"
	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
	"golang.org/x/sync/singleflight"
)

// Service reads and writes feeds. It is safe for concurrent use; many
// replicas may share one Redis.
type Service struct {
	*store.Store
	*ratelimit.Limiter
	Opts Options
	// Sealer seals cursors; without a configured key it follows the key
	// shared in Redis (read_cursorkey.go).
	Sealer                atomic.Pointer[cursor.Sealer]
	keyReadAt, keyRetryAt atomic.Int64 // unix ms

	// Touches and activations throttle a reader's activity writes and
	// upgrade requests to one per interval per process, not one per read.
	Touches, Activations *throttle

	// Snapshots shares one live feed snapshot build among the concurrent
	// first pages of one viewer's device.
	Snapshots singleflight.Group

	// Known remembers users seen to exist (UsersExist).
	Known knownSet
	// Readers remembers, of each viewer this process served a page of its
	// following feed, what the next page's first read may rely on
	// (ReaderNote).
	Readers Memo[ReaderNote]
	// Pulled remembers, of each viewer this process served a page of its
	// following feed, the outboxes that page merged besides the inbox
	// (big-V followees of an incomplete inbox, follows yet to settle):
	// the next page seeks them with its view (timeline.loadView).
	Pulled *lru.Cache[store.ID, []store.ID]
	// PulledBelow remembers, of each viewer whose page this process read
	// below the inbox's horizon, what that page pulled (Pull): the next
	// page that starts there (a StatePull cursor) seeks those outboxes
	// with its view (timeline.loadView), so that paging on below the
	// horizon costs no round trip more than above it. Lists longer than
	// MaxPulledBelow are not kept; PulledBelowViewers bounds the viewers
	// kept.
	PulledBelow *lru.Cache[store.ID, Pull]
	// Media is what media and cover URLs may point at (urlPolicy).
	Media content.URLPolicy
	// Keywords keeps viewers' keyword filters as this process compiled
	// them, with their version (safety_keyword.go).
	Keywords *lru.Cache[store.ID, *keyword.Set]

	Counters counters
	// Locks takes readers' upgrade and demotion locks (withLock).
	Locks rueidislock.Locker

	// repairs completes journal entries, by kind (OnRepair).
	repairs map[string]RepairFunc
	// notifier is told of changes, for realtime (SetNotifier); nil: none.
	notifier Notifier
}

// TouchEvery bounds how stale this process lets a reader's last-seen get;
// activateEvery spaces a returning reader's upgrade requests.
const (
	TouchEvery    = time.Minute
	activateEvery = 30 * time.Second
)

// defaultClusterShards is StreamShards's default on a Redis Cluster.
const defaultClusterShards = 4

// New returns the state every feature shares, over client; the layers
// built on it (feedcore.New stacks them) register their journal kinds.
func New(ctx context.Context, client rueidis.Client, opts Options) (*Service, error) {
	if opts.StreamShards <= 0 && client.Mode() == rueidis.ClientModeCluster {
		opts.StreamShards = defaultClusterShards
	}
	s := &Service{Store: &store.Store{Keys: store.Keys{Prefix: opts.Prefix}}, Opts: opts.withDefaults(),
		Touches: newThrottle(TouchEvery.Milliseconds()), Activations: newThrottle(activateEvery.Milliseconds()),
		repairs: map[string]RepairFunc{}}
	s.Media = urlPolicy(s.Opts)
	s.Redis = ratelimit.ChargedClient{Client: client}
	s.Limiter = &ratelimit.Limiter{Store: s.Store, Now: s.Opts.Now, Shard: s.ShardOf}
	var err error
	if s.Keywords, err = lru.New[store.ID, *keyword.Set](keywordSets); err != nil {
		return nil, fmt.Errorf("make the keyword filter cache: %w", err)
	}
	if s.Pulled, err = lru.New[store.ID, []store.ID](maxKnownUsers); err != nil {
		return nil, fmt.Errorf("make the pulled outboxes' cache: %w", err)
	}
	if s.PulledBelow, err = lru.New[store.ID, Pull](PulledBelowViewers); err != nil {
		return nil, fmt.Errorf("make the cache of outboxes pulled below the horizon: %w", err)
	}
	if s.Locks, err = newLocker(client, s.Keys); err != nil {
		return nil, fmt.Errorf("make the reader locker: %w", err)
	}
	key := opts.CursorKey
	if !s.fixedKey() {
		if key, err = s.sharedCursorKey(ctx, nil); err != nil {
			return nil, fmt.Errorf("read the shared cursor key: %w", err)
		}
		s.keyReadAt.Store(time.Now().UnixMilli())
	}
	sealer, err := cursor.NewSealer(key)
	if err != nil {
		return nil, err
	}
	s.Sealer.Store(sealer)
	return s, nil
}

// Options returns the options in force, defaults filled in;
// BigVThreshold is the threshold in force now (see BigVThresholdFunc).
func (s *Service) Options() Options {
	o := s.Opts
	o.BigVThreshold = int(o.BigVThresholdNow())
	return o
}

// Client is the Redis client the service uses.
func (s *Service) Client() rueidis.Client { return s.Redis }

func (s *Service) NowMS() int64 { return s.Opts.Now().UnixMilli() }

// newLocker makes the locker of readers' upgrade and demotion locks:
// rueidislock over the service's own client. It is never closed (Close
// would close that client). The client delivers it no client-side
// caching invalidations, so it runs without them (DisableCache), which
// costs nothing here: a reader's lock is only ever tried (withLock), never
// waited for, and a holder extends it on a timer. One key per lock
// (KeyMajority 1): the keys of a majority would all sit in the reader's
// slot, on one node, and add nothing but round trips.
func newLocker(client rueidis.Client, k store.Keys) (rueidislock.Locker, error) {
	return rueidislock.NewLocker(rueidislock.LockerOption{
		ClientOption:  rueidis.ClientOption{DisableCache: true},
		ClientBuilder: func(rueidis.ClientOption) (rueidis.Client, error) { return client, nil },
		KeyPrefix:     k.LockPrefix(),
		KeyMajority:   1,
		KeyValidity:   lockTTL,
		TryNextAfter:  lockWait,
	})
}

// knownSet is the ids of users this process has seen exist, at most
// maxKnownUsers of them (see Memo). Safe for concurrent use.
type knownSet struct{ Memo[struct{}] }

func (k *knownSet) Has(id store.ID) bool {
	_, ok := k.Get(id)
	return ok
}

func (k *knownSet) Add(id store.ID) { k.Put(id, struct{}{}) }

// ReaderNote is what a viewer's last following-feed page on this process
// found.
type ReaderNote struct {
	// Deep: a page toward older posts read past a short first batch
	// (timeline.firstBatch): reposts to decide, or many items left out;
	// set until such a page says otherwise.
	Deep bool
	// Complete: its inbox was complete, so it merged no big-V followee's
	// outbox, and the next page's view does not read them while the
	// note is Fresh.
	Complete bool
	// At is when the page was read, in ms, truncated to the minute so
	// that a viewer's note is written again at most once a minute.
	At int64
}

// NoteAt is the At of a note left at ms.
func NoteAt(ms int64) int64 { return ms - ms%time.Minute.Milliseconds() }

// Fresh reports whether the inbox the note saw complete is surely
// complete still at ms: only a demotion makes it incomplete (dormancy
// comes later), and a reader is demoted once its last-seen, which this
// process wrote at most TouchEvery before the note, is activeWindow old.
// A note older than that costs its page the big-V followees' read with
// the view, as a reader back after a week's absence needs, and not a
// round trip after it.
func (n ReaderNote) Fresh(ms int64, activeWindow time.Duration) bool {
	return ms-n.At < (activeWindow - TouchEvery).Milliseconds()
}

// Memo is what this process remembers of up to maxKnownUsers ids: when
// full it starts over, so a forgotten id costs what its first use cost.
// Safe for concurrent use.
type Memo[V comparable] struct {
	mu sync.RWMutex
	m  map[store.ID]V
}

// Get is what is remembered of id, and whether anything is.
func (k *Memo[V]) Get(id store.ID) (V, bool) {
	k.mu.RLock()
	defer k.mu.RUnlock()
	v, ok := k.m[id]
	return v, ok
}

// Put remembers v of id.
func (k *Memo[V]) Put(id store.ID, v V) {
	if old, ok := k.Get(id); ok && old == v {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.m == nil || len(k.m) >= maxKnownUsers {
		k.m = make(map[store.ID]V)
	}
	k.m[id] = v
}

// keywordSets is how many viewers' compiled filters a process keeps
// (viewers without filters take no room): at most about 50 KB each (100
// filters of 4 × MaxKeywordLen bytes), a few hundred bytes for a typical
// viewer.
const keywordSets = 4096

// lockTTL bounds how long a crashed worker can hold a reader's lock; a
// live holder extends it every half of it. lockWait bounds how long taking
// a lock may wait for Redis's answer.
const (
	lockTTL  = 30 * time.Second
	lockWait = 5 * time.Second
)

// Pull is what a page below its viewer's inbox's horizon pulled: the
// horizon, and the authors whose outboxes it pulled below it (the
// viewer's own and its visible followees').
type Pull struct {
	Horizon store.Item
	Authors []store.ID
}

// From is where a page from pos seeks the outboxes p names: pos itself
// when it lies at or below p's horizon; else p's horizon, below which
// the page pulls. The horizon only rises within a generation of the
// inbox, so a page at or below the old one is below the new one too;
// should it have risen since, a seek from the old horizon leaves out
// what lies between, and the page seeks those outboxes again (see
// timeline's outSeek.serves).
func (p Pull) From(pos *store.Item) *store.Item {
	if pos == nil || pos.Before(p.Horizon) {
		return &p.Horizon
	}
	return pos
}

// PulledBelowViewers and MaxPulledBelow bound Service.PulledBelow: at
// most 4,096 lists of 1,024 IDs, 32 MiB; a list is as long as its
// viewer's following set, a few hundred IDs for most, and only readers
// who page below their inbox's horizon have one.
const (
	PulledBelowViewers = 4096
	MaxPulledBelow     = 1024
)

// maxKnownUsers bounds a Memo: about 40 bytes each.
const maxKnownUsers = 1 << 16
