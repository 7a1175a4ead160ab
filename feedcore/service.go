// Package feedcore is feedd's domain: timelines and their order, cursors,
// the hybrid push/pull fan-out, the social graph and reader activity, all
// over Redis. It knows nothing of GraphQL.
package feedcore

import (
	"context"
	"crypto/rand"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"golang.org/x/sync/singleflight"
)

// Service reads and writes feeds. It is safe for concurrent use; many
// replicas may share one Redis.
type Service struct {
	c      rueidis.Client
	k      keys
	o      Options
	sealer *Sealer

	// touches and activations throttle a reader's activity writes and
	// upgrade requests to one per interval per process, not one per read.
	touches, activations *throttle

	// snapshots shares one live feed snapshot build among the concurrent
	// first pages of one viewer's device.
	snapshots singleflight.Group

	stats stats
	// bigV is the big-V threshold in force; operators may change it live.
	bigV atomic.Int64
	// afterChunk, when set by a test, runs after each fan-out chunk.
	afterChunk func()
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
	s := &Service{k: keys{p: opts.Prefix}, o: opts.withDefaults(),
		touches: newThrottle(touchEvery.Milliseconds()), activations: newThrottle(activateEvery.Milliseconds())}
	s.c = riding{Client: client, s: s}
	key := opts.CursorKey
	if len(key) == 0 {
		var err error
		if key, err = s.sharedCursorKey(ctx); err != nil {
			return nil, err
		}
	}
	sealer, err := NewSealer(key)
	if err != nil {
		return nil, err
	}
	s.sealer = sealer
	s.bigV.Store(int64(s.o.BigVThreshold))
	return s, nil
}

// Options returns the options in force, defaults filled in.
func (s *Service) Options() Options {
	o := s.o
	o.BigVThreshold = int(s.bigV.Load())
	return o
}

// Client is the Redis client the service uses.
func (s *Service) Client() rueidis.Client { return s.c }

// SetBigVThreshold changes the big-V threshold at run time (for operators
// and tests). Authors cross it on their next follow or publish.
func (s *Service) SetBigVThreshold(n int) { s.bigV.Store(int64(n)) }

func (s *Service) sharedCursorKey(ctx context.Context) ([]byte, error) {
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, err
	}
	// SET NX GET: the first replica's key wins and everyone reads it.
	set := s.c.B().Set().Key(s.k.cursorKey()).Value(string(fresh)).Nx().Build()
	if err := s.c.Do(ctx, set).Error(); err != nil && !rueidis.IsRedisNil(err) {
		return nil, err
	}
	got, err := s.c.Do(ctx, s.c.B().Get().Key(s.k.cursorKey()).Build()).ToString()
	if err != nil {
		return nil, err
	}
	return []byte(got), nil
}

func (s *Service) nowMS() int64 { return s.o.Now().UnixMilli() }

// first returns the first error among results, ignoring nil replies.
func firstErr(rs []rueidis.RedisResult) error {
	for _, r := range rs {
		if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
			return err
		}
	}
	return nil
}
