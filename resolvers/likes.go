package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/graph"
)

func (r *mutationResolver) LikePost(ctx context.Context, id string) (*graph.LikePayload, error) {
	return r.like(ctx, id, true)
}

func (r *mutationResolver) UnlikePost(ctx context.Context, id string) (*graph.LikePayload, error) {
	return r.like(ctx, id, false)
}

// like likes or unlikes a post; the payload's counters and viewerHasLiked
// are the ones the change left, primed from its reply.
func (r *mutationResolver) like(ctx context.Context, id string, like bool) (*graph.LikePayload, error) {
	viewer, err := r.viewerID(ctx)
	if err != nil {
		return nil, err
	}
	postID, err := decodeID("id", id, gqltype.Post)
	if err != nil {
		return nil, err
	}
	op := r.Svc.Unlike
	if like {
		op = r.Svc.Like
	}
	var (
		p      *feedcore.Post
		counts feedcore.PostCounts
	)
	err = r.write(ctx, func(ctx context.Context) (err error) {
		p, counts, err = op(ctx, viewer, postID)
		return err
	})
	if err != nil {
		return nil, err
	}
	ld := r.loaders(ctx)
	ld.PrimeLike(p.ID, counts, like)
	return &graph.LikePayload{Post: p}, nil
}
