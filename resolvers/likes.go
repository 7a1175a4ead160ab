package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
)

func (r *mutationResolver) LikePost(ctx context.Context, id string) (*graph.LikePayload, error) {
	return nil, fail(feedcore.CodeInternal, "likes are not implemented yet")
}

func (r *mutationResolver) UnlikePost(ctx context.Context, id string) (*graph.LikePayload, error) {
	return nil, fail(feedcore.CodeInternal, "likes are not implemented yet")
}
