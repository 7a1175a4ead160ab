package server

import (
	"fmt"
	"testing"
)

// relationsPage is hydratedPage asking of each author how they relate to
// the viewer too.
const relationsPage = `query RelationsPage($first: Int) {
	followingFeed(first: $first) {
		edges { node {
			databaseId
			author { databaseId handle viewerIsFollowing viewerHasBlocked blocksViewer viewerHasMuted viewerMuteExpiresAt viewerHidesMyPosts }
		} }
	}
}`

type relationsResult struct {
	FollowingFeed struct {
		Edges []struct {
			Node struct {
				Author struct {
					DatabaseID string `json:"databaseId"`
					Following  bool   `json:"viewerIsFollowing"`
					Blocked    bool   `json:"viewerHasBlocked"`
					BlocksMe   bool   `json:"blocksViewer"`
					Muted      bool   `json:"viewerHasMuted"`
					MuteEnds   *string
					Hides      bool `json:"viewerHidesMyPosts"`
				}
			}
		}
	} `json:"followingFeed"`
}

// TestHydratedPageRelationFlags: the authors' relation flags ride in the
// page's hydration round trip, so a page asking for them costs what a page
// without them does (3 round trips cold; 2 warm where client-side caching
// works), and each author shows the viewer's relation to it.
func TestHydratedPageRelationFlags(t *testing.T) {
	f := newFeedFixture(t)
	e := replica(t, f.st)
	// The reader hides its posts from author 11: its posts stay in the
	// reader's feed, and the flag shows there.
	const hidden = "11"
	var hid struct {
		HideMyPostsFrom struct {
			User struct {
				Hides bool `json:"viewerHidesMyPosts"`
			}
		}
	}
	e.do(reader, `mutation { hideMyPostsFrom(userId: "`+hidden+`") { user { viewerHidesMyPosts } } }`, nil).as(t, &hid)
	if !hid.HideMyPostsFrom.User.Hides {
		t.Fatalf("hideMyPostsFrom: %+v", hid)
	}
	for _, n := range []int{20, 100} {
		t.Run(fmt.Sprintf("first=%d", n), func(t *testing.T) {
			e := replica(t, f.st)
			vars := map[string]any{"first": n}
			for i, want := range []int{3, 2} {
				before := e.tripsSoFar("RelationsPage")
				var got relationsResult
				e.do(reader, relationsPage, vars).as(t, &got)
				trips := e.tripsSince("RelationsPage", before)
				if len(got.FollowingFeed.Edges) != n {
					t.Fatalf("%d edges, want %d", len(got.FollowingFeed.Edges), n)
				}
				sawHidden := false
				for _, ed := range got.FollowingFeed.Edges {
					a := ed.Node.Author
					sawHidden = sawHidden || a.DatabaseID == hidden
					if !a.Following || a.Blocked || a.BlocksMe || a.Muted || a.MuteEnds != nil || a.Hides != (a.DatabaseID == hidden) {
						t.Fatalf("author %s: %+v", a.DatabaseID, a)
					}
				}
				if n == 100 && !sawHidden {
					t.Errorf("no post of author %s on a page of 100: the check saw no hidden author", hidden)
				}
				if i == 1 && !f.st.Real {
					continue // no client-side cache: warm is cold
				}
				if trips != want {
					t.Errorf("page %d cost %d round trips, want %d", i+1, trips, want)
				}
			}
		})
	}
}
