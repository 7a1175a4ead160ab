package resolvers

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/graph"
)

func (r *postResolver) ID(_ context.Context, p *feedcore.Post) (string, error) {
	return gqltype.Encode(gqltype.Post, p.ID), nil
}

func (r *postResolver) DatabaseID(_ context.Context, p *feedcore.Post) (string, error) {
	return feedcore.FormatID(p.ID), nil
}

// Author, Counts and ViewerHasLiked read through the request's loaders: a
// feed page has primed them, anything else is batched.
func (r *postResolver) Author(ctx context.Context, p *feedcore.Post) (*feedcore.User, error) {
	u, err := r.loaders(ctx).User(ctx, p.Author)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, fail(apierr.NotFound, "the author of post %d (user %d) has no profile", p.ID, p.Author)
	}
	return u, nil
}

func (r *postResolver) Counts(ctx context.Context, p *feedcore.Post) (*graph.PostCounts, error) {
	c, err := r.loaders(ctx).PostCounts(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	return &graph.PostCounts{Likes: c.Likes, Comments: c.Comments, Reposts: c.Reposts, Favorites: c.Favorites}, nil
}

// ViewerHasLiked is false for anonymous callers.
func (r *postResolver) ViewerHasLiked(ctx context.Context, p *feedcore.Post) (bool, error) {
	return r.loaders(ctx).Liked(ctx, p.ID)
}
