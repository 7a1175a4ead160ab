package feedcore

import (
	"context"
	"time"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// Persisted queries: texts that clients send once and then name by a hash
// (the server's automatic persisted queries). They are kept in Redis, so a
// text registered through one replica is found by all of them, and expire
// when not registered again for a while. This store knows nothing of
// GraphQL: the caller names each text (by its SHA-256) and checks what it
// reads back.

// PersistedQuery returns the text registered under hash, or "" when none
// is (never registered, or expired).
func (s *Service) PersistedQuery(ctx context.Context, hash string) (_ string, err error) {
	defer store.Wrap(&err, "read persisted query %s", hash)
	q, err := s.Redis.Do(ctx, s.Redis.B().Get().Key(s.Keys.PersistedQuery(hash)).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return "", nil
	}
	return q, err
}

// PersistQuery registers text under hash for ttl; registering it again
// starts its ttl over.
func (s *Service) PersistQuery(ctx context.Context, hash, text string, ttl time.Duration) (err error) {
	defer store.Wrap(&err, "register persisted query %s", hash)
	return s.Redis.Do(ctx, s.Redis.B().Set().Key(s.Keys.PersistedQuery(hash)).Value(text).Ex(ttl).Build()).Error()
}
