package server

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
)

// workers runs the fan-out pipeline for the rest of the test.
func (e *env) workers() { feedtest.Workers(e.t, e.svc) }

// drain waits for every queued fan-out to be written.
func (e *env) drain() { e.t.Helper(); feedtest.Drain(e.t, e.svc) }

func (e *env) publish(viewer feedcore.ID, text string) string {
	e.t.Helper()
	var out struct {
		PublishPost struct{ Post struct{ ID string } } `json:"publishPost"`
	}
	e.do(viewer, `mutation($t: String!) { publishPost(input: {text: $t}) { post { id } } }`, map[string]any{"t": text}).as(e.t, &out)
	return out.PublishPost.Post.ID
}

type feedPage struct {
	FollowingFeed struct {
		Edges []struct {
			Cursor string
			Node   struct {
				ID     string
				Text   string
				Author struct{ Handle string }
			}
		}
		PageInfo struct {
			HasNextPage, HasPreviousPage bool
			StartCursor, EndCursor       *string
		}
	} `json:"followingFeed"`
}

const feedQuery = `query($first: Int, $after: String, $last: Int, $before: String) {
	followingFeed(first: $first, after: $after, last: $last, before: $before) {
		edges { cursor node { id text author { handle } } }
		pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
	}
}`

func (e *env) feed(viewer feedcore.ID, vars map[string]any) *gqlResponse {
	e.t.Helper()
	return e.do(viewer, feedQuery, vars)
}

// readAll pages viewer's feed to the end with page size n, returning post ids.
func (e *env) readAll(viewer feedcore.ID, n int) []string {
	e.t.Helper()
	var ids []string
	vars := map[string]any{"first": n}
	for range 1000 {
		var p feedPage
		e.feed(viewer, vars).as(e.t, &p)
		for _, ed := range p.FollowingFeed.Edges {
			ids = append(ids, ed.Node.ID)
		}
		if !p.FollowingFeed.PageInfo.HasNextPage {
			return ids
		}
		vars = map[string]any{"first": n, "after": *p.FollowingFeed.PageInfo.EndCursor}
	}
	e.t.Fatal("feed never ended")
	return nil
}

// TestFollowingFeed pages the feed over GraphQL: every page size yields the
// viewer's and followees' posts newest first, with deletes and unfollows
// applied; pull-to-refresh returns what is newer than a cursor; foreign and
// tampered cursors are refused.
func TestFollowingFeed(t *testing.T) {
	e := newEnv(t)
	e.users("ann", "bob", "cat", "dan")
	e.workers()
	for _, u := range []string{"2", "3"} {
		e.do(1, `mutation($u: ID!) { followUser(userId: $u) { user { id } } }`, map[string]any{"u": u}).as(t, &struct{}{})
	}
	// The feed is newest first, ties in time by id, highest first: two
	// posts in one millisecond, by authors of different stream shards,
	// may have ids out of their publish order.
	type published struct {
		id, at string
		n      int64
	}
	var posts []published
	var catsPost string
	for i := range 7 {
		author := feedcore.ID(1 + i%4) // dan (4) is not followed
		var out struct {
			PublishPost struct {
				Post struct{ ID, DatabaseID, CreatedAt string }
			} `json:"publishPost"`
		}
		e.do(author, `mutation($t: String!) { publishPost(input: {text: $t}) { post { id databaseId createdAt } } }`,
			map[string]any{"t": fmt.Sprintf("post %d", i)}).as(t, &out)
		p := out.PublishPost.Post
		n, err := strconv.ParseInt(p.DatabaseID, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		if author != 4 {
			posts = append(posts, published{p.ID, p.CreatedAt, n})
		}
		if author == 3 {
			catsPost = p.ID
		}
	}
	e.drain()
	slices.SortFunc(posts, func(a, b published) int { return cmp.Or(strings.Compare(b.at, a.at), cmp.Compare(b.n, a.n)) })
	var want []string
	for _, p := range posts {
		want = append(want, p.id)
	}

	for _, n := range []int{1, 2, 3, 100} {
		if got := e.readAll(1, n); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("page size %d: feed = %v, want %v", n, got, want)
		}
	}

	// Pull-to-refresh: newer than the current top.
	var top feedPage
	e.feed(1, map[string]any{"first": 1}).as(t, &top)
	newest := e.publish(2, "fresh")
	e.drain()
	var fresh feedPage
	e.feed(1, map[string]any{"last": 10, "before": top.FollowingFeed.Edges[0].Cursor}).as(t, &fresh)
	if len(fresh.FollowingFeed.Edges) != 1 || fresh.FollowingFeed.Edges[0].Node.ID != newest {
		t.Fatalf("last/before %s = %+v, want only %s (top %s)", top.FollowingFeed.Edges[0].Cursor, fresh.FollowingFeed.Edges, newest, top.FollowingFeed.Edges[0].Node.ID)
	}

	// Deleting and unfollowing take posts out.
	e.do(3, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": catsPost}).as(t, &struct{}{})
	e.do(1, `mutation { unfollowUser(userId: "2") { user { id } } }`, nil).as(t, &struct{}{})
	e.drain()
	for _, id := range e.readAll(1, 2) {
		if id == catsPost {
			t.Fatalf("deleted post %s still in the feed", id)
		}
		var who struct {
			Node struct{ Author struct{ Handle string } }
		}
		e.do(1, `query($id: ID!) { node(id: $id) { ... on Post { author { handle } } } }`, map[string]any{"id": id}).as(t, &who)
		if who.Node.Author.Handle == "bob" {
			t.Fatalf("post %s of unfollowed bob still in the feed", id)
		}
	}

	// Cursors are bound to the viewer and sealed.
	cursor := top.FollowingFeed.Edges[0].Cursor
	mustCode(t, "another viewer's cursor", e.feed(2, map[string]any{"first": 5, "after": cursor}), "INVALID_CURSOR")
	tampered := []byte(cursor)
	if i := len(tampered) / 2; tampered[i] == 'A' {
		tampered[i] = 'B'
	} else {
		tampered[i] = 'A'
	}
	mustCode(t, "tampered cursor", e.feed(1, map[string]any{"first": 5, "after": string(tampered)}), "INVALID_CURSOR")
	mustCode(t, "garbage cursor", e.feed(1, map[string]any{"first": 5, "after": "garbage"}), "INVALID_CURSOR")
	mustCode(t, "first and last", e.feed(1, map[string]any{"first": 5, "last": 5}), "BAD_USER_INPUT")
}
