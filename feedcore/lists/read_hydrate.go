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
	liked, reposted, following, relations, favorited := req.Liked, req.Reposted, req.Following, req.Relations, req.Favorited
	if req.Viewer == 0 {
		h.Liked, h.Reposted, h.Following = make([]bool, len(liked)), make([]bool, len(reposted)), make([]bool, len(following))
		h.Relations, h.Favorited = make([]RelationFlags, len(relations)), make([]bool, len(favorited))
		liked, reposted, following, relations, favorited = nil, nil, nil, nil, nil
	}
	cmds := make([]rueidis.Completed, 0, len(req.Counts)+len(liked)+len(reposted)+2*len(req.GraphCounts)+1+relationFlagsReplies)
	for _, id := range req.Counts {
		cmds = append(cmds, s.PostCountsCmd(id))
	}
	vm := store.Member(req.Viewer)
	for _, id := range liked {
		cmds = append(cmds, s.likedCmd(vm, id))
	}
	for _, id := range reposted {
		cmds = append(cmds, s.repostedCmd(vm, id))
	}
	for _, id := range req.GraphCounts {
		cmds = append(cmds, s.Redis.B().Zcard().Key(s.Keys.Followers(id)).Build(), s.Redis.B().Zcard().Key(s.Keys.Following(id)).Build())
	}
	if len(following) > 0 {
		cmds = append(cmds, s.Redis.B().Zmscore().Key(s.Keys.Following(req.Viewer)).Member(store.Members(following)...).Build())
	}
	if len(relations) > 0 {
		cmds = append(cmds, s.relationFlagsCmds(req.Viewer, relations)...)
	}
	if len(favorited) > 0 { // last: its reply is the pipeline's last
		cmds = append(cmds, s.favoritedCmd(req.Viewer, favorited))
	}
	uncached := func(ctx context.Context) error {
		if len(cmds) == 0 {
			return nil
		}
		// No script rides here, so the commands need not be pinned for a
		// resend (doMulti): rueidis recycles them.
		rs := s.Redis.DoMulti(ctx, cmds...)
		var err error
		if len(favorited) > 0 {
			if h.Favorited, err = parseFavorited(rs[len(rs)-1], len(favorited)); err != nil {
				return err
			}
			rs = rs[:len(rs)-1]
		}
		if h.Counts, err = ParseCounts(rs[:len(req.Counts)]); err != nil {
			return err
		}
		rs = rs[len(req.Counts):]
		if len(liked) > 0 {
			if h.Liked, err = parseFlags(rs[:len(liked)]); err != nil {
				return err
			}
			rs = rs[len(liked):]
		}
		if len(reposted) > 0 {
			if h.Reposted, err = store.ParseEach(rs[:len(reposted)], isLiveRepost); err != nil {
				return err
			}
			rs = rs[len(reposted):]
		}
		h.GraphCounts = make([]timeline.GraphCounts, len(req.GraphCounts))
		for i := range req.GraphCounts {
			fr, err := rs[2*i].AsInt64()
			if err != nil {
				return err
			}
			fg, err := rs[2*i+1].AsInt64()
			if err != nil {
				return err
			}
			h.GraphCounts[i] = timeline.GraphCounts{Followers: int(fr), Following: int(fg)}
		}
		rs = rs[2*len(req.GraphCounts):]
		if len(following) > 0 {
			scores, err := rs[0].ToArray()
			if err != nil {
				return err
			}
			h.Following = make([]bool, len(following))
			for i, sc := range scores {
				h.Following[i] = !sc.IsNil()
			}
			rs = rs[1:]
		}
		if len(relations) > 0 {
			h.Relations, err = s.parseRelationFlags(rs, len(relations))
		}
		return err
	}
	branches := []func(context.Context) error{uncached}
	if len(req.Users) > 0 {
		branches = append(branches, func(ctx context.Context) (err error) { h.Users, err = s.Users(ctx, req.Users); return err })
	}
	if len(req.Posts) > 0 {
		branches = append(branches, func(ctx context.Context) (err error) { h.Posts, err = s.CachedPosts(ctx, req.Posts); return err })
	}
	if len(branches) == 1 {
		err = uncached(ctx)
	} else {
		err = roundtrip.Parallel(ctx, branches...)
	}
	if err != nil {
		return nil, err
	}
	return h, nil
}
