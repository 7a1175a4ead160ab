package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/gqltype/view"
	"github.com/feedd/feedd/graph"
)

// ReplyTo is the parent through the request's loaders (a feed page primed
// it, with its author's relation to the viewer); null when p is no reply,
// when the parent was deleted, and across a block.
func (r *postResolver) ReplyTo(ctx context.Context, p *view.Post) (*view.Post, error) {
	if p.Post.ReplyTo == 0 {
		return nil, nil
	}
	ld := r.loaders(ctx)
	parent, err := ld.Post(ctx, p.Post.ReplyTo)
	if err != nil || parent == nil || parent.Deleted || parent.IsRepost() {
		return nil, err
	}
	if f, err := ld.Relation(ctx, parent.Author).Get(); err != nil || f.Forbidden() != nil {
		return nil, err
	}
	return postView(ctx, ld, parent, postWantsIn(ctx, here(ctx))), nil
}

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
