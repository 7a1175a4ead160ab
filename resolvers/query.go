package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/nodeid"
)

func (r *queryResolver) Viewer(ctx context.Context) (*feedcore.User, error) {
	return r.viewer(ctx)
}

// Node answers null for anything that does not exist or was deleted, as the
// Node convention expects; only a malformed id is an error.
func (r *queryResolver) Node(ctx context.Context, id string) (nodeid.Node, error) {
	t, dbID, err := nodeid.Decode(id)
	if err != nil {
		return nil, fail(feedcore.CodeBadInput, "id: %q is not a global id", id)
	}
	switch t {
	case nodeid.Post:
		ps, err := r.Svc.Posts(ctx, []feedcore.ID{dbID})
		if err != nil {
			return nil, err
		}
		if ps[0] == nil || ps[0].Deleted {
			return nil, nil
		}
		return ps[0], nil
	case nodeid.LiveSession:
		ls, err := r.Svc.LiveSessions(ctx, []feedcore.ID{dbID})
		if err != nil {
			return nil, err
		}
		if ls[0] == nil {
			return nil, nil
		}
		return ls[0], nil
	case nodeid.User:
		us, err := r.Svc.Users(ctx, []feedcore.ID{dbID})
		if err != nil {
			return nil, err
		}
		if us[0] == nil {
			return nil, nil // not a typed nil inside the interface
		}
		return us[0], nil
	}
	return nil, fail(feedcore.CodeBadInput, "id: %q is not a global id", id)
}

func (r *queryResolver) User(ctx context.Context, handle string) (*feedcore.User, error) {
	return r.Svc.UserByHandle(ctx, handle)
}

func (r *queryResolver) FollowingFeed(ctx context.Context, first *int, after *string, last *int, before *string) (*graph.PostConnection, error) {
	viewer, err := r.viewerID(ctx)
	if err != nil {
		return nil, err
	}
	// feedcore reads 0 as "absent", so an explicit 0 must be refused here.
	if err := pageSize("first", first); err != nil {
		return nil, err
	}
	if err := pageSize("last", last); err != nil {
		return nil, err
	}
	page, err := r.Svc.FollowingFeed(ctx, feedcore.FeedRequest{
		Viewer: viewer, First: deref(first), After: deref(after), Last: deref(last), Before: deref(before),
	})
	if err != nil {
		return nil, err
	}
	return postConnection(page), nil
}
