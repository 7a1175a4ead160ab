package resolvers

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/graph"
)

// object names what a mutation acts on: its argument arg, holding raw, a
// global id of type typ (or a plain database id). The zero object: the
// mutation names none.
type object struct {
	arg, raw string
	typ      gqltype.Type
}

// writes are a mutation's writes, for the signed-in viewer on the object
// id (0 when the mutation names none).
type writes[T any] func(ctx context.Context, viewer, id feedcore.ID) (T, error)

// mutate is every mutation's course: the signed-in viewer (viewerID), the
// object it names (decodeID), then its writes, and what they returned.
//
// The writes run under a context of their own: the request's values,
// without its cancellation, and with WriteTimeout. A client that goes
// away, or a request timeout, must not stop writes halfway: a post stored
// but not queued for fan-out, a follow counted on one side only. Reads
// that shape the payload afterwards use the request's context.
func mutate[T any](ctx context.Context, r *Resolver, on object, w writes[T]) (T, error) {
	var zero T
	viewer, err := r.viewerID(ctx)
	if err != nil {
		return zero, err
	}
	var id feedcore.ID
	if on.arg != "" {
		if id, err = decodeID(on.arg, on.raw, on.typ); err != nil {
			return zero, err
		}
	}
	wctx, cancel := r.writeContext(ctx)
	defer cancel()
	return w(wctx, viewer, id)
}

// writeContext is the context a mutation's writes run under: ctx's
// values, without its cancellation, with WriteTimeout.
func (r *Resolver) writeContext(ctx context.Context) (context.Context, context.CancelFunc) {
	d := r.WriteTimeout
	if d <= 0 {
		d = DefaultWriteTimeout
	}
	return context.WithTimeout(context.WithoutCancel(ctx), d)
}

// returningID adapts writes that return only an error: they return the
// object's id.
func returningID(op func(ctx context.Context, viewer, id feedcore.ID) error) writes[feedcore.ID] {
	return func(ctx context.Context, viewer, id feedcore.ID) (feedcore.ID, error) {
		return id, op(ctx, viewer, id)
	}
}

func (r *mutationResolver) PublishPost(ctx context.Context, input graph.PublishPostInput) (*graph.PublishPostPayload, error) {
	p, err := mutate(ctx, r.Resolver, object{}, func(ctx context.Context, viewer, _ feedcore.ID) (*feedcore.Post, error) {
		in := newPost(input)
		var err error
		if in.ReplyTo, err = replyTo(input.ReplyTo); err != nil {
			return nil, err
		}
		return r.Svc.PublishPost(ctx, viewer, in)
	})
	if err != nil {
		return nil, err
	}
	return &graph.PublishPostPayload{Post: r.payloadPost(ctx, p)}, nil
}

func (r *mutationResolver) DeletePost(ctx context.Context, id string) (*graph.DeletePostPayload, error) {
	postID, err := mutate(ctx, r.Resolver, object{"id", id, gqltype.Post}, returningID(r.Svc.Delete))
	if err != nil {
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

// follow runs op (Follow or Unfollow) and returns the target.
func (r *mutationResolver) follow(ctx context.Context, userID string, op func(context.Context, feedcore.ID, feedcore.ID) error) (*graph.FollowPayload, error) {
	u, err := r.changeUser(ctx, userID, op)
	if err != nil {
		return nil, err
	}
	return &graph.FollowPayload{User: r.payloadUser(ctx, u)}, nil
}

// changeUser runs op, a change of how the viewer relates to user userID
// (a follow, a block, a mute, a hide, or their undoing), and returns that
// user's profile. What the request loaded of the viewer's and the user's
// counts and flags is forgotten first, so they resolve afterwards and
// reflect the change.
func (r *mutationResolver) changeUser(ctx context.Context, userID string, op func(context.Context, feedcore.ID, feedcore.ID) error) (*feedcore.User, error) {
	target, err := mutate(ctx, r.Resolver, object{"userId", userID, gqltype.User}, returningID(op))
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).ForgetUsers(optionalViewer(ctx), target)
	u, err := r.loaders(ctx).User(ctx, target)
	if err == nil && u == nil {
		err = fail(apierr.NotFound, "no user with id %d", target)
	}
	return u, err
}
