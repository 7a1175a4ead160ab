package resolvers

import (
	"cmp"
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/gqltype/view"
	"github.com/feedd/feedd/graph"
)

func (r *queryResolver) Viewer(ctx context.Context) (*view.User, error) {
	u, err := r.viewer(ctx)
	if err != nil {
		return nil, err
	}
	return userView(ctx, r.loaders(ctx), u, userWantsIn(ctx, here(ctx))), nil
}

// Node answers null for anything that does not exist or was deleted (or
// taken down, or whose author is suspended), as the
// Node convention expects; a malformed id is an error, and so is a post or
// live session whose author and the viewer are separated by a block
// (FORBIDDEN; the user itself is still found), and a keyword filter that is
// not the viewer's (NOT_FOUND: whose it is stays private). Reads go through the
// request's loaders, so many node(id:) fields are one batch.
func (r *queryResolver) Node(ctx context.Context, id string) (gqltype.Node, error) {
	t, dbID, err := gqltype.Decode(id)
	if err != nil {
		return nil, fail(apierr.BadInput, "id: %q is not a global id", id)
	}
	ld := r.loaders(ctx)
	switch t {
	case gqltype.Post:
		p, err := ld.Post(ctx, dbID)
		live := p != nil && !p.Deleted && !p.AuthorSuspended && !p.IsRepost() // a repost's record is no post
		if err == nil && live {
			err = r.unblocked(ctx, ld, p.Author)
		}
		if err != nil || !live {
			return nil, err
		}
		return postView(ctx, ld, p, postWantsIn(ctx, here(ctx))), nil
	case gqltype.LiveSession:
		l, err := ld.LiveSession(ctx, dbID)
		shown := l != nil && !l.AnchorSuspended
		if err == nil && shown {
			err = r.unblocked(ctx, ld, l.Anchor)
		}
		if err != nil || !shown {
			return nil, err
		}
		return sessionView(ctx, ld, l, here(ctx)), nil
	case gqltype.User:
		u, err := ld.User(ctx, dbID)
		if err != nil || u == nil {
			return nil, err
		}
		return userView(ctx, ld, u, userWantsIn(ctx, here(ctx))), nil
	case gqltype.KeywordFilter:
		return r.keywordFilterNode(ctx, dbID)
	}
	return nil, fail(apierr.BadInput, "id: %q is not a global id", id)
}

// node is what Node answers for v, read with err: v when it exists, else
// null (a nil Node, not a typed nil inside the interface).
func node[T gqltype.Node](v T, exists bool, err error) (gqltype.Node, error) {
	if err != nil || !exists {
		return nil, err
	}
	return v, nil
}

func (r *queryResolver) User(ctx context.Context, handle string) (*view.User, error) {
	u, err := r.Svc.UserByHandle(ctx, handle)
	if err != nil || u == nil {
		return nil, err
	}
	ld := r.loaders(ctx)
	ld.PrimeUsers(u)
	return userView(ctx, ld, u, userWantsIn(ctx, here(ctx))), nil
}

// FollowingFeed reads a page and hydrates it: the loaders are primed with
// the page's posts and with everything the query asks of them, read in one
// round trip, so the field resolvers below find it all loaded. The
// viewer's profile is checked in that same hydration read (it is usually
// cached, and costs no round trip of its own), so a page costs two round
// trips cold (index, then posts) plus one for hydration, and one fewer
// when posts and profiles are cached. A cold page with reposts or replies
// to decide reads their links in a step more, and hydrates what it may
// show in that step (FeedRequest.Alongside), not in one after. A ghost
// (an id with no profile) is told so before any other error.
func (r *queryResolver) FollowingFeed(ctx context.Context, first *int, after *string, last *int, before *string) (*graph.PostConnection, error) {
	viewer, err := claimedViewer(ctx)
	if err != nil {
		return nil, err
	}
	// feedcore reads 0 as "absent", so an explicit 0 must be refused here.
	if err := cmp.Or(pageSize("first", first), pageSize("last", last)); err != nil {
		return nil, r.ghostFirst(ctx, err)
	}
	ld := r.loaders(ctx)
	w := postPageWants(ctx)
	page, err := r.Svc.FollowingFeed(ctx, feedcore.FeedRequest{
		Viewer: viewer, First: deref(first), After: deref(after), Last: deref(last), Before: deref(before),
		Alongside: func(ctx context.Context, shown []feedcore.Shown) error { return r.hydrateShown(ctx, ld, shown, w) },
	})
	if err != nil {
		return nil, r.ghostFirst(ctx, err)
	}
	// An empty page is hydrated too: that reads the viewer's profile.
	if err := r.hydratePosts(ctx, ld, page.Edges, w); err != nil {
		return nil, r.ghostFirst(ctx, err)
	}
	if u, err := ld.User(ctx, viewer); err != nil {
		return nil, r.ghostFirst(ctx, err)
	} else if u == nil {
		return nil, ghost(viewer)
	}
	return postConnection(ctx, ld, page, w), nil
}
