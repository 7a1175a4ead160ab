package timeline

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/roundtrip"
	"github.com/redis/rueidis"
)

// Cached reads name the fields they read (HMGET) rather than reading
// whole hashes (HGETALL): the reply is a list in a known order, read
// without building a map per post or profile.

// cachedPostFields are the fields of a post hash (see postCreate and the
// tombstone) that CachedPosts reads, in this order (postFields): the
// media and content warning come with the rest, so they cost a page no
// read of their own and sit in the client-side cache with the post; the
// suspension mark (safety_moderation.go); what a reply answers and what a
// repost's record reposts, with their authors, so deciding who sees them
// reads no other hash (read_items.go).
var cachedPostFields = []string{"a", "t", "x", "d", "m", "cw", FieldSuspended, "r", "ra", "o", "oa"}

// cachedPostCmds are the cacheable reads of posts ids.
func (s *Service) cachedPostCmds(ids []store.ID) []rueidis.CacheableTTL {
	return store.CmdsFor(ids, func(id store.ID) rueidis.CacheableTTL {
		return rueidis.CT(s.Redis.B().Hmget().Key(s.Keys.Post(id)).Field(cachedPostFields...).Cache().ToStaticTTL(), postTTL)
	})
}

// CachedPosts is Posts read through the client-side cache: no round trip
// when every post is cached. A deleted post comes back with Deleted set.
func (s *Service) CachedPosts(ctx context.Context, ids []store.ID) (_ []*content.Post, err error) {
	ps, _, err := s.cachedPosts(ctx, ids)
	return ps, err
}

// cachedPosts is CachedPosts, and whether any post was not cached: read
// from Redis.
func (s *Service) cachedPosts(ctx context.Context, ids []store.ID) (_ []*content.Post, missed bool, err error) {
	defer store.Wrap(&err, "read posts")
	if len(ids) == 0 {
		return nil, false, nil
	}
	out := make([]*content.Post, len(ids))
	for i, r := range s.Redis.DoMultiCache(ctx, s.cachedPostCmds(ids)...) {
		p, err := cachedPost(ids[i], r)
		if err != nil {
			return nil, false, err
		}
		out[i], missed = p, missed || !r.IsCacheHit()
	}
	return out, missed, nil
}

// cachedPost reads the reply of a cachedPostCmds read of post id: nil
// when the hash does not exist.
func cachedPost(id store.ID, r rueidis.RedisResult) (*content.Post, error) {
	var f PostFields
	found, err := HashFields(r, f[:])
	if err != nil || !found {
		return nil, err
	}
	return PostFromFields(id, f)
}

// HashFields reads the reply of an HMGET of len(out) fields into out (""
// where a field is unset) and reports whether any was set: whether the
// hash exists.
func HashFields(r rueidis.RedisResult, out []string) (found bool, err error) {
	vs, err := r.ToArray()
	if err != nil {
		return false, err
	}
	if len(vs) != len(out) {
		return false, apierr.Errorf(apierr.Internal, "read %d fields of a hash, asked for %d", len(vs), len(out))
	}
	for i, v := range vs {
		out[i] = ""
		if !v.IsNil() {
			out[i], _ = v.ToString()
			found = true
		}
	}
	return found, nil
}

// cachedPostsWith is CachedPosts sending writes (which may be empty) to
// Redis at the same time; the two overlap, so together they cost the one
// round trip of the slower. It returns the first error of either, and
// whether any post was read from Redis.
func (s *Service) cachedPostsWith(ctx context.Context, writes []rueidis.Completed, ids []store.ID) ([]*content.Post, bool, error) {
	if len(writes) == 0 {
		return s.cachedPosts(ctx, ids)
	}
	var ps []*content.Post
	var missed bool
	err := roundtrip.Parallel(ctx,
		func(ctx context.Context) (err error) { ps, missed, err = s.cachedPosts(ctx, ids); return err },
		func(ctx context.Context) error { return store.FirstErr(s.DoMulti(ctx, writes...)) })
	if err != nil {
		return nil, false, err
	}
	return ps, missed, nil
}
