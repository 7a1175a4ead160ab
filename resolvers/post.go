package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/nodeid"
)

func (r *postResolver) ID(_ context.Context, p *feedcore.Post) (string, error) {
	return nodeid.Encode(nodeid.Post, p.ID), nil
}

func (r *postResolver) DatabaseID(_ context.Context, p *feedcore.Post) (string, error) {
	return feedcore.FormatID(p.ID), nil
}

// Author reads the profile per post for now; the loaders package will
// batch these per request.
func (r *postResolver) Author(ctx context.Context, p *feedcore.Post) (*feedcore.User, error) {
	return r.Svc.User(ctx, p.Author)
}

// Counts is zero until engagement counters are hydrated by the loaders.
func (r *postResolver) Counts(_ context.Context, _ *feedcore.Post) (*graph.PostCounts, error) {
	return &graph.PostCounts{}, nil
}

// ViewerHasLiked is false until likes exist in feedcore.
func (r *postResolver) ViewerHasLiked(_ context.Context, _ *feedcore.Post) (bool, error) {
	return false, nil
}
