package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/gqltype/view"
	"github.com/feedd/feedd/graph"
)

// Favorites, author timelines and follower lists. feedcore pages and
// filters them (sealed cursors bound to the viewer, the list and its
// owner); these resolvers check the page size, call it and hydrate the
// page in one round trip.

// Favorites checks the viewer exists as followingFeed does: its profile
// is read in the page's hydration, and a ghost is told so first.
func (r *queryResolver) Favorites(ctx context.Context, first *int, after *string) (*graph.PostConnection, error) {
	viewer, err := claimedViewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := pageSize("first", first); err != nil {
		return nil, r.ghostFirst(ctx, err)
	}
	page, err := r.Svc.Favorites(ctx, viewer, deref(first), deref(after))
	if err != nil {
		return nil, r.ghostFirst(ctx, err)
	}
	conn, err := r.postList(ctx, page, true)
	if err != nil {
		return nil, r.ghostFirst(ctx, err)
	}
	if u, err := r.loaders(ctx).User(ctx, viewer); err != nil {
		return nil, err
	} else if u == nil {
		return nil, ghost(viewer)
	}
	return conn, nil
}

func (r *userResolver) Posts(ctx context.Context, u *view.User, first *int, after *string, includeReplies *bool) (*graph.PostConnection, error) {
	if err := pageSize("first", first); err != nil {
		return nil, err
	}
	page, err := r.Svc.AuthorPosts(ctx, optionalViewer(ctx), u.User.ID, deref(includeReplies), deref(first), deref(after))
	if err != nil {
		return nil, err
	}
	return r.postList(ctx, page, false)
}

// postList hydrates a page of a list of posts (with the viewer's profile
// when viewer is set) and shapes it.
func (r *Resolver) postList(ctx context.Context, page *feedcore.FeedPage, viewer bool) (*graph.PostConnection, error) {
	ld, w := r.loaders(ctx), postPageWants(ctx)
	if err := r.hydrateListPosts(ctx, ld, page.Edges, w, viewer); err != nil {
		return nil, err
	}
	return postConnection(ctx, ld, page, w), nil
}

func (r *userResolver) Followers(ctx context.Context, u *view.User, first *int, after *string) (*graph.UserConnection, error) {
	return r.followList(ctx, u, first, after, r.Svc.Followers)
}

func (r *userResolver) Following(ctx context.Context, u *view.User, first *int, after *string) (*graph.UserConnection, error) {
	return r.followList(ctx, u, first, after, r.Svc.Following)
}

// followList reads a page of one of u's follower lists with list and
// hydrates it.
func (r *userResolver) followList(ctx context.Context, u *view.User, first *int, after *string,
	list func(ctx context.Context, viewer, user feedcore.ID, first int, after string) (*feedcore.UserPage, error)) (*graph.UserConnection, error) {
	if err := pageSize("first", first); err != nil {
		return nil, err
	}
	page, err := list(ctx, optionalViewer(ctx), u.User.ID, deref(first), deref(after))
	if err != nil {
		return nil, err
	}
	return r.userConnection(ctx, page, after)
}

func (r *mutationResolver) FavoritePost(ctx context.Context, id string) (*graph.FavoritePayload, error) {
	return r.favorite(ctx, id, true)
}

func (r *mutationResolver) UnfavoritePost(ctx context.Context, id string) (*graph.FavoritePayload, error) {
	return r.favorite(ctx, id, false)
}

// favorite favorites or unfavorites a post; the payload's counters and
// viewerHasFavorited are the ones the change left, primed from its reply.
func (r *mutationResolver) favorite(ctx context.Context, id string, on bool) (*graph.FavoritePayload, error) {
	op := r.Svc.UnfavoritePost
	if on {
		op = r.Svc.FavoritePost
	}
	res, err := mutate(ctx, r.Resolver, object{"id", id, gqltype.Post}, func(ctx context.Context, viewer, postID feedcore.ID) (engaged, error) {
		p, counts, err := op(ctx, viewer, postID)
		return engaged{p, counts}, err
	})
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).PrimeFavorite(res.post.ID, res.counts, on)
	return &graph.FavoritePayload{Post: r.payloadPost(ctx, res.post)}, nil
}
