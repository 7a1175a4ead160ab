package feedcore

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/keyword"
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
	o Options
	// sealer seals cursors; without a configured key it follows the key
	// shared in Redis (read_cursorkey.go).
	sealer                atomic.Pointer[cursor.Sealer]
	keyReadAt, keyRetryAt atomic.Int64 // unix ms

	// touches and activations throttle a reader's activity writes and
	// upgrade requests to one per interval per process, not one per read.
	touches, activations *throttle

	// snapshots shares one live feed snapshot build among the concurrent
	// first pages of one viewer's device.
	snapshots singleflight.Group

	// known remembers users seen to exist (usersExist).
	known knownSet

	// media is what media and cover URLs may point at (urlPolicy).
	media content.URLPolicy
	// keywords keeps viewers' keyword filters as this process compiled
	// them, with their version (safety_keyword.go).
	keywords *lru.Cache[store.ID, *keyword.Set]

	stats stats
	// locks takes readers' upgrade and demotion locks (withLock).
	locks rueidislock.Locker
}

// touchEvery bounds how stale this process lets a reader's last-seen get;
// activateEvery spaces a returning reader's upgrade requests.
const (
	touchEvery    = time.Minute
	activateEvery = 30 * time.Second
)

// defaultClusterShards is StreamShards's default on a Redis Cluster.
const defaultClusterShards = 4

// New returns a Service over client. When opts.CursorKey is empty the
// sealing key is read from Redis, created there by the first replica.
func New(ctx context.Context, client rueidis.Client, opts Options) (*Service, error) {
	if opts.StreamShards <= 0 && client.Mode() == rueidis.ClientModeCluster {
		opts.StreamShards = defaultClusterShards
	}
	s := &Service{Store: &store.Store{Keys: store.Keys{Prefix: opts.Prefix}}, o: opts.withDefaults(),
		touches: newThrottle(touchEvery.Milliseconds()), activations: newThrottle(activateEvery.Milliseconds())}
	s.media = urlPolicy(s.o)
	s.Redis = riding{Client: client, s: s}
	var err error
	if s.keywords, err = lru.New[store.ID, *keyword.Set](keywordSets); err != nil {
		return nil, fmt.Errorf("make the keyword filter cache: %w", err)
	}
	if s.locks, err = newLocker(client, s.Keys); err != nil {
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
	s.sealer.Store(sealer)
	return s, nil
}

// Options returns the options in force, defaults filled in;
// BigVThreshold is the threshold in force now (see BigVThresholdFunc).
func (s *Service) Options() Options {
	o := s.o
	o.BigVThreshold = int(o.bigVThreshold())
	return o
}

// Client is the Redis client the service uses.
func (s *Service) Client() rueidis.Client { return s.Redis }

func (s *Service) nowMS() int64 { return s.o.Now().UnixMilli() }
