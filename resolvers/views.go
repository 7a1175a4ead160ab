package resolvers

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype/inline"
	"github.com/feedd/feedd/gqltype/view"
	"github.com/feedd/feedd/loaders"
)

// Views: what a response shows of a post, a user or a live session is
// built here, from the request's loaders, as the selection asks, before
// the executor reads it (see package view). Every builder asks the loaders
// for all it needs first and gets it after, so what a page's hydration
// primed costs a map lookup, and what it did not is read in one batch per
// kind, however many objects there are.

// userAsk is what was asked of the loaders for one user's view.
type userAsk struct {
	w         userWants
	counts    loaders.Future[feedcore.GraphCounts]
	following loaders.Future[bool]
	relation  loaders.Future[feedcore.RelationFlags]
}

func askUser(ctx context.Context, ld *loaders.Loaders, id feedcore.ID, w userWants) userAsk {
	a := userAsk{w: w}
	if w.graphCounts {
		a.counts = ld.GraphCounts(ctx, id)
	}
	if w.following {
		a.following = ld.Following(ctx, id)
	}
	if w.relations {
		a.relation = ld.Relation(ctx, id)
	}
	return a
}

// view is u's view with what a asked for.
func (a userAsk) view(u *feedcore.User) *view.User {
	v := &view.User{User: u}
	if a.w.graphCounts {
		v.Counts = view.ReadOf(a.counts.Get())
	}
	if a.w.following {
		v.Following = view.ReadOf(a.following.Get())
	}
	if a.w.relations {
		v.Relation = view.ReadOf(a.relation.Get())
	}
	return v
}

// userViews are the views of users (profiles already read) as w asks.
func userViews(ctx context.Context, ld *loaders.Loaders, users []*feedcore.User, w userWants) []*view.User {
	asks := make([]userAsk, len(users))
	for i, u := range users {
		asks[i] = askUser(ctx, ld, u.ID, w)
	}
	out := make([]*view.User, len(users))
	for i, u := range users {
		out[i] = asks[i].view(u)
	}
	return out
}

// userView is the view of one user as w asks; nil for nil.
func userView(ctx context.Context, ld *loaders.Loaders, u *feedcore.User, w userWants) *view.User {
	if u == nil {
		return nil
	}
	return userViews(ctx, ld, []*feedcore.User{u}, w)[0]
}

// profileAsk is what was asked for a user shown inside another object (a
// post's author, a session's anchor): the profile and the user's view.
type profileAsk struct {
	id      feedcore.ID
	profile loaders.Future[*feedcore.User]
	user    userAsk
}

func askProfile(ctx context.Context, ld *loaders.Loaders, id feedcore.ID, w userWants) profileAsk {
	return profileAsk{id: id, profile: ld.StartUser(ctx, id), user: askUser(ctx, ld, id, w)}
}

// read is the user's view, or missing() when the user has no profile.
// Views of the same user share one through seen.
func (a profileAsk) read(seen map[feedcore.ID]*view.User, missing func() error) view.Read[*view.User] {
	if v := seen[a.id]; v != nil {
		return view.Known(v)
	}
	u, err := a.profile.Get()
	if err == nil && u == nil {
		err = missing()
	}
	if err != nil {
		return view.ReadOf[*view.User](nil, err)
	}
	v := a.user.view(u)
	seen[a.id] = v
	return view.Known(v)
}

// postAsk is what was asked of the loaders for one post's view.
type postAsk struct {
	author                     profileAsk
	counts                     loaders.Future[feedcore.PostCounts]
	liked, reposted, favorited loaders.Future[bool]
}

// postViews are the views of posts as w asks.
func postViews(ctx context.Context, ld *loaders.Loaders, posts []*feedcore.Post, w postWants) []*view.Post {
	asks := make([]postAsk, len(posts))
	for i, p := range posts {
		a := &asks[i]
		if w.author {
			a.author = askProfile(ctx, ld, p.Author, w.authorWants)
		}
		if w.counts {
			a.counts = ld.PostCounts(ctx, p.ID)
		}
		if w.liked {
			a.liked = ld.Liked(ctx, p.ID)
		}
		if w.reposted {
			a.reposted = ld.Reposted(ctx, p.ID)
		}
		if w.favorited {
			a.favorited = ld.Favorited(ctx, p.ID)
		}
	}
	out := make([]*view.Post, len(posts))
	seen := map[feedcore.ID]*view.User{}
	for i, p := range posts {
		a, v := &asks[i], &view.Post{Post: p}
		if w.author {
			v.Author = a.author.read(seen, func() error {
				return fail(apierr.NotFound, "the author of post %d (user %d) has no profile", p.ID, p.Author)
			})
		}
		if w.counts {
			v.Counts = view.ReadOf(a.counts.Get())
		}
		if w.liked {
			v.Liked = view.ReadOf(a.liked.Get())
		}
		if w.reposted {
			v.Reposted = view.ReadOf(a.reposted.Get())
		}
		if w.favorited {
			v.Favorited = view.ReadOf(a.favorited.Get())
		}
		out[i] = v
	}
	if w.parent != nil {
		parentViews(ctx, ld, out, *w.parent)
	}
	return out
}

// parentViews sets each view's Parent, as w asks of the parents: the
// parents are read in one batch, then their authors' relations to the
// viewer in another (a page's hydration primed both), then their views in
// one more, however many replies there are. A reply's parent is null when
// it was deleted, is a repost record, or its author and the viewer are
// apart (a block, either way).
func parentViews(ctx context.Context, ld *loaders.Loaders, vs []*view.Post, w postWants) {
	posts := make([]loaders.Future[*feedcore.Post], len(vs))
	for i, v := range vs {
		v.Parent = view.Known[*view.Post](nil)
		if v.Post.ReplyTo != 0 {
			posts[i] = ld.StartPost(ctx, v.Post.ReplyTo)
		}
	}
	parents := make([]*feedcore.Post, len(vs))
	relations := make([]loaders.Future[feedcore.RelationFlags], len(vs))
	for i, v := range vs {
		if v.Post.ReplyTo == 0 {
			continue
		}
		p, err := posts[i].Get()
		switch {
		case err != nil:
			v.Parent = view.ReadOf[*view.Post](nil, err)
		case p != nil && !p.Deleted && !p.IsRepost():
			parents[i], relations[i] = p, ld.Relation(ctx, p.Author)
		}
	}
	var shown []*feedcore.Post
	var at []int
	for i, p := range parents {
		if p == nil {
			continue
		}
		f, err := relations[i].Get()
		switch {
		case err != nil:
			vs[i].Parent = view.ReadOf[*view.Post](nil, err)
		case f.Forbidden() == nil:
			shown, at = append(shown, p), append(at, i)
		}
	}
	for j, pv := range postViews(ctx, ld, shown, w) {
		vs[at[j]].Parent = view.Known(pv)
	}
}

// postView is the view of one post as w asks; nil for nil.
func postView(ctx context.Context, ld *loaders.Loaders, p *feedcore.Post, w postWants) *view.Post {
	if p == nil {
		return nil
	}
	return postViews(ctx, ld, []*feedcore.Post{p}, w)[0]
}

// sessionViews are the views of live sessions, with their anchors when
// anchor is set (as aw asks).
func sessionViews(ctx context.Context, ld *loaders.Loaders, ls []*feedcore.LiveSession, anchor bool, aw userWants) []*view.LiveSession {
	asks := make([]profileAsk, len(ls))
	if anchor {
		for i, l := range ls {
			asks[i] = askProfile(ctx, ld, l.Anchor, aw)
		}
	}
	out := make([]*view.LiveSession, len(ls))
	seen := map[feedcore.ID]*view.User{}
	for i, l := range ls {
		v := &view.LiveSession{Session: l}
		if anchor {
			v.Anchor = asks[i].read(seen, func() error {
				return fail(apierr.NotFound, "the anchor of live session %d (user %d) has no profile", l.ID, l.Anchor)
			})
		}
		out[i] = v
	}
	return out
}

// sessionView is the view of one live session as the current field's
// selection (sel) asks; nil for nil.
func sessionView(ctx context.Context, ld *loaders.Loaders, l *feedcore.LiveSession, sel []ast.SelectionSet) *view.LiveSession {
	if l == nil {
		return nil
	}
	anchor, aw := sessionWantsIn(ctx, sel)
	return sessionViews(ctx, ld, []*feedcore.LiveSession{l}, anchor, aw)[0]
}

// here is the current field's own selection; sub, the selections of its
// subfield name (a payload's post or user).
func here(ctx context.Context) []ast.SelectionSet {
	if fc := graphql.GetFieldContext(ctx); fc != nil && fc.Field.Field != nil {
		return []ast.SelectionSet{fc.Field.Selections}
	}
	return nil
}

func sub(ctx context.Context, name string) []ast.SelectionSet {
	if !graphql.HasOperationContext(ctx) || graphql.GetFieldContext(ctx) == nil {
		return nil
	}
	var out []ast.SelectionSet
	for _, f := range inline.CollectFieldsCtx(ctx, nil) {
		if f.Name == name {
			out = append(out, f.Selections)
		}
	}
	return out
}

// payloadPost is the view of a mutation payload's post, as the payload's
// selection asks.
func (r *Resolver) payloadPost(ctx context.Context, p *feedcore.Post) *view.Post {
	return postView(ctx, r.loaders(ctx), p, postWantsIn(ctx, sub(ctx, "post")))
}

// payloadUser is the view of a mutation payload's user, as the payload's
// selection asks.
func (r *Resolver) payloadUser(ctx context.Context, u *feedcore.User) *view.User {
	return userView(ctx, r.loaders(ctx), u, userWantsIn(ctx, sub(ctx, "user")))
}
