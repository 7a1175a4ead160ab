package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/gqltype/view"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/loaders"
)

// Subscriptions: the domain (feedcore's realtime) sends what changed as
// ids; each update is shaped here into what the selection asks, as a page
// is. An update may come minutes after the subscription started, so each
// one reads through loaders of its own, never the operation's: those would
// hand out what was read at the first update for the stream's whole life.
//
// The channel returned is unbuffered: an update waits for the transport to
// take it, and the domain's own bound (coalescing, or the live queue that
// drops a subscriber who lets it fill) is the only queue.

// FollowingFeedUpdates subscribes the viewer to its following feed's "N new
// posts" from the cursor since.
func (r *subscriptionResolver) FollowingFeedUpdates(ctx context.Context, since *string) (<-chan *graph.FollowingFeedUpdate, error) {
	viewer, err := r.subscriber(ctx)
	if err != nil {
		return nil, err
	}
	in, err := r.Svc.FollowingFeedUpdates(ctx, viewer, deref(since))
	if err != nil {
		return nil, err
	}
	uw := userWantsIn(ctx, sub(ctx, "newPostAuthors"))
	return relay(ctx, in, func(u feedcore.FollowingUpdate) *graph.FollowingFeedUpdate {
		ld := loaders.New(r.Svc, viewer)
		deleted := make([]string, len(u.DeletedPostIDs))
		for i, id := range u.DeletedPostIDs {
			deleted[i] = gqltype.Encode(gqltype.Post, id)
		}
		return &graph.FollowingFeedUpdate{NewPostCount: u.NewPostCount,
			NewPostAuthors: authorViews(ctx, ld, u.NewPostAuthors, uw), DeletedPostIds: deleted}
	}), nil
}

// LiveFeedUpdates subscribes the viewer to the sessions of the anchors it
// follows.
func (r *subscriptionResolver) LiveFeedUpdates(ctx context.Context) (<-chan *graph.LiveFeedUpdate, error) {
	viewer, err := r.subscriber(ctx)
	if err != nil {
		return nil, err
	}
	in, err := r.Svc.LiveFeedUpdates(ctx, viewer)
	if err != nil {
		return nil, err
	}
	anchor, aw := sessionWantsIn(ctx, sub(ctx, "session"))
	return relay(ctx, in, func(u feedcore.LiveUpdate) *graph.LiveFeedUpdate {
		ld := loaders.New(r.Svc, viewer)
		// A failed read shows in the anchor's field (an error in the
		// update, with its code), as it would on a page.
		_ = r.hydrateSessions(ctx, ld, []*feedcore.LiveSession{u.Session}, anchor, aw)
		v := sessionViews(ctx, ld, []*feedcore.LiveSession{u.Session}, anchor, aw)[0]
		return &graph.LiveFeedUpdate{Session: v, State: u.State}
	}), nil
}

// subscriber is the viewer, checked to exist: a subscription of a ghost
// (an id with no profile) is refused as a page of one is.
func (r *subscriptionResolver) subscriber(ctx context.Context) (feedcore.ID, error) {
	u, err := r.viewer(ctx)
	if err != nil {
		return 0, err
	}
	return u.ID, nil
}

// authorViews are the views of the new posts' authors, as w asks, read in
// one round trip. An author whose profile cannot be shown (a deleted
// account, or a read that failed) is left out: the avatars are a nicety,
// the count is the update.
func authorViews(ctx context.Context, ld *loaders.Loaders, ids []feedcore.ID, w userWants) []*view.User {
	out := make([]*view.User, 0, len(ids))
	if len(ids) == 0 {
		return out
	}
	req := feedcore.HydrateRequest{Viewer: ld.Viewer()}
	usersRequest(&req, ids, w)
	if err := ld.Hydrate(ctx, req); err != nil {
		return out
	}
	asks := make([]profileAsk, len(ids))
	for i, id := range ids {
		asks[i] = askProfile(ctx, ld, id, w)
	}
	for _, a := range asks {
		if u, err := a.profile.Get(); err == nil && u != nil {
			out = append(out, a.user.view(u))
		}
	}
	return out
}

// relay shapes each update from in with shape and hands it on, until in
// closes (the domain ended the subscription, or ctx ended) or ctx ends.
func relay[T, U any](ctx context.Context, in <-chan T, shape func(T) U) <-chan U {
	out := make(chan U)
	go func() {
		defer close(out)
		for {
			var u T
			var ok bool
			select {
			case u, ok = <-in:
				if !ok {
					return
				}
			case <-ctx.Done():
				return
			}
			select {
			case out <- shape(u):
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
