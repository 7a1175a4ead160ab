package core

import (
	"context"
	"strings"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore"
	"github.com/redis/rueidis"
)

// ScanIDs calls fn with the ids of every key keyOf names (a per-id key
// method of keys, such as s.Keys.user), a SCAN batch at a time, from every
// master: Export and Rebuild walk the records so. The pattern comes from
// the key method (tagHead), so a key's name is spelled once, in keys.go.
// SCAN visits the whole keyspace (other prefixes' keys too); MATCH filters.
func (s *Service) ScanIDs(ctx context.Context, keyOf func(store.ID) string, fn func(ids []store.ID) error) error {
	head := store.TagHead(keyOf)
	return redisstore.ScanKeys(ctx, s.Redis, redisstore.GlobEscape(head)+"*}", func(keys []string) error {
		ids := make([]store.ID, 0, len(keys))
		for _, k := range keys {
			if id, err := store.ParseID(strings.TrimSuffix(strings.TrimPrefix(k, head), "}")); err == nil {
				ids = append(ids, id)
			}
		}
		return fn(ids)
	})
}

// AllOf reads whole sorted sets (members only) in one round trip.
func (s *Service) AllOf(ctx context.Context, keyOf func(store.ID) string, ids []store.ID) ([][]string, error) {
	all := func(id store.ID) rueidis.Completed {
		return s.Redis.B().Zrange().Key(keyOf(id)).Min("0").Max("-1").Build()
	}
	return store.ParseEach(s.DoMulti(ctx, store.CmdsFor(ids, all)...), rueidis.RedisResult.AsStrSlice)
}

// ZremWhere builds the ZREM of the members ms of key where stale is true,
// and says how many it removes (0: none, and no command).
func (s *Service) ZremWhere(key string, ms []string, stale []bool) (cmd rueidis.Completed, n int) {
	var out []string
	for i, m := range ms {
		if stale[i] {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return cmd, 0
	}
	return s.Redis.B().Zrem().Key(key).Member(out...).Build(), len(out)
}
