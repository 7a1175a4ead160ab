package resolvers

import (
	"context"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/loaders"
)

// Safety: blocks, mutes and hides. feedcore decides everything (self,
// unknown users, limits, a negative duration); these resolvers decode,
// call it and shape the payload.

func (r *mutationResolver) BlockUser(ctx context.Context, userID string) (*graph.RelationshipPayload, error) {
	return r.relate(ctx, userID, r.Svc.Block)
}

func (r *mutationResolver) UnblockUser(ctx context.Context, userID string) (*graph.RelationshipPayload, error) {
	return r.relate(ctx, userID, r.Svc.Unblock)
}

// MuteUser passes durationSeconds on as is (null: 0, no end): a negative
// one is feedcore's to refuse.
func (r *mutationResolver) MuteUser(ctx context.Context, userID string, durationSeconds *int) (*graph.RelationshipPayload, error) {
	d := time.Duration(deref(durationSeconds)) * time.Second
	return r.relate(ctx, userID, func(ctx context.Context, viewer, target feedcore.ID) error {
		return r.Svc.Mute(ctx, viewer, target, d)
	})
}

func (r *mutationResolver) UnmuteUser(ctx context.Context, userID string) (*graph.RelationshipPayload, error) {
	return r.relate(ctx, userID, r.Svc.Unmute)
}

func (r *mutationResolver) HideMyPostsFrom(ctx context.Context, userID string) (*graph.RelationshipPayload, error) {
	return r.relate(ctx, userID, r.Svc.HidePostsFrom)
}

func (r *mutationResolver) UnhideMyPostsFrom(ctx context.Context, userID string) (*graph.RelationshipPayload, error) {
	return r.relate(ctx, userID, r.Svc.UnhidePostsFrom)
}

// relate runs op and returns the other user, whose flags resolve
// afterwards and so reflect the change.
func (r *mutationResolver) relate(ctx context.Context, userID string, op func(context.Context, feedcore.ID, feedcore.ID) error) (*graph.RelationshipPayload, error) {
	u, err := r.changeUser(ctx, userID, op)
	if err != nil {
		return nil, err
	}
	return &graph.RelationshipPayload{User: r.payloadUser(ctx, u)}, nil
}

func (r *queryResolver) BlockedUsers(ctx context.Context, first *int, after *string) (*graph.UserConnection, error) {
	return r.relationList(ctx, feedcore.RelationBlock, first, after)
}

func (r *queryResolver) MutedUsers(ctx context.Context, first *int, after *string) (*graph.UserConnection, error) {
	return r.relationList(ctx, feedcore.RelationMute, first, after)
}

func (r *queryResolver) UsersHiddenFromMyPosts(ctx context.Context, first *int, after *string) (*graph.UserConnection, error) {
	return r.relationList(ctx, feedcore.RelationHide, first, after)
}

// relationList reads a page of the viewer's relations of kind and
// hydrates its users as the selection asks, in one round trip.
func (r *queryResolver) relationList(ctx context.Context, kind feedcore.RelationKind, first *int, after *string) (*graph.UserConnection, error) {
	viewer, err := r.viewerID(ctx)
	if err != nil {
		return nil, err
	}
	if err := pageSize("first", first); err != nil {
		return nil, err
	}
	page, err := r.Svc.RelationList(ctx, viewer, kind, deref(first), deref(after))
	if err != nil {
		return nil, err
	}
	return r.userConnection(ctx, page, after)
}

// userConnection hydrates a page of a list of users as the selection
// asks, in one round trip, and shapes it.
func (r *Resolver) userConnection(ctx context.Context, page *feedcore.UserPage, after *string) (*graph.UserConnection, error) {
	ld := r.loaders(ctx)
	req := feedcore.HydrateRequest{}
	w := userPageWants(ctx)
	usersRequest(&req, page.Users, w)
	if err := ld.Hydrate(ctx, req); err != nil {
		return nil, err
	}
	edges := make([]*graph.UserEdge, 0, len(page.Users))
	for i, id := range page.Users {
		// Primed by the hydration: no read. A user whose profile is gone
		// (an account deleted since the list was read) is left out; the
		// cursor still advances past it.
		if u, err := ld.User(ctx, id); err != nil {
			return nil, err
		} else if u != nil {
			edges = append(edges, &graph.UserEdge{Cursor: page.Cursors[i], Node: userView(ctx, ld, u, w)})
		}
	}
	var start *string
	if len(edges) > 0 {
		start = &edges[0].Cursor
	}
	return &graph.UserConnection{Edges: edges, PageInfo: &graph.PageInfo{
		HasNextPage:     page.HasNextPage,
		HasPreviousPage: deref(after) != "", // as on the feeds: whether the page started from a cursor
		StartCursor:     start,
		EndCursor:       nonEmpty(page.EndCursor),
	}}, nil
}

// unblocked is FORBIDDEN when a block stands between the viewer and
// user, either way, as feedcore refuses follows and likes; nil for
// anonymous callers. The flags come through the request's loaders, so
// many node(id:) fields are one batch.
func (r *Resolver) unblocked(ctx context.Context, ld *loaders.Loaders, user feedcore.ID) error {
	f, err := ld.Relation(ctx, user).Get()
	if err != nil {
		return err
	}
	return f.Forbidden()
}
