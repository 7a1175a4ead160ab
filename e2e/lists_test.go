package e2e

import (
	"slices"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
)

// Favorites, author timelines and follower lists (issue 20), seen through
// the typed client.

// postPage reads one page of a list of posts.
type postPage func(first *int, after *string) (client.PostListFields, error)

// postsListed pages a list of posts to the end, n at a time, and returns
// the posts in list order, checking every cursor advances (pageAll) and
// no post repeats.
func postsListed(t *testing.T, n int, page postPage) []client.FavoritePostFields {
	t.Helper()
	var out []client.FavoritePostFields
	seen := map[string]bool{}
	pageAll(t, n, func(first *int, after *string) (client.PageInfoFields, error) {
		p, err := page(first, after)
		if len(p.Edges) > *first {
			t.Fatalf("asked for %d posts, got %d", *first, len(p.Edges))
		}
		for _, e := range p.Edges {
			if seen[e.Node.Id] {
				t.Fatalf("post %s repeated", e.Node.Id)
			}
			seen[e.Node.Id] = true
			out = append(out, e.Node.FavoritePostFields)
		}
		return p.PageInfo.PageInfoFields, err
	})
	return out
}

// ids are the posts' global ids.
func ids(ps []client.FavoritePostFields) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Id
	}
	return out
}

func favoritesList(t *testing.T, c graphql.Client) postPage {
	return func(first *int, after *string) (client.PostListFields, error) {
		r, err := client.Favorites(t.Context(), c, first, after)
		return r.GetFavorites().PostListFields, err
	}
}

func postsList(t *testing.T, c graphql.Client, handle string, replies *bool) postPage {
	return func(first *int, after *string) (client.PostListFields, error) {
		r, err := client.UserPosts(t.Context(), c, handle, first, after, replies)
		if r == nil || r.User == nil {
			return client.PostListFields{}, err
		}
		return r.User.Posts.PostListFields, err
	}
}

func followersList(t *testing.T, c graphql.Client, handle string) listPage {
	return func(first *int, after *string) (client.UserPageFields, error) {
		r, err := client.UserFollowers(t.Context(), c, handle, first, after)
		if r == nil || r.User == nil {
			return client.UserPageFields{}, err
		}
		return r.User.Followers.UserPageFields, err
	}
}

func followingList(t *testing.T, c graphql.Client, handle string) listPage {
	return func(first *int, after *string) (client.UserPageFields, error) {
		r, err := client.UserFollowing(t.Context(), c, handle, first, after)
		if r == nil || r.User == nil {
			return client.UserPageFields{}, err
		}
		return r.User.Following.UserPageFields, err
	}
}

// wantPostList asserts every page size lists exactly want.
func wantPostList(t *testing.T, what string, page postPage, want []string) {
	t.Helper()
	for _, n := range []int{1, 2, 20} {
		if got := ids(postsListed(t, n, page)); !slices.Equal(got, want) {
			t.Errorf("%s, first=%d: %v, want %v", what, n, got, want)
		}
	}
}

// wantUserList asserts every page size lists exactly want (handles).
func wantUserList(t *testing.T, what string, page listPage, want []string) {
	t.Helper()
	for _, n := range []int{1, 2, 20} {
		if got := listed(t, n, page); !slices.Equal(got, want) {
			t.Errorf("%s, first=%d: %v, want %v", what, n, got, want)
		}
	}
}

// TestFavorites: favoritePost is idempotent, unfavoritePost of what is
// not favorited changes nothing, the list is most recently favorited
// first, counts.favorites is everyone's and viewerHasFavorited the
// viewer's, a deleted post leaves the list, and a block refuses a
// favorite and leaves the author's posts out.
func TestFavorites(t *testing.T) {
	clk := &clock{}
	e := newEnv(t, feedcore.Options{Now: clk.now})
	e.users("ann", "bob", "cat")
	e.workers()
	ann, bob, cat := e.as(1), e.as(2), e.as(3)
	ctx := t.Context()
	p1, p2, p3 := publish(t, bob, "one"), publish(t, bob, "two"), publish(t, bob, "three")
	fav := func(c graphql.Client, id string, on bool) client.FavoritePostFields {
		t.Helper()
		clk.advance(time.Second)
		if on {
			return must(client.FavoritePost(ctx, c, id))(t).FavoritePost.Post.FavoritePostFields
		}
		return must(client.UnfavoritePost(ctx, c, id))(t).UnfavoritePost.Post.FavoritePostFields
	}
	for i, step := range []struct {
		c     graphql.Client
		post  string
		on    bool
		count int
	}{
		{ann, p1, true, 1}, {ann, p3, true, 1}, {ann, p1, true, 1}, {cat, p1, true, 2},
		{ann, p3, false, 0}, {ann, p3, false, 0}, {ann, p2, false, 0}, {ann, p3, true, 1},
	} {
		got := fav(step.c, step.post, step.on)
		if got.Id != step.post || got.Counts.Favorites != step.count || got.ViewerHasFavorited != step.on {
			t.Errorf("step %d: %s favorites=%d viewerHasFavorited=%v, want %s %d %v",
				i, got.Id, got.Counts.Favorites, got.ViewerHasFavorited, step.post, step.count, step.on)
		}
	}
	list := postsListed(t, 20, favoritesList(t, ann))
	if got := ids(list); !slices.Equal(got, []string{p3, p1}) {
		t.Fatalf("ann's favorites %v, want [p3 p1] (a favorite again keeps its time)", got)
	}
	for _, p := range list {
		if !p.ViewerHasFavorited {
			t.Errorf("post %s in the favorites without viewerHasFavorited", p.Id)
		}
	}
	wantPostList(t, "ann's favorites", favoritesList(t, ann), []string{p3, p1})
	wantPostList(t, "cat's favorites", favoritesList(t, cat), []string{p1})
	wantPostList(t, "bob's favorites", favoritesList(t, bob), nil)
	// counts.favorites is public; viewerHasFavorited is the viewer's.
	n := must(client.Node(ctx, bob, p1))(t).Node.(*client.NodeNodePost)
	if n.Counts.Favorites != 2 {
		t.Errorf("bob sees %d favorites on p1, want 2", n.Counts.Favorites)
	}
	if p := postsListed(t, 20, postsList(t, bob, "bob", nil)); p[2].Id != p1 || p[2].ViewerHasFavorited || p[2].Counts.Favorites != 2 {
		t.Errorf("p1 on bob's own list: %+v", p[2])
	}
	// A deleted post leaves the list.
	must(client.DeletePost(ctx, bob, p3))(t)
	wantPostList(t, "ann's favorites after a delete", favoritesList(t, ann), []string{p1})
	// Refusals.
	_, err := client.FavoritePost(ctx, e.anon(), p1)
	wantCode(t, "anonymous favorite", err, "UNAUTHENTICATED")
	_, err = client.Favorites(ctx, e.anon(), nil, nil)
	wantCode(t, "anonymous favorites", err, "UNAUTHENTICATED")
	_, err = client.FavoritePost(ctx, ann, "nope")
	wantCode(t, "bad id", err, "BAD_USER_INPUT")
	_, err = client.FavoritePost(ctx, ann, "999999")
	wantCode(t, "missing post", err, "NOT_FOUND")
	_, err = client.FavoritePost(ctx, ann, p3)
	wantCode(t, "deleted post", err, "NOT_FOUND")
	for _, first := range []int{0, -1, 101} {
		_, err = client.Favorites(ctx, ann, &first, nil)
		wantCode(t, "favorites with a bad first", err, "BAD_USER_INPUT")
	}
	// A block: the author's posts leave the list, a favorite is refused.
	must(client.BlockUser(ctx, bob, "1"))(t)
	forbidden(t, "favorite across a block", func() error { _, err := client.FavoritePost(ctx, ann, p2); return err }())
	wantPostList(t, "ann's favorites across a block", favoritesList(t, ann), nil)
	must(client.UnblockUser(ctx, bob, "1"))(t)
	wantPostList(t, "ann's favorites after the unblock", favoritesList(t, ann), []string{p1})
}

// TestUserPosts: an author's posts newest first, for anyone; deleted ones
// left out; empty across a block, for a viewer the author hides its
// posts from, and for a viewer muting the author.
func TestUserPosts(t *testing.T) {
	e := newEnv(t, feedcore.Options{})
	e.users("ann", "bob", "cat", "dan", "eve")
	e.workers()
	ann, bob, cat, dan, eve := e.as(1), e.as(2), e.as(3), e.as(4), e.as(5)
	ctx := t.Context()
	var want []string
	for _, text := range []string{"a", "b", "c", "d", "e"} {
		want = append(want, publish(t, bob, text))
	}
	publish(t, ann, "ann's")
	must(client.DeletePost(ctx, bob, want[2]))(t)
	want = slices.Delete(want, 2, 3)
	slices.Reverse(want)
	for name, c := range map[string]graphql.Client{"anonymous": e.anon(), "ann": ann, "bob": bob} {
		wantPostList(t, "bob's posts as "+name, postsList(t, c, "bob", nil), want)
		wantPostList(t, "bob's posts with replies as "+name, postsList(t, c, "bob", client.Ptr(true)), want)
	}
	must(client.BlockUser(ctx, bob, "3"))(t)       // bob blocks cat
	must(client.BlockUser(ctx, dan, "2"))(t)       // dan blocks bob
	must(client.HideMyPostsFrom(ctx, bob, "5"))(t) // bob hides from eve
	must(client.MuteUser(ctx, ann, "2", nil))(t)   // ann mutes bob
	wantPostList(t, "bob's posts as cat, blocked", postsList(t, cat, "bob", nil), nil)
	wantPostList(t, "bob's posts as dan, blocking", postsList(t, dan, "bob", nil), nil)
	wantPostList(t, "bob's posts as eve, hidden from", postsList(t, eve, "bob", nil), nil)
	wantPostList(t, "bob's posts as ann, muting", postsList(t, ann, "bob", nil), nil)
	if u, rel := relation(t, cat, "bob"); u.Handle != "bob" || !rel.BlocksViewer {
		t.Errorf("user(bob) as cat: %+v %+v, want found, blocksViewer", u, rel)
	}
	r := must(client.UserPosts(ctx, ann, "nobody", nil, nil, nil))(t)
	if r.User != nil {
		t.Errorf("user(nobody): %+v", r.User)
	}
	_, err := client.UserPosts(ctx, ann, "bob", client.Ptr(0), nil, nil)
	wantCode(t, "posts with first 0", err, "BAD_USER_INPUT")
}

// TestFollowerLists: followers and following, newest follow first, in
// the order follows were made (not by id); an unfollow leaves, a follow
// again comes first; blocks leave users out, the whole list across a
// block with its owner.
func TestFollowerLists(t *testing.T) {
	clk := &clock{}
	e := newEnv(t, feedcore.Options{Now: clk.now})
	e.users("ann", "bob", "cat", "dan", "eve")
	e.workers()
	ann, bob, cat, dan, eve := e.as(1), e.as(2), e.as(3), e.as(4), e.as(5)
	ctx := t.Context()
	for _, f := range []struct {
		c    graphql.Client
		whom string
	}{{dan, "2"}, {ann, "2"}, {cat, "2"}, {ann, "4"}, {ann, "3"}, {eve, "2"}} {
		clk.advance(time.Second)
		must(client.FollowUser(ctx, f.c, f.whom))(t)
	}
	wantUserList(t, "bob's followers", followersList(t, e.anon(), "bob"), []string{"eve", "cat", "ann", "dan"})
	wantUserList(t, "ann's following", followingList(t, bob, "ann"), []string{"cat", "dan", "bob"})
	clk.advance(time.Second)
	must(client.UnfollowUser(ctx, cat, "2"))(t)
	must(client.UnfollowUser(ctx, dan, "2"))(t)
	clk.advance(time.Second)
	must(client.FollowUser(ctx, dan, "2"))(t)
	wantUserList(t, "bob's followers after unfollows", followersList(t, ann, "bob"), []string{"dan", "eve", "ann"})
	// eve blocks ann: ann no longer sees eve among bob's followers, nor
	// any of eve's lists; cat, unrelated, sees them all.
	must(client.BlockUser(ctx, eve, "1"))(t)
	wantUserList(t, "bob's followers as ann", followersList(t, ann, "bob"), []string{"dan", "ann"})
	wantUserList(t, "bob's followers as cat", followersList(t, cat, "bob"), []string{"dan", "eve", "ann"})
	must(client.FollowUser(ctx, eve, "3"))(t)
	wantUserList(t, "eve's following as ann", followingList(t, ann, "eve"), nil)
	wantUserList(t, "eve's following as cat", followingList(t, cat, "eve"), []string{"cat", "bob"})
	// The list's users carry the viewer's flags.
	page := must(followersList(t, cat, "bob")(client.Ptr(20), nil))(t)
	if len(page.Edges) != 3 || page.Edges[0].Node.Handle != "dan" || page.Edges[0].Node.ViewerIsFollowing {
		t.Errorf("bob's followers as cat: %+v", page.Edges)
	}
}

// TestListsObeyMutesAndFilters: a mute takes the muted user's posts out
// of the viewer's favorites and the user's profile list (its profile
// still found, viewerHasMuted set) and the user out of follower lists,
// until unmuted; a keyword filter takes the posts it matches out of the
// favorites and an author's list (not the viewer's own), until removed.
// Every page size lists the same, filled past what it hides.
func TestListsObeyMutesAndFilters(t *testing.T) {
	clk := &clock{}
	e := newEnv(t, feedcore.Options{Now: clk.now})
	e.users("ann", "bob", "cat")
	e.workers()
	ann, bob, cat := e.as(1), e.as(2), e.as(3)
	ctx := t.Context()
	var posts []string
	for _, p := range []struct {
		c    graphql.Client
		text string
	}{{bob, "cats"}, {cat, "plain"}, {bob, "plain"}, {ann, "my cats"}, {cat, "more cats"}, {bob, "plain"}} {
		clk.advance(time.Second)
		posts = append(posts, publish(t, p.c, p.text))
	}
	for _, p := range posts {
		clk.advance(time.Second)
		must(client.FavoritePost(ctx, ann, p))(t)
	}
	must(client.FollowUser(ctx, bob, "3"))(t)
	must(client.FollowUser(ctx, ann, "3"))(t)
	all := slices.Clone(posts)
	slices.Reverse(all)
	wantPostList(t, "ann's favorites", favoritesList(t, ann), all)
	must(client.MuteUser(ctx, ann, "2", nil))(t)
	wantPostList(t, "ann's favorites, bob muted", favoritesList(t, ann), []string{posts[4], posts[3], posts[1]})
	wantPostList(t, "bob's posts as ann, muting", postsList(t, ann, "bob", nil), nil)
	wantUserList(t, "cat's followers as ann, muting bob", followersList(t, ann, "cat"), []string{"ann"})
	if u, rel := relation(t, ann, "bob"); u.Handle != "bob" || !rel.ViewerHasMuted {
		t.Errorf("user(bob) as ann, muting: %+v %+v, want found, viewerHasMuted", u, rel)
	}
	wantUserList(t, "cat's followers as cat", followersList(t, cat, "cat"), []string{"ann", "bob"})
	must(client.UnmuteUser(ctx, ann, "2"))(t)
	wantUserList(t, "cat's followers as ann, unmuted", followersList(t, ann, "cat"), []string{"ann", "bob"})
	f := must(client.AddKeywordFilter(ctx, ann, "cats", nil, nil))(t)
	wantPostList(t, "ann's favorites, filtering cats", favoritesList(t, ann), []string{posts[5], posts[3], posts[2], posts[1]})
	wantPostList(t, "bob's posts as ann, filtering cats", postsList(t, ann, "bob", nil), []string{posts[5], posts[2]})
	wantPostList(t, "bob's posts as cat", postsList(t, cat, "bob", nil), []string{posts[5], posts[2], posts[0]})
	wantPostList(t, "ann's own posts, filtering cats", postsList(t, ann, "ann", nil), []string{posts[3]})
	must(client.RemoveKeywordFilter(ctx, ann, f.AddKeywordFilter.Filter.Id))(t)
	wantPostList(t, "ann's favorites, the filter removed", favoritesList(t, ann), all)
}

// TestListCursorsAreBound: a cursor opens only the list it was minted
// for (kind, owner, includeReplies) and for the viewer it was minted for:
// anything else is INVALID_CURSOR, and each cursor works in its own list.
func TestListCursorsAreBound(t *testing.T) {
	e := newEnv(t, feedcore.Options{})
	e.users("ann", "bob", "cat")
	e.workers()
	ann, bob, cat := e.as(1), e.as(2), e.as(3)
	ctx := t.Context()
	for range 2 {
		publish(t, bob, "bob's")
		publish(t, cat, "cat's")
	}
	for _, p := range []string{publish(t, bob, "fav 1"), publish(t, bob, "fav 2")} {
		must(client.FavoritePost(ctx, ann, p))(t)
	}
	must(client.FollowUser(ctx, ann, "2"))(t)
	must(client.FollowUser(ctx, cat, "2"))(t)
	must(client.FollowUser(ctx, bob, "3"))(t)
	must(client.FollowUser(ctx, bob, "1"))(t)
	must(client.BlockUser(ctx, ann, "3"))(t)
	e.drain()
	one := client.Ptr(1)
	postCursor := func(p postPage) string {
		t.Helper()
		pg := must(p(one, nil))(t)
		if !pg.PageInfo.HasNextPage || pg.PageInfo.EndCursor == nil {
			t.Fatalf("no second page: %+v", pg.PageInfo)
		}
		return *pg.PageInfo.EndCursor
	}
	userCursor := func(p listPage) string {
		t.Helper()
		pg := must(p(one, nil))(t)
		if pg.PageInfo.EndCursor == nil {
			t.Fatalf("no cursor: %+v", pg.PageInfo)
		}
		return *pg.PageInfo.EndCursor
	}
	cursors := map[string]string{
		"ann's favorites":            postCursor(favoritesList(t, ann)),
		"bob's posts, as ann":        postCursor(postsList(t, ann, "bob", nil)),
		"bob's posts+replies, ann":   postCursor(postsList(t, ann, "bob", client.Ptr(true))),
		"bob's followers, as ann":    userCursor(followersList(t, ann, "bob")),
		"bob's following, as ann":    userCursor(followingList(t, ann, "bob")),
		"ann's feed":                 *must(client.FollowingFeed(ctx, ann, one, nil, nil, nil))(t).FollowingFeed.PageInfo.EndCursor,
		"ann's blocked users":        userCursor(blockedList(t, ann)),
		"not a cursor":               "bm90IGEgY3Vyc29y",
		"bob's posts, anonymous":     postCursor(postsList(t, e.anon(), "bob", nil)),
		"bob's followers, anonymous": userCursor(followersList(t, e.anon(), "bob")),
	}
	type open func(after string) error
	posts := func(p postPage) open {
		return func(after string) error { _, err := p(one, &after); return err }
	}
	users := func(p listPage) open {
		return func(after string) error { _, err := p(one, &after); return err }
	}
	lists := map[string]open{
		"ann's favorites":            posts(favoritesList(t, ann)),
		"cat's favorites":            posts(favoritesList(t, cat)),
		"bob's posts, as ann":        posts(postsList(t, ann, "bob", nil)),
		"bob's posts+replies, ann":   posts(postsList(t, ann, "bob", client.Ptr(true))),
		"cat's posts, as ann":        posts(postsList(t, ann, "cat", nil)),
		"bob's posts, as cat":        posts(postsList(t, cat, "bob", nil)),
		"bob's followers, as ann":    users(followersList(t, ann, "bob")),
		"bob's following, as ann":    users(followingList(t, ann, "bob")),
		"cat's followers, as ann":    users(followersList(t, ann, "cat")),
		"bob's followers, as cat":    users(followersList(t, cat, "bob")),
		"ann's blocked users":        users(blockedList(t, ann)),
		"bob's posts, anonymous":     posts(postsList(t, e.anon(), "bob", nil)),
		"bob's followers, anonymous": users(followersList(t, e.anon(), "bob")),
		"ann's feed": func(after string) error {
			_, err := client.FollowingFeed(ctx, ann, one, &after, nil, nil)
			return err
		},
	}
	for _, tc := range []struct{ cursor, list string }{
		{"ann's favorites", "bob's posts, as ann"},                 // another kind
		{"ann's favorites", "cat's favorites"},                     // another viewer
		{"ann's favorites", "ann's feed"},                          // a list's cursor on the feed
		{"ann's feed", "ann's favorites"},                          // the feed's on a list
		{"bob's posts, as ann", "cat's posts, as ann"},             // another author
		{"bob's posts, as ann", "bob's posts, as cat"},             // another viewer
		{"bob's posts, as ann", "bob's posts+replies, ann"},        // with replies or not
		{"bob's posts+replies, ann", "bob's posts, as ann"},        // and back
		{"bob's posts, as ann", "bob's posts, anonymous"},          // a signed-in viewer's, anonymously
		{"bob's posts, anonymous", "bob's posts, as ann"},          // an anonymous cursor, signed in
		{"bob's followers, as ann", "bob's following, as ann"},     // followers vs following
		{"bob's following, as ann", "bob's followers, as ann"},     // and back
		{"bob's followers, as ann", "cat's followers, as ann"},     // another user's
		{"bob's followers, as ann", "bob's followers, as cat"},     // another viewer
		{"bob's followers, anonymous", "bob's followers, as ann"},  // anonymous, signed in
		{"ann's blocked users", "bob's followers, as ann"},         // a safety list's
		{"bob's followers, as ann", "ann's blocked users"},         // on a safety list
		{"not a cursor", "ann's favorites"},                        // garbage
		{"not a cursor", "bob's followers, as ann"},                // garbage
		{"bob's posts, as ann", "ann's favorites"},                 // an author's on favorites
		{"ann's favorites", "bob's followers, as ann"},             // posts on users
		{"bob's following, as ann", "bob's posts+replies, ann"},    // users on posts
		{"bob's posts+replies, ann", "bob's followers, anonymous"}, // anything else
		{"bob's followers, anonymous", "bob's following, as ann"},  // anything else
		{"ann's blocked users", "ann's favorites"},                 // a safety list's on favorites
		{"ann's feed", "bob's posts, as ann"},                      // the feed's on an author's
		{"bob's posts, anonymous", "bob's posts+replies, ann"},     // anonymous on another kind
		{"bob's followers, as ann", "bob's posts, as ann"},         // same owner, another kind
		{"bob's following, as ann", "ann's feed"},                  // on the feed
	} {
		t.Run(tc.cursor+" on "+tc.list, func(t *testing.T) {
			wantCode(t, "cursor of "+tc.cursor+" on "+tc.list, lists[tc.list](cursors[tc.cursor]), "INVALID_CURSOR")
		})
	}
	for name, c := range cursors {
		if open, ok := lists[name]; ok && name != "not a cursor" {
			if err := open(c); err != nil {
				t.Errorf("%s's own cursor: %v", name, err)
			}
		}
	}
}
