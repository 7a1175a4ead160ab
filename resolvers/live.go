package resolvers

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/roundtrip"
	"github.com/feedd/feedd/server/reqinfo"
)

// LiveFeed reads a page and hydrates its sessions' anchors. As with
// FollowingFeed, the viewer's profile is checked while the page is read
// (the two overlap), so the check adds no round trip of its own when the
// profile is not cached.
func (r *queryResolver) LiveFeed(ctx context.Context, first *int, after *string) (*graph.LiveSessionConnection, error) {
	viewer, err := claimedViewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := pageSize("first", first); err != nil {
		return nil, r.ghostFirst(ctx, err)
	}
	var p *feedcore.LivePage
	err = roundtrip.Parallel(ctx,
		func(ctx context.Context) error { _, err := r.viewer(ctx); return err },
		func(ctx context.Context) (err error) {
			p, err = r.Svc.LiveFeed(ctx, feedcore.LiveRequest{Viewer: viewer, First: deref(first), After: deref(after),
				Device: reqinfo.Of(ctx).Device})
			return err
		})
	if err != nil {
		return nil, err
	}
	edges := make([]*graph.LiveSessionEdge, len(p.Edges))
	sessions := make([]*feedcore.LiveSession, len(p.Edges))
	for i, e := range p.Edges {
		edges[i] = &graph.LiveSessionEdge{Cursor: e.Cursor, Node: e.Session, State: graph.LiveState(e.State)}
		sessions[i] = e.Session
	}
	if err := r.hydrateSessions(ctx, r.loaders(ctx), sessions); err != nil {
		return nil, err
	}
	return &graph.LiveSessionConnection{Edges: edges, PageInfo: &graph.PageInfo{
		HasNextPage:     p.HasNext,
		HasPreviousPage: p.HasPrevious,
		StartCursor:     nonEmpty(p.StartCursor),
		EndCursor:       nonEmpty(p.EndCursor),
	}}, nil
}

func (r *mutationResolver) ScheduleLive(ctx context.Context, input graph.ScheduleLiveInput) (*graph.LivePayload, error) {
	viewer, err := r.viewerID(ctx)
	if err != nil {
		return nil, err
	}
	var l *feedcore.LiveSession
	err = r.write(ctx, func(ctx context.Context) (err error) {
		l, err = r.Svc.ScheduleLive(ctx, viewer, input.Title, input.ScheduledStartAt)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &graph.LivePayload{Session: l}, nil
}

func (r *mutationResolver) StartLive(ctx context.Context, id string) (*graph.LivePayload, error) {
	return r.liveOp(ctx, id, r.Svc.StartLive)
}

func (r *mutationResolver) EndLive(ctx context.Context, id string) (*graph.LivePayload, error) {
	return r.liveOp(ctx, id, r.Svc.EndLive)
}

func (r *mutationResolver) liveOp(ctx context.Context, id string, op func(context.Context, feedcore.ID, feedcore.ID) (*feedcore.LiveSession, error)) (*graph.LivePayload, error) {
	viewer, err := r.viewerID(ctx)
	if err != nil {
		return nil, err
	}
	sid, err := decodeID("id", id, gqltype.LiveSession)
	if err != nil {
		return nil, err
	}
	var l *feedcore.LiveSession
	err = r.write(ctx, func(ctx context.Context) (err error) {
		l, err = op(ctx, viewer, sid)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &graph.LivePayload{Session: l}, nil
}

func (r *liveSessionResolver) ID(_ context.Context, l *feedcore.LiveSession) (string, error) {
	return gqltype.Encode(gqltype.LiveSession, l.ID), nil
}

func (r *liveSessionResolver) DatabaseID(_ context.Context, l *feedcore.LiveSession) (string, error) {
	return feedcore.FormatID(l.ID), nil
}

// Anchor reads through the request's loaders; a liveFeed page has primed them.
func (r *liveSessionResolver) Anchor(ctx context.Context, l *feedcore.LiveSession) (*feedcore.User, error) {
	u, err := r.loaders(ctx).User(ctx, l.Anchor)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, fail(apierr.NotFound, "the anchor of live session %d (user %d) has no profile", l.ID, l.Anchor)
	}
	return u, nil
}

func (r *liveSessionResolver) State(_ context.Context, l *feedcore.LiveSession) (graph.LiveState, error) {
	return graph.LiveState(l.State()), nil
}
