package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
)

// publish posts text as c's viewer and returns the post's global id.
func publish(t *testing.T, c graphql.Client, text string) string {
	t.Helper()
	r := must(client.PublishPost(t.Context(), c, client.PublishPostInput{Text: text}))(t)
	if r.PublishPost.Post.Text != text {
		t.Fatalf("published %q, got back %q", text, r.PublishPost.Post.Text)
	}
	return r.PublishPost.Post.Id
}

// readFeed pages c's following feed to the end, n at a time, and returns the
// posts' ids. It fails on a repeated post or a page that does not advance.
func readFeed(t *testing.T, c graphql.Client, n int) []string {
	t.Helper()
	var ids []string
	for _, p := range feedPosts(t, c, n) {
		ids = append(ids, p.Id)
	}
	return ids
}

// feedPosts is readFeed returning the posts.
func feedPosts(t *testing.T, c graphql.Client, n int) []client.PostFields {
	t.Helper()
	var posts []client.PostFields
	seen := map[string]bool{}
	pageFeed(t, n, func(after *string) ([]feedEdge, client.PageInfoFields) {
		page := must(client.FollowingFeed(t.Context(), c, &n, after, nil, nil))(t).FollowingFeed
		return page.Edges, page.PageInfo.PageInfoFields
	}, func(e feedEdge) {
		if seen[e.Node.Id] {
			t.Fatalf("page size %d: post %s repeated", n, e.Node.Id)
		}
		seen[e.Node.Id] = true
		posts = append(posts, e.Node.PostFields)
	})
	return posts
}

// feedEdge is an edge of a followingFeed page.
type feedEdge = client.FollowingFeedFollowingFeedPostConnectionEdgesPostEdge

// pageFeed pages a feed to the end, n at a time (page reads the page
// after a cursor), handing each edge to visit. It fails on a page larger
// than n or one that does not advance.
func pageFeed[E any](t *testing.T, n int, page func(after *string) ([]E, client.PageInfoFields), visit func(E)) {
	t.Helper()
	var after *string
	for range 1000 {
		edges, info := page(after)
		if len(edges) > n {
			t.Fatalf("asked for %d posts, got %d", n, len(edges))
		}
		for _, e := range edges {
			visit(e)
		}
		if after != nil && !info.HasPreviousPage {
			t.Errorf("page from a cursor: hasPreviousPage false")
		}
		if !info.HasNextPage {
			return
		}
		if info.EndCursor == nil || after != nil && *info.EndCursor == *after {
			t.Fatalf("page size %d: hasNextPage but endCursor %v does not advance", n, info.EndCursor)
		}
		after = info.EndCursor
	}
	t.Fatal("the feed never ended")
}

// TestFollowingFeed is the happy path of a reader: look people up, follow
// them, read their posts page by page to the end, refresh for newer posts,
// refetch a post by id, and see deletes and unfollows leave the feed.
func TestFollowingFeed(t *testing.T) {
	e := newEnv(t, feedcore.Options{})
	e.users("ann", "bob", "cat", "dan")
	e.workers()
	ann, bob, cat, dan := e.as(1), e.as(2), e.as(3), e.as(4)
	ctx := t.Context()

	me := must(client.Viewer(ctx, ann))(t).Viewer
	if me.Handle != "ann" || me.DisplayName != "The ann" || me.DatabaseId != "1" || me.FollowingCount != 0 {
		t.Fatalf("viewer = %+v", me)
	}
	if u := must(client.User(ctx, ann, "nobody"))(t).User; u != nil {
		t.Fatalf("user(nobody) = %+v, want null", u)
	}
	ids := map[string]string{} // handle -> global id
	for _, h := range []string{"bob", "cat"} {
		u := must(client.User(ctx, ann, h))(t).User
		if u == nil || u.Handle != h || u.ViewerIsFollowing {
			t.Fatalf("user(%s) = %+v", h, u)
		}
		ids[h] = u.Id
		f := must(client.FollowUser(ctx, ann, u.Id))(t).FollowUser.User
		if !f.ViewerIsFollowing || f.FollowerCount != 1 || f.Handle != h {
			t.Fatalf("followUser(%s) = %+v", h, f)
		}
	}
	// Following again is idempotent.
	if f := must(client.FollowUser(ctx, ann, ids["bob"]))(t).FollowUser.User; f.FollowerCount != 1 {
		t.Fatalf("second follow of bob: followerCount %d", f.FollowerCount)
	}
	if me := must(client.Viewer(ctx, ann))(t).Viewer; me.FollowingCount != 2 {
		t.Fatalf("followingCount = %d, want 2", me.FollowingCount)
	}

	// Posts of ann, bob, cat and dan; ann follows bob and cat, not dan.
	authors := []graphql.Client{ann, bob, cat, dan}
	var want []string // ann's feed, oldest first
	texts := map[string]string{}
	start := time.Now().Add(-time.Second)
	for i := range 23 {
		text := fmt.Sprintf("post %d", i)
		id := publish(t, authors[i%4], text)
		texts[id] = text
		if i%4 != 3 {
			want = append(want, id)
		}
	}
	e.drain()
	slices.Reverse(want)

	for _, n := range []int{1, 2, 5, 100} {
		if got := readFeed(t, ann, n); !slices.Equal(got, want) {
			t.Fatalf("page size %d: feed %v, want %v", n, got, want)
		}
	}
	top := must(client.FollowingFeed(ctx, ann, client.Ptr(3), nil, nil, nil))(t).FollowingFeed
	if top.PageInfo.HasPreviousPage || !top.PageInfo.HasNextPage || *top.PageInfo.StartCursor != top.Edges[0].Cursor {
		t.Errorf("first page pageInfo %+v", top.PageInfo)
	}
	for _, edge := range top.Edges {
		p := edge.Node
		if p.Text != texts[p.Id] || p.CreatedAt.Before(start) || p.CreatedAt.After(time.Now().Add(time.Second)) {
			t.Errorf("post %s: text %q createdAt %v", p.Id, p.Text, p.CreatedAt)
		}
	}
	if a := top.Edges[0].Node.Author; a.Handle != "cat" || a.Id != ids["cat"] { // post 22 is cat's
		t.Errorf("newest post's author = %+v, want cat", a)
	}

	// Pull-to-refresh: only what is newer than the top of the feed.
	fresh := publish(t, bob, "fresh")
	e.drain()
	newer := must(client.FollowingFeed(ctx, ann, nil, nil, client.Ptr(10), &top.Edges[0].Cursor))(t).FollowingFeed
	if len(newer.Edges) != 1 || newer.Edges[0].Node.Id != fresh || newer.PageInfo.HasPreviousPage {
		t.Fatalf("last 10 before the top = %+v, want only %s", newer, fresh)
	}

	// node(id) refetches posts and users.
	switch n := must(client.Node(ctx, ann, fresh))(t).Node.(type) {
	case *client.NodeNodePost:
		if n.Text != "fresh" || n.Author.Handle != "bob" || n.Id != fresh {
			t.Errorf("node(%s) = %+v", fresh, n)
		}
	default:
		t.Errorf("node(%s) is %T, want a Post", fresh, n)
	}
	switch n := must(client.Node(ctx, ann, ids["bob"]))(t).Node.(type) {
	case *client.NodeNodeUser:
		if n.Handle != "bob" || !n.ViewerIsFollowing {
			t.Errorf("node(bob) = %+v", n)
		}
	default:
		t.Errorf("node(bob) is %T, want a User", n)
	}

	// Deleting a post takes it out of every feed and out of node(id).
	del := must(client.DeletePost(ctx, bob, fresh))(t).DeletePost
	if del.DeletedPostId != fresh {
		t.Fatalf("deletedPostId %s, want %s", del.DeletedPostId, fresh)
	}
	if n := must(client.Node(ctx, ann, fresh))(t).Node; n != nil {
		t.Fatalf("deleted post still resolves: %+v", n)
	}
	e.drain()
	if got := readFeed(t, ann, 7); !slices.Equal(got, want) {
		t.Fatalf("after delete: feed %v, want %v", got, want)
	}

	// Unfollowing takes the author's posts out.
	u := must(client.UnfollowUser(ctx, ann, ids["cat"]))(t).UnfollowUser.User
	if u.ViewerIsFollowing || u.FollowerCount != 0 {
		t.Fatalf("unfollowUser(cat) = %+v", u)
	}
	e.drain()
	want = slices.DeleteFunc(want, func(id string) bool {
		p, _ := must(client.Node(ctx, ann, id))(t).Node.(*client.NodeNodePost)
		return p != nil && p.Author.Handle == "cat"
	})
	if got := readFeed(t, ann, 4); !slices.Equal(got, want) {
		t.Fatalf("after unfollowing cat: feed %v, want %v", got, want)
	}

	// Bearer tokens are the production identity.
	if me := must(client.Viewer(ctx, e.client(client.Auth{Token: e.token(secret, 2)})))(t).Viewer; me.Handle != "bob" {
		t.Fatalf("viewer with bob's token = %s", me.Handle)
	}
}

// TestLikes checks that likePost and unlikePost exist in the client. While
// they are not implemented on the server (INTERNAL) that is all it checks;
// once they work, it checks the counters and viewerHasLiked.
func TestLikes(t *testing.T) {
	e := newEnv(t, feedcore.Options{})
	e.users("ann", "bob")
	ann, bob := e.as(1), e.as(2)
	ctx := t.Context()
	post := publish(t, bob, "like me")

	liked, err := client.LikePost(ctx, ann, post)
	if client.ErrorCode(err) == "INTERNAL" {
		t.Skipf("likePost is not implemented on the server yet: %v", err)
	}
	p := must(liked, err)(t).LikePost.Post
	if p.Id != post || p.Counts.Likes != 1 || !p.ViewerHasLiked {
		t.Fatalf("likePost = %+v", p)
	}
	if p := must(client.LikePost(ctx, ann, post))(t).LikePost.Post; p.Counts.Likes != 1 {
		t.Fatalf("liking twice: %d likes, want 1", p.Counts.Likes)
	}
	if p := must(client.UnlikePost(ctx, ann, post))(t).UnlikePost.Post; p.Counts.Likes != 0 || p.ViewerHasLiked {
		t.Fatalf("unlikePost = %+v", p)
	}
}
