package resolvers

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
)

// Author, Counts and ViewerHasLiked read through the request's loaders: a
// feed page has primed them, anything else is batched.
func (r *postResolver) Author(ctx context.Context, p *feedcore.Post) (*feedcore.User, error) {
	return r.profile(ctx, p.Author, func() error {
		return fail(apierr.NotFound, "the author of post %d (user %d) has no profile", p.ID, p.Author)
	})
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
