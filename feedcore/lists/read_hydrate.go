package lists

import (
	"context"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/roundtrip"
)

// Hydration: what a page shows besides its items (authors, counters, the
// viewer's flags) is read in one round trip, and the content that does not
// change (posts, profiles) through rueidis's server-assisted client-side
// cache: a second read on this replica costs no round trip, and any write
// to a cached key makes Redis invalidate every replica's copy at once.
// Counters and the viewer's flags are never cached.
//
// Posts change only when deleted (HSET d=1) or when their author is
// suspended or unsuspended (sx), which invalidates them, so
// every post read by a feed goes through the cache; the hottest, big-V
// posts, are the ones that stay in it. The keys carry no Redis TTL, so
// the entries use a static TTL: rueidis skips its per-read PTTL check and
// a miss costs exactly the plain read.

// HydrateRequest names what a page needs read besides its items. Every
// list may be empty; viewer flags are false for Viewer 0.
type HydrateRequest struct {
	Viewer store.ID
	// Counts, Liked and Reposted are posts whose counters, and whether
	// the viewer likes and reposts them, are read.
	Counts, Liked, Reposted []store.ID
	// Favorited are posts whether the viewer has favorited is read.
	Favorited []store.ID
	// Users are profiles read (through the client-side cache);
	// GraphCounts users whose follower and following counts are read;
	// Following users the viewer may follow; Relations users whose
	// relation to the viewer (blocks, mute, hide) is read.
	Users, GraphCounts, Following, Relations []store.ID
	// Posts are posts read through the client-side cache (the parents of
	// a page's replies).
	Posts []store.ID
}

// Hydration answers a HydrateRequest: each slice in the order of its
// request list. Users holds nil where no profile exists.
type Hydration struct {
	Counts      []core.PostCounts
	Liked       []bool
	Reposted    []bool
	Users       []*core.User
	Posts       []*content.Post
	GraphCounts []timeline.GraphCounts
	Following   []bool
	Relations   []RelationFlags
	Favorited   []bool
}

// Hydrate reads everything req names in one round trip: profiles through
// the client-side cache (free when all are cached), overlapping one
// pipeline of the uncached reads.
func (s *Service) Hydrate(ctx context.Context, req HydrateRequest) (_ *Hydration, err error) {
	defer store.Wrap(&err, "hydrate a page")
	h := &Hydration{}
	if req.Viewer == 0 { // no viewer: every flag false, nothing read
		h.Liked, h.Reposted, h.Following = make([]bool, len(req.Liked)), make([]bool, len(req.Reposted)), make([]bool, len(req.Following))
		h.Relations, h.Favorited = make([]RelationFlags, len(req.Relations)), make([]bool, len(req.Favorited))
		req.Liked, req.Reposted, req.Following, req.Relations, req.Favorited = nil, nil, nil, nil, nil
	}
	var b store.Batch
	s.hydrateReads(&b, req, h)
	var branches []func(context.Context) error
	if len(b.Cmds()) > 0 {
		branches = append(branches, func(ctx context.Context) error {
			// No script rides here, so the commands need not be pinned
			// for a resend (doMulti): rueidis recycles them.
			return b.Parse(s.Redis.DoMulti(ctx, b.Cmds()...))
		})
	}
	if len(req.Users) > 0 {
		branches = append(branches, func(ctx context.Context) (err error) { h.Users, err = s.Users(ctx, req.Users); return err })
	}
	if len(req.Posts) > 0 {
		branches = append(branches, func(ctx context.Context) (err error) { h.Posts, err = s.CachedPosts(ctx, req.Posts); return err })
	}
	switch len(branches) {
	case 0:
	case 1:
		err = branches[0](ctx)
	default:
		err = roundtrip.Parallel(ctx, branches...)
	}
	if err != nil {
		return nil, err
	}
	return h, nil
}

// hydrateReads adds to b each read req names that the client-side cache
// does not serve, with the parser that fills its field of h: one place per
// field.
func (s *Service) hydrateReads(b *store.Batch, req HydrateRequest, h *Hydration) {
	vm := store.Member(req.Viewer)
	one := func(cmd rueidis.Completed) []rueidis.Completed { return []rueidis.Completed{cmd} }
	b.Grow(len(req.Counts)+len(req.Liked)+len(req.Reposted)+2*len(req.GraphCounts)+1+relationFlagsReplies+1, 7)
	b.Add(store.CmdsFor(req.Counts, s.PostCountsCmd), func(rs []rueidis.RedisResult) (err error) {
		h.Counts, err = ParseCounts(rs)
		return err
	})
	if len(req.Liked) > 0 {
		liked := func(id store.ID) rueidis.Completed { return s.likedCmd(vm, id) }
		b.Add(store.CmdsFor(req.Liked, liked), func(rs []rueidis.RedisResult) (err error) {
			h.Liked, err = parseFlags(rs)
			return err
		})
	}
	if len(req.Reposted) > 0 {
		reposted := func(id store.ID) rueidis.Completed { return s.repostedCmd(vm, id) }
		b.Add(store.CmdsFor(req.Reposted, reposted), func(rs []rueidis.RedisResult) (err error) {
			h.Reposted, err = store.ParseEach(rs, isLiveRepost)
			return err
		})
	}
	b.Add(s.GraphCountCmds(req.GraphCounts), func(rs []rueidis.RedisResult) (err error) {
		h.GraphCounts, err = timeline.ParseGraphCounts(rs)
		return err
	})
	if len(req.Following) > 0 {
		b.Add(one(s.FollowingCmd(req.Viewer, req.Following)), func(rs []rueidis.RedisResult) (err error) {
			h.Following, err = timeline.ParseFollowing(rs[0], len(req.Following))
			return err
		})
	}
	if len(req.Relations) > 0 {
		b.Add(s.relationFlagsCmds(req.Viewer, req.Relations), func(rs []rueidis.RedisResult) (err error) {
			h.Relations, err = s.parseRelationFlags(rs, len(req.Relations))
			return err
		})
	}
	if len(req.Favorited) > 0 {
		b.Add(one(s.favoritedCmd(req.Viewer, req.Favorited)), func(rs []rueidis.RedisResult) (err error) {
			h.Favorited, err = parseFavorited(rs[0], len(req.Favorited))
			return err
		})
	}
}
