package server

import (
	"context"
	"fmt"
	"testing"

	"github.com/feedd/feedd/feedcore"
)

// The lists' Redis round trips through GraphQL, whatever the page size: a
// favorites page costs what a feed page costs (the list's read, its posts
// through the client-side cache, the hydration: 3 cold, 2 warm), and
// asking a feed page for viewerHasFavorited adds none; an author's posts
// and followers add user(handle:)'s lookup of the handle (one round trip)
// and profile (cached), the followers no posts. The same holds for a
// reader who mutes authors and has 100 keyword filters: a list reads them
// in its first round trip.
func TestListPageRoundTrips(t *testing.T) {
	f := newFeedFixture(t)
	e := replica(t, f.st)
	for _, k := range f.want(reader)[:30] {
		var out struct{}
		e.do(reader, `mutation($id: ID!) { favoritePost(id: $id) { post { id } } }`, map[string]any{"id": fmt.Sprint(f.posts[k].ID)}).as(t, &out)
	}
	// The second pass: the reader mutes five authors (none of the
	// favorites' or author10) and has 100 keyword filters (none matching):
	// what it reads of them rides in the same round trips.
	separate := func() {
		svc, err := feedcore.New(context.Background(), f.st.Client, feedcore.Options{Prefix: f.st.Prefix, BigVThreshold: 3})
		if err != nil {
			t.Fatal(err)
		}
		faved := map[feedcore.ID]bool{bigV: true}
		for _, k := range f.want(reader)[:30] {
			faved[f.posts[k].Author] = true
		}
		muted := 0
		for a := feedcore.ID(59); muted < 5 && a > bigV; a-- {
			if !faved[a] {
				if err := svc.Mute(context.Background(), reader, a, 0); err != nil {
					t.Fatal(err)
				}
				muted++
			}
		}
		if muted < 5 {
			t.Fatalf("only %d authors to mute", muted)
		}
		for i := range 100 {
			if _, err := svc.AddKeywordFilter(context.Background(), feedcore.KeywordFilter{User: reader, Keyword: fmt.Sprintf("zzkw%d", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	post := `id counts { likes favorites } viewerHasLiked viewerHasFavorited author { handle followerCount viewerIsFollowing }`
	for _, pass := range []string{"plain", "muting and filtering"} {
		if pass != "plain" {
			separate()
		}
		for _, tc := range []struct {
			op, query string
			edges     func(map[string]any) []any
			sizes     []int
			cold      int
			warm      int // on a real Redis, with the client-side cache
		}{
			{"FavPage", `query FavPage($first: Int) { favorites(first: $first) { edges { node { ` + post + ` } } } }`,
				func(d map[string]any) []any { return edgesOf(d["favorites"]) }, []int{1, 20}, 3, 2},
			{"FeedFavorited", `query FeedFavorited($first: Int) { followingFeed(first: $first) { edges { node { ` + post + ` } } } }`,
				func(d map[string]any) []any { return edgesOf(d["followingFeed"]) }, []int{1, 20}, 3, 2},
			{"ProfilePosts", `query ProfilePosts($first: Int) { user(handle: "author10") { posts(first: $first) { edges { node { ` + post + ` } } } } }`,
				func(d map[string]any) []any { return edgesOf(d["user"].(map[string]any)["posts"]) }, []int{1, 20}, 5, 3},
			{"ProfileFollowers", `query ProfileFollowers($first: Int) { user(handle: "author10") { followers(first: $first) { edges { node { handle followerCount viewerIsFollowing viewerHasBlocked } } } } }`,
				// Cold, the page reads its users' profiles before the
				// hydration does (a suspended account is left out by its
				// profile's mark); warm, they come from the cache.
				func(d map[string]any) []any { return edgesOf(d["user"].(map[string]any)["followers"]) }, []int{1, 7}, 5, 3},
		} {
			for _, n := range tc.sizes {
				t.Run(fmt.Sprintf("%s/%s/first=%d", pass, tc.op, n), func(t *testing.T) {
					e := replica(t, f.st) // a cold client-side cache
					for _, warmth := range []string{"cold", "warm"} {
						before := e.tripsSoFar(tc.op)
						var got map[string]any
						e.do(reader, tc.query, map[string]any{"first": n}).as(t, &got)
						trips := e.tripsSince(tc.op, before)
						edges := tc.edges(got)
						t.Logf("%s page of %d: %d round trips", warmth, len(edges), trips)
						if len(edges) != n {
							t.Fatalf("%d edges, want %d", len(edges), n)
						}
						want := tc.cold
						if warmth == "warm" && f.st.Real {
							want = tc.warm
						}
						if trips != want {
							t.Errorf("%s page cost %d round trips, want %d", warmth, trips, want)
						}
					}
				})
			}
		}
	}
}

// edgesOf is the edges of a connection in a decoded response.
func edgesOf(conn any) []any {
	edges, _ := conn.(map[string]any)["edges"].([]any)
	return edges
}
