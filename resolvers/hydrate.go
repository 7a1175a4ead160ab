package resolvers

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/loaders"
)

// loaders returns the request's loaders; outside a server request (a
// resolver called directly) it makes loaders for this call alone.
func (r *Resolver) loaders(ctx context.Context) *loaders.Loaders {
	if l := loaders.FromContext(ctx); l != nil {
		return l
	}
	return loaders.New(r.Svc, optionalViewer(ctx))
}

// Types a selection on a Post, User or LiveSession may be spread on.
var (
	postTypes    = []string{"Post", "Node"}
	userTypes    = []string{"User", "Node"}
	sessionTypes = []string{"LiveSession", "Node"}
)

// userWants is what a selection on User reads besides the profile.
type userWants struct{ graphCounts, following, relations bool }

// postWants is what a selection on Post reads besides the post.
type postWants struct {
	counts, liked, author bool
	authorWants           userWants
}

// edgeNodes returns the selections on the node of every edge of the
// connection the current field resolves to (followingFeed, liveFeed, the
// user lists).
func edgeNodes(ctx context.Context, edgeType string) []ast.SelectionSet {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return nil
	}
	op := graphql.GetOperationContext(ctx)
	var out []ast.SelectionSet
	for _, edges := range graphql.CollectFieldsCtx(ctx, nil) {
		if edges.Name != "edges" {
			continue
		}
		for _, node := range graphql.CollectFields(op, edges.Selections, []string{edgeType}) {
			if node.Name == "node" {
				out = append(out, node.Selections)
			}
		}
	}
	return out
}

func wantsOfUser(op *graphql.OperationContext, sel ast.SelectionSet, w *userWants) {
	for _, f := range graphql.CollectFields(op, sel, userTypes) {
		switch f.Name {
		case "followerCount", "followingCount":
			w.graphCounts = true
		case "viewerIsFollowing":
			w.following = true
		case "viewerHasBlocked", "blocksViewer", "viewerHasMuted", "viewerMuteExpiresAt", "viewerHidesMyPosts":
			w.relations = true
		}
	}
}

// postPageWants is what the posts of a followingFeed page are asked for.
func postPageWants(ctx context.Context) postWants {
	var w postWants
	for _, sel := range edgeNodes(ctx, "PostEdge") {
		op := graphql.GetOperationContext(ctx)
		for _, f := range graphql.CollectFields(op, sel, postTypes) {
			switch f.Name {
			case "counts":
				w.counts = true
			case "viewerHasLiked":
				w.liked = true
			case "author":
				w.author = true
				wantsOfUser(op, f.Selections, &w.authorWants)
			}
		}
	}
	return w
}

// userPageWants is what the users of a user list page are asked for.
func userPageWants(ctx context.Context) userWants {
	var w userWants
	for _, sel := range edgeNodes(ctx, "UserEdge") {
		wantsOfUser(graphql.GetOperationContext(ctx), sel, &w)
	}
	return w
}

// sessionPageWants is what the anchors of a liveFeed page are asked for.
func sessionPageWants(ctx context.Context) (anchor bool, aw userWants) {
	for _, sel := range edgeNodes(ctx, "LiveSessionEdge") {
		op := graphql.GetOperationContext(ctx)
		for _, f := range graphql.CollectFields(op, sel, sessionTypes) {
			if f.Name == "anchor" {
				anchor = true
				wantsOfUser(op, f.Selections, &aw)
			}
		}
	}
	return anchor, aw
}

// usersRequest adds to req what w asks of users ids.
func usersRequest(req *feedcore.HydrateRequest, ids []feedcore.ID, w userWants) {
	req.Users = ids
	if w.graphCounts {
		req.GraphCounts = ids
	}
	if w.following {
		req.Following = othersThan(req.Viewer, ids)
	}
	if w.relations {
		req.Relations = othersThan(req.Viewer, ids)
	}
}

// othersThan is ids without viewer: the viewer's flags about itself are
// false without a read.
func othersThan(viewer feedcore.ID, ids []feedcore.ID) []feedcore.ID {
	var out []feedcore.ID
	for _, id := range ids {
		if id != viewer {
			out = append(out, id)
		}
	}
	return out
}

// hydratePosts primes the loaders with posts and with everything the page
// asks of them, read in one round trip. posts are a page of viewer's
// followingFeed: the viewer's profile is read in the same round trip, and
// every author is the viewer or someone the viewer follows.
func (r *Resolver) hydratePosts(ctx context.Context, ld *loaders.Loaders, posts []*feedcore.Post, w postWants) error {
	ld.PrimePosts(posts...)
	ids := make([]feedcore.ID, len(posts))
	for i, p := range posts {
		ids[i] = p.ID
	}
	req := feedcore.HydrateRequest{Viewer: ld.Viewer()}
	if w.counts {
		req.Counts = ids
	}
	if w.liked && req.Viewer != 0 {
		req.Liked = ids
	}
	if w.author {
		usersRequest(&req, distinctAuthors(posts, func(p *feedcore.Post) feedcore.ID { return p.Author }), w.authorWants)
	}
	if !slices.Contains(req.Users, req.Viewer) {
		req.Users = append(slices.Clip(req.Users), req.Viewer)
	}
	// The page read kept only posts by the viewer or by accounts the
	// viewer follows (feedcore.FollowingFeed filters out the rest), so
	// whether the viewer follows the authors is known without a read of
	// its own (usersRequest already left the viewer out).
	ld.PrimeFollowing(true, req.Following...)
	req.Following = nil
	return ld.Hydrate(ctx, req)
}

// hydrateSessions primes the loaders with sessions and with their anchors
// as the page asks for them, read in one round trip.
func (r *Resolver) hydrateSessions(ctx context.Context, ld *loaders.Loaders, ls []*feedcore.LiveSession) error {
	ld.PrimeLiveSessions(ls...)
	anchor, aw := sessionPageWants(ctx)
	if !anchor || len(ls) == 0 {
		return nil
	}
	req := feedcore.HydrateRequest{Viewer: ld.Viewer()}
	usersRequest(&req, distinctAuthors(ls, func(l *feedcore.LiveSession) feedcore.ID { return l.Anchor }), aw)
	return ld.Hydrate(ctx, req)
}

// distinctAuthors lists the distinct ids of of(x) for xs, in first-seen order.
func distinctAuthors[T any](xs []*T, of func(*T) feedcore.ID) []feedcore.ID {
	seen := make(map[feedcore.ID]bool, len(xs))
	var out []feedcore.ID
	for _, x := range xs {
		if id := of(x); !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
