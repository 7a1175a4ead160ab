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

// engaged is what a like, unlike, favorite or unfavorite left: the post
// and its counters.
type engaged struct {
	post   *feedcore.Post
	counts feedcore.PostCounts
}

// like likes or unlikes a post; the payload's counters and viewerHasLiked
// are the ones the change left, primed from its reply.
func (r *mutationResolver) like(ctx context.Context, id string, like bool) (*graph.LikePayload, error) {
	op := r.Svc.Unlike
	if like {
		op = r.Svc.Like
	}
	res, err := mutate(ctx, r.Resolver, object{"id", id, gqltype.Post}, func(ctx context.Context, viewer, postID feedcore.ID) (engaged, error) {
		p, counts, err := op(ctx, viewer, postID)
		return engaged{p, counts}, err
	})
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).PrimeLike(res.post.ID, res.counts, like)
	return &graph.LikePayload{Post: r.payloadPost(ctx, res.post)}, nil
}
