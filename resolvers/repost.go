package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/loaders"
)

func (r *mutationResolver) Repost(ctx context.Context, id string) (*graph.RepostPayload, error) {
	return r.repost(ctx, id, r.Svc.Repost)
}

func (r *mutationResolver) UndoRepost(ctx context.Context, id string) (*graph.RepostPayload, error) {
	return r.repost(ctx, id, r.Svc.UndoRepost)
}

// repost runs op (Repost or UndoRepost); the payload's viewerHasReposted
// is the one the change left, and its counters are read after it.
func (r *mutationResolver) repost(ctx context.Context, id string, op func(context.Context, feedcore.ID, feedcore.ID) (*feedcore.RepostResult, error)) (*graph.RepostPayload, error) {
	res, err := mutate(ctx, r.Resolver, object{"id", id, gqltype.Post}, op)
	if err != nil {
		return nil, err
	}
	r.loaders(ctx).PrimeReposted(res.Post.ID, res.Reposted)
	return &graph.RepostPayload{Post: res.Post}, nil
}

// ViewerHasReposted is false for anonymous callers.
func (r *postResolver) ViewerHasReposted(ctx context.Context, p *feedcore.Post) (bool, error) {
	return r.loaders(ctx).Reposted(ctx, p.ID)
}

// setReposters sets repostedBy on the edges of conn that page's reposts
// put there, from the profiles hydrated with the page.
func setReposters(ctx context.Context, ld *loaders.Loaders, page *feedcore.FeedPage, conn *graph.PostConnection) error {
	for i, e := range page.Edges {
		if e.Repost == nil {
			continue
		}
		u, err := ld.User(ctx, e.Repost.Author)
		if err != nil {
			return err
		}
		conn.Edges[i].RepostedBy = u // nil for an account deleted since the page was read
	}
	return nil
}
