package resolvers

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/loaders"
)

// pageSize checks a page size the client gave: feedcore reads 0 as "not
// given", so an explicit 0 must be refused here.
func pageSize(arg string, n *int) error {
	if n != nil && (*n < 1 || *n > feedcore.MaxPageSize) {
		return fail(apierr.BadInput, "%s must be between 1 and %d, got %d", arg, feedcore.MaxPageSize, *n)
	}
	return nil
}

// postConnection shapes a hydrated page of posts: the views of its posts
// as w asks, and of the reposters of the edges a repost put there (nil
// for an account deleted since the page was read).
func postConnection(ctx context.Context, ld *loaders.Loaders, p *feedcore.FeedPage, w postWants) *graph.PostConnection {
	posts, _ := edgePosts(p.Edges)
	views := postViews(ctx, ld, posts, w)
	edges := make([]*graph.PostEdge, len(p.Edges))
	for i, e := range p.Edges {
		edges[i] = &graph.PostEdge{Cursor: e.Cursor, Node: views[i]}
		if e.Repost != nil {
			at := e.Repost.CreatedAt
			edges[i].RepostedAt = &at
			if w.repostedBy {
				u, _ := ld.User(ctx, e.Repost.Author) // hydrated with the page: no read
				edges[i].RepostedBy = userView(ctx, ld, u, w.repostedByWants)
			}
		}
	}
	return &graph.PostConnection{
		Edges: edges,
		PageInfo: &graph.PageInfo{
			HasNextPage:     p.HasNext,
			HasPreviousPage: p.HasPrevious,
			StartCursor:     nonEmpty(p.StartCursor),
			EndCursor:       nonEmpty(p.EndCursor),
		},
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// nonEmpty maps "" to null for optional string fields.
func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
