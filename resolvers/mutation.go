package resolvers

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/graph"
)

func (r *mutationResolver) PublishPost(ctx context.Context, input graph.PublishPostInput) (*graph.PublishPostPayload, error) {
	viewer, err := r.viewerID(ctx)
	if err != nil {
		return nil, err
	}
	key := ""
	if input.IdempotencyKey != nil {
		key = *input.IdempotencyKey
	}
	var p *feedcore.Post
	err = r.write(ctx, func(ctx context.Context) (err error) {
		p, err = r.Svc.PublishOnce(ctx, viewer, input.Text, key)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &graph.PublishPostPayload{Post: p}, nil
}

func (r *mutationResolver) DeletePost(ctx context.Context, id string) (*graph.DeletePostPayload, error) {
	viewer, err := r.viewerID(ctx)
	if err != nil {
		return nil, err
	}
	postID, err := decodeID("id", id, gqltype.Post)
	if err != nil {
		return nil, err
	}
	if err := r.write(ctx, func(ctx context.Context) error { return r.Svc.Delete(ctx, viewer, postID) }); err != nil {
		return nil, err
	}
	return &graph.DeletePostPayload{DeletedPostID: gqltype.Encode(gqltype.Post, postID)}, nil
}

func (r *mutationResolver) FollowUser(ctx context.Context, userID string) (*graph.FollowPayload, error) {
	return r.follow(ctx, userID, r.Svc.Follow)
}

func (r *mutationResolver) UnfollowUser(ctx context.Context, userID string) (*graph.FollowPayload, error) {
	return r.follow(ctx, userID, r.Svc.Unfollow)
}

// follow runs op (Follow or Unfollow) and returns the target, whose counts
// resolve afterwards and so reflect the change.
func (r *mutationResolver) follow(ctx context.Context, userID string, op func(context.Context, feedcore.ID, feedcore.ID) error) (*graph.FollowPayload, error) {
	viewer, err := r.viewerID(ctx)
	if err != nil {
		return nil, err
	}
	target, err := decodeID("userId", userID, gqltype.User)
	if err != nil {
		return nil, err
	}
	if err := r.write(ctx, func(ctx context.Context) error { return op(ctx, viewer, target) }); err != nil {
		return nil, err
	}
	ld := r.loaders(ctx)
	ld.ForgetUsers(viewer, target)
	u, err := ld.User(ctx, target)
	if err == nil && u == nil {
		err = fail(apierr.NotFound, "no user with id %d", target)
	}
	if err != nil {
		return nil, err
	}
	return &graph.FollowPayload{User: u}, nil
}
