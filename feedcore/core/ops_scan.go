package core

import (
	"context"
	"strings"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore"
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
