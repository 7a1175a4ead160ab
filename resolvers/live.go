package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/reqinfo"
	"github.com/feedd/feedd/roundtrip"
)

// LiveFeed reads a page and hydrates its sessions' anchors. A viewer this
// process has not seen exist is checked while the page is read (the two
// overlap), so the check adds no round trip of its own.
func (r *queryResolver) LiveFeed(ctx context.Context, first *int, after *string) (*graph.LiveSessionConnection, error) {
	viewer, err := claimedViewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := pageSize("first", first); err != nil {
		return nil, r.ghostFirst(ctx, err)
	}
	var p *feedcore.LivePage
	read := func(ctx context.Context) (err error) {
		p, err = r.Svc.LiveFeed(ctx, feedcore.LiveRequest{Viewer: viewer, First: deref(first), After: deref(after),
			Device: reqinfo.Of(ctx).Device})
		return err
	}
	if r.Svc.Known.Has(viewer) {
		// Seen to exist by this process; a deleted account is refused
		// by the charge that rides the read.
		err = read(ctx)
	} else {
		err = roundtrip.Parallel(ctx, read, func(ctx context.Context) error { _, err := r.viewerID(ctx); return err })
	}
	if err != nil {
		return nil, err
	}
	sessions := make([]*feedcore.LiveSession, len(p.Edges))
	for i, e := range p.Edges {
		sessions[i] = e.Session
	}
	ld := r.loaders(ctx)
	anchor, aw := sessionPageWants(ctx)
	if err := r.hydrateSessions(ctx, ld, sessions, anchor, aw); err != nil {
		return nil, err
	}
	views := sessionViews(ctx, ld, sessions, anchor, aw)
	edges := make([]*graph.LiveSessionEdge, len(p.Edges))
	for i, e := range p.Edges {
		edges[i] = &graph.LiveSessionEdge{Cursor: e.Cursor, Node: views[i], State: e.State}
	}
	return &graph.LiveSessionConnection{Edges: edges, PageInfo: &graph.PageInfo{
		HasNextPage:     p.HasNext,
		HasPreviousPage: p.HasPrevious,
		StartCursor:     nonEmpty(p.StartCursor),
		EndCursor:       nonEmpty(p.EndCursor),
	}}, nil
}

func (r *mutationResolver) ScheduleLive(ctx context.Context, input graph.ScheduleLiveInput) (*graph.LivePayload, error) {
	return r.live(ctx, object{}, func(ctx context.Context, viewer, _ feedcore.ID) (*feedcore.LiveSession, error) {
		return r.Svc.ScheduleLiveSession(ctx, viewer, feedcore.NewLive{Title: input.Title, ScheduledStartAt: input.ScheduledStartAt,
			CoverURL: deref(input.CoverURL)})
	})
}

func (r *mutationResolver) StartLive(ctx context.Context, id string) (*graph.LivePayload, error) {
	return r.live(ctx, object{"id", id, gqltype.LiveSession}, r.Svc.StartLive)
}

func (r *mutationResolver) EndLive(ctx context.Context, id string) (*graph.LivePayload, error) {
	return r.live(ctx, object{"id", id, gqltype.LiveSession}, r.Svc.EndLive)
}

// live runs a live session mutation; the payload is the session it left.
func (r *mutationResolver) live(ctx context.Context, on object, w writes[*feedcore.LiveSession]) (*graph.LivePayload, error) {
	l, err := mutate(ctx, r.Resolver, on, w)
	if err != nil {
		return nil, err
	}
	return &graph.LivePayload{Session: sessionView(ctx, r.loaders(ctx), l, sub(ctx, "session"))}, nil
}
