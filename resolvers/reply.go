package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/gqltype/view"
	"github.com/feedd/feedd/graph"
)

// Replies pages p's replies, oldest first, hydrated as a list of posts is.
func (r *postResolver) Replies(ctx context.Context, p *view.Post, first *int, after *string) (*graph.PostConnection, error) {
	if err := pageSize("first", first); err != nil {
		return nil, err
	}
	page, err := r.Svc.Replies(ctx, optionalViewer(ctx), p.Post.ID, deref(first), deref(after))
	if err != nil {
		return nil, err
	}
	return r.postList(ctx, page, false)
}

// replyTo decodes PublishPostInput.replyTo: 0 when absent.
func replyTo(id *string) (feedcore.ID, error) {
	if id == nil {
		return 0, nil
	}
	return decodeID("replyTo", *id, gqltype.Post)
}
