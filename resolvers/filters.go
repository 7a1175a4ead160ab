package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/graph"
)

// Keyword filters. feedcore decides everything (the keyword's length, an
// end in the past, the limit, whose filter an id is); these resolvers
// decode, call it and shape the payload.

// AddKeywordFilter takes wholeWord null as absent: true.
func (r *mutationResolver) AddKeywordFilter(ctx context.Context, input graph.AddKeywordFilterInput) (*graph.KeywordFilterPayload, error) {
	f, err := mutate(ctx, r.Resolver, object{}, func(ctx context.Context, viewer, _ feedcore.ID) (*feedcore.KeywordFilter, error) {
		return r.Svc.AddKeywordFilter(ctx, feedcore.KeywordFilter{User: viewer, Keyword: input.Keyword,
			WholeWord: input.WholeWord == nil || *input.WholeWord, ExpiresAt: input.ExpiresAt})
	})
	if err != nil {
		return nil, err
	}
	return &graph.KeywordFilterPayload{Filter: f}, nil
}

func (r *mutationResolver) RemoveKeywordFilter(ctx context.Context, id string) (*graph.RemoveKeywordFilterPayload, error) {
	fid, err := mutate(ctx, r.Resolver, object{"id", id, gqltype.KeywordFilter}, returningID(r.Svc.RemoveKeywordFilter))
	if err != nil {
		return nil, err
	}
	return &graph.RemoveKeywordFilterPayload{RemovedFilterID: gqltype.Encode(gqltype.KeywordFilter, fid)}, nil
}

func (r *queryResolver) KeywordFilters(ctx context.Context) ([]*feedcore.KeywordFilter, error) {
	viewer, err := r.viewerID(ctx)
	if err != nil {
		return nil, err
	}
	fs, err := r.Svc.KeywordFilters(ctx, viewer)
	if err != nil {
		return nil, err
	}
	out := make([]*feedcore.KeywordFilter, len(fs))
	for i := range fs {
		out[i] = &fs[i]
	}
	return out, nil
}

// keywordFilterNode is what node(id:) answers for a KeywordFilter id: the
// viewer's own filter, else NOT_FOUND (anonymous callers have none).
func (r *queryResolver) keywordFilterNode(ctx context.Context, id feedcore.ID) (gqltype.Node, error) {
	f, err := r.Svc.KeywordFilter(ctx, optionalViewer(ctx), id)
	return node(f, f != nil, err)
}
