package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/graph"
)

func (r *mutationResolver) Repost(ctx context.Context, id string) (*graph.RepostPayload, error) {
	return r.repost(ctx, id, r.Svc.Repost)
}

func (r *mutationResolver) UndoRepost(ctx context.Context, id string) (*graph.RepostPayload, error) {
	return r.repost(ctx, id, r.Svc.UndoRepost)
}

// repost runs op (Repost or UndoRepost); the payload's viewerHasReposted
// is the one the change left, and its counters are read after it.
func (r *mutationResolver) repost(ctx context.Context, id string, op func(context.Context, feedcore.ID, feedcore.ID) (*feedcore.RepostResult, error)) (*graph.RepostPayload, error) {
	res, err := mutate(ctx, r.Resolver, object{"id", id, gqltype.Post}, op)
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).PrimeReposted(res.Post.ID, res.Reposted)
	return &graph.RepostPayload{Post: r.payloadPost(ctx, res.Post)}, nil
}
