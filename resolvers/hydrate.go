package resolvers

import (
	"context"
	"slices"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype/inline"
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
	counts, liked, reposted, author, favorited bool
	authorWants                                userWants
	// repostedBy: the edges ask who reposted their post, and what of them.
	repostedBy      bool
	repostedByWants userWants
	// parent: what the posts' replyTo asks of their parents; nil when it
	// is not selected.
	parent *postWants
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
	for _, edges := range inline.CollectFieldsCtx(ctx, nil) {
		if edges.Name != "edges" {
			continue
		}
		for _, node := range inline.CollectFields(op, edges.Selections, []string{edgeType}) {
			if node.Name == "node" {
				out = append(out, node.Selections)
			}
		}
	}
	return out
}

func wantsOfUser(op *graphql.OperationContext, sel ast.SelectionSet, w *userWants) {
	for _, f := range inline.CollectFields(op, sel, userTypes) {
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

// edgeFields returns the fields selected on the edges of the connection
// the current field resolves to.
func edgeFields(ctx context.Context, edgeType string) []graphql.CollectedField {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return nil
	}
	op := graphql.GetOperationContext(ctx)
	var out []graphql.CollectedField
	for _, edges := range inline.CollectFieldsCtx(ctx, nil) {
		if edges.Name == "edges" {
			out = append(out, inline.CollectFields(op, edges.Selections, []string{edgeType})...)
		}
	}
	return out
}

// postPageWants is what the posts of a page (followingFeed, the lists of
// posts) are asked for.
func postPageWants(ctx context.Context) postWants {
	var w postWants
	for _, f := range edgeFields(ctx, "PostEdge") {
		if f.Name == "repostedBy" {
			w.repostedBy = true
			wantsOfUser(graphql.GetOperationContext(ctx), f.Selections, &w.repostedByWants)
		}
	}
	w.merge(postWantsIn(ctx, edgeNodes(ctx, "PostEdge")))
	return w
}

// merge adds what o asks to w.
func (w *postWants) merge(o postWants) {
	w.counts, w.liked, w.favorited, w.reposted = w.counts || o.counts, w.liked || o.liked, w.favorited || o.favorited, w.reposted || o.reposted
	w.author = w.author || o.author
	w.authorWants = w.authorWants.or(o.authorWants)
	if o.parent != nil {
		if w.parent == nil {
			w.parent = &postWants{}
		}
		w.parent.merge(*o.parent)
	}
}

func (w userWants) or(o userWants) userWants {
	return userWants{w.graphCounts || o.graphCounts, w.following || o.following, w.relations || o.relations}
}

// postWantsIn is what selections on a Post ask of it.
func postWantsIn(ctx context.Context, sels []ast.SelectionSet) postWants {
	var w postWants
	if len(sels) == 0 {
		return w
	}
	op := graphql.GetOperationContext(ctx)
	var parents []ast.SelectionSet
	for _, sel := range sels {
		for _, f := range inline.CollectFields(op, sel, postTypes) {
			switch f.Name {
			case "counts":
				w.counts = true
			case "viewerHasLiked":
				w.liked = true
			case "viewerHasFavorited":
				w.favorited = true
			case "viewerHasReposted":
				w.reposted = true
			case "replyTo":
				parents = append(parents, f.Selections)
			case "author":
				w.author = true
				wantsOfUser(op, f.Selections, &w.authorWants)
			}
		}
	}
	if len(parents) > 0 {
		parent := postWantsIn(ctx, parents)
		w.parent = &parent
	}
	return w
}

// userWantsIn is what selections on a User ask of it.
func userWantsIn(ctx context.Context, sels []ast.SelectionSet) userWants {
	var w userWants
	for _, sel := range sels {
		wantsOfUser(graphql.GetOperationContext(ctx), sel, &w)
	}
	return w
}

// userPageWants is what the users of a user list page are asked for.
func userPageWants(ctx context.Context) userWants {
	return userWantsIn(ctx, edgeNodes(ctx, "UserEdge"))
}

// sessionWantsIn is what selections on a LiveSession ask of its anchor.
func sessionWantsIn(ctx context.Context, sels []ast.SelectionSet) (anchor bool, aw userWants) {
	for _, sel := range sels {
		op := graphql.GetOperationContext(ctx)
		for _, f := range inline.CollectFields(op, sel, sessionTypes) {
			if f.Name == "anchor" {
				anchor = true
				wantsOfUser(op, f.Selections, &aw)
			}
		}
	}
	return anchor, aw
}

// sessionPageWants is what the anchors of a liveFeed page are asked for.
func sessionPageWants(ctx context.Context) (anchor bool, aw userWants) {
	return sessionWantsIn(ctx, edgeNodes(ctx, "LiveSessionEdge"))
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

// hydratePosts primes the loaders with the posts of a page of viewer's
// followingFeed and with everything the page asks of them (and of the
// reposters of its reposts), read in one round trip, with the viewer's
// profile; what the page's Alongside (hydrateShown) read is not read
// again, and a page it read all of costs no round trip here.
func (r *Resolver) hydratePosts(ctx context.Context, ld *loaders.Loaders, edges []feedcore.FeedEdge, w postWants) error {
	posts, reposters := edgePosts(edges)
	ld.PrimePosts(posts...)
	followed := make(map[feedcore.ID]bool, len(edges))
	for _, e := range edges {
		if e.Repost != nil {
			followed[e.Repost.Author] = true
		} else {
			followed[e.Post.Author] = true
		}
	}
	return ld.HydrateUnprimed(ctx, pageRequest(ld, refsOf(posts), reposters, followed, w))
}

// hydrateShown is hydratePosts for what a page may show, as the page's
// read knows it before reading its items or their links (feedcore.Shown):
// run alongside that read, it primes the loaders in the same round trip,
// and hydratePosts then reads only what the page shows beyond it. A
// second call reads only what the first did not.
func (r *Resolver) hydrateShown(ctx context.Context, ld *loaders.Loaders, shown []feedcore.Shown, w postWants) error {
	var reposters []feedcore.ID
	followed := make(map[feedcore.ID]bool, len(shown))
	for _, s := range shown {
		if s.Reposter != 0 {
			reposters, followed[s.Reposter] = append(reposters, s.Reposter), true
		} else {
			followed[s.Author] = true
		}
	}
	return ld.HydrateUnprimed(ctx, pageRequest(ld, shown, reposters, followed, w))
}

// pageRequest is the read of what w asks of a followingFeed page's posts
// refs and reposters, with the viewer's profile. The page read kept only
// items by the viewer or by accounts the viewer follows
// (feedcore.FollowingFeed filters out the rest), so whether the viewer
// follows followed (the authors of its posts and its reposters) is
// primed without a read (usersRequest already left the viewer out); the
// authors of reposted posts are read.
func pageRequest(ld *loaders.Loaders, refs []feedcore.Shown, reposters []feedcore.ID, followed map[feedcore.ID]bool, w postWants) feedcore.HydrateRequest {
	req := refsRequest(ld.Viewer(), refs, reposters, w)
	withViewer(&req)
	var known, unknown []feedcore.ID
	for _, id := range req.Following {
		if followed[id] {
			known = append(known, id)
		} else {
			unknown = append(unknown, id)
		}
	}
	ld.PrimeFollowing(true, known...)
	req.Following = unknown
	return req
}

// edgePosts are the posts a page's edges show, and the reposters of
// those a repost put there.
func edgePosts(edges []feedcore.FeedEdge) (posts []*feedcore.Post, reposters []feedcore.ID) {
	posts = make([]*feedcore.Post, len(edges))
	for i, e := range edges {
		posts[i] = e.Post
		if e.Repost != nil {
			reposters = append(reposters, e.Repost.Author)
		}
	}
	return posts, reposters
}

// refsOf is what hydration needs of posts (feedcore.Shown): their IDs,
// authors and what they reply to.
func refsOf(posts []*feedcore.Post) []feedcore.Shown {
	refs := make([]feedcore.Shown, len(posts))
	for i, p := range posts {
		refs[i] = feedcore.Shown{Post: p.ID, Author: p.Author, ReplyTo: p.ReplyTo, ReplyToAuthor: p.ReplyToAuthor}
	}
	return refs
}

// postsRequest primes the loaders with posts and returns the read of
// what w asks of them and of the reposters that put them on the page.
func postsRequest(ld *loaders.Loaders, posts []*feedcore.Post, reposters []feedcore.ID, w postWants) feedcore.HydrateRequest {
	ld.PrimePosts(posts...)
	return refsRequest(ld.Viewer(), refsOf(posts), reposters, w)
}

// refsRequest is the read of what w asks of posts refs, for viewer, and
// of the reposters that put them on the page.
func refsRequest(viewer feedcore.ID, refs []feedcore.Shown, reposters []feedcore.ID, w postWants) feedcore.HydrateRequest {
	ids := make([]feedcore.ID, len(refs))
	for i, p := range refs {
		ids[i] = p.Post
	}
	req := feedcore.HydrateRequest{Viewer: viewer}
	if w.counts {
		req.Counts = ids
	}
	if w.liked && req.Viewer != 0 {
		req.Liked = ids
	}
	if w.favorited && req.Viewer != 0 {
		req.Favorited = ids
	}
	if w.reposted && req.Viewer != 0 {
		req.Reposted = ids
	}
	var users []feedcore.ID
	var uw userWants
	if w.author {
		users, uw = distinctAuthors(refs, func(p feedcore.Shown) feedcore.ID { return p.Author }), w.authorWants
	}
	if w.repostedBy {
		users = append(users, reposters...)
		uw = uw.or(w.repostedByWants)
	}
	if len(users) > 0 {
		usersRequest(&req, distinctAuthors(users, func(id feedcore.ID) feedcore.ID { return id }), uw)
	}
	if w.parent != nil {
		replyParents(&req, refs, w.parent.author)
	}
	return req
}

// replyParents adds to req the parents of the replies among posts (read
// through the client-side cache) and their authors' relations to the
// viewer (a block hides a parent), and, with authors, their profiles.
func replyParents(req *feedcore.HydrateRequest, refs []feedcore.Shown, authors bool) {
	var parents, who []feedcore.ID
	for _, p := range refs {
		if p.ReplyTo != 0 {
			parents, who = append(parents, p.ReplyTo), append(who, p.ReplyToAuthor)
		}
	}
	who = othersThan(req.Viewer, distinctAuthors(who, func(id feedcore.ID) feedcore.ID { return id }))
	req.Posts = parents
	req.Relations = append(slices.Clip(req.Relations), who...)
	if authors {
		req.Users = append(slices.Clip(req.Users), who...)
	}
}

// withViewer adds the viewer's profile to req's reads: a page only the
// viewer sees checks so that the viewer exists, at no round trip of its
// own.
func withViewer(req *feedcore.HydrateRequest) {
	if !slices.Contains(req.Users, req.Viewer) {
		req.Users = append(slices.Clip(req.Users), req.Viewer)
	}
}

// hydrateListPosts primes the loaders with posts of a list (favorites, an
// author's posts) and with everything the page asks of them, read in one
// round trip (with the viewer's profile when viewer is set; none when it
// asks for nothing beyond the posts).
func (r *Resolver) hydrateListPosts(ctx context.Context, ld *loaders.Loaders, edges []feedcore.FeedEdge, w postWants, viewer bool) error {
	posts, reposters := edgePosts(edges)
	req := postsRequest(ld, posts, reposters, w)
	if viewer {
		withViewer(&req)
	} else if len(posts) == 0 {
		return nil
	}
	return ld.Hydrate(ctx, req)
}

// hydrateSessions primes the loaders with sessions and with their anchors
// as the page asks for them, read in one round trip.
func (r *Resolver) hydrateSessions(ctx context.Context, ld *loaders.Loaders, ls []*feedcore.LiveSession, anchor bool, aw userWants) error {
	ld.PrimeLiveSessions(ls...)
	if !anchor || len(ls) == 0 {
		return nil
	}
	req := feedcore.HydrateRequest{Viewer: ld.Viewer()}
	usersRequest(&req, distinctAuthors(ls, func(l *feedcore.LiveSession) feedcore.ID { return l.Anchor }), aw)
	return ld.Hydrate(ctx, req)
}

// distinctAuthors lists the distinct ids of of(x) for xs, in first-seen order.
func distinctAuthors[T any](xs []T, of func(T) feedcore.ID) []feedcore.ID {
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
