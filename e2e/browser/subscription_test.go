package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
)

// TestGraphiQLSubscription runs a subscription in GraphiQL, as a person
// would: the demo's viewer types followingFeedUpdates into the query
// editor, from the cursor of the newest post in its feed, and presses run;
// an account it follows publishes a post over HTTP, and the result pane
// shows newPostCount 1 with the author, then the post's id in
// deletedPostIds once it is deleted. As in TestGraphiQLOffline, nothing
// leaves the host.
func TestGraphiQLSubscription(t *testing.T) {
	bin := chromiumOrSkip(t)
	f := startFeedd(t, true)
	trap := startTrap(t)
	origin := f.srv.URL

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := &pageLog{}
	c, s := openPage(ctx, t, bin, trap, log)
	// page and 5 assets; the subscription goes over a WebSocket, which
	// DevTools does not list as a request.
	defer checkOffline(ctx, t, c, s, origin, 6, log, trap)

	// The viewer's newest post and an account it follows.
	var me struct {
		Data struct {
			Viewer struct {
				Following struct {
					Edges []struct {
						Node struct {
							DatabaseID string `json:"databaseId"`
							Handle     string `json:"handle"`
						} `json:"node"`
					} `json:"edges"`
				} `json:"following"`
			} `json:"viewer"`
			FollowingFeed struct {
				Edges []struct {
					Cursor string `json:"cursor"`
				} `json:"edges"`
			} `json:"followingFeed"`
		} `json:"data"`
	}
	raw := f.query(t, f.viewer, `{ viewer { following(first: 1) { edges { node { databaseId handle } } } }
		followingFeed(first: 1) { edges { cursor } } }`)
	if err := json.Unmarshal(raw, &me); err != nil || len(me.Data.Viewer.Following.Edges) == 0 || len(me.Data.FollowingFeed.Edges) == 0 {
		t.Fatalf("the demo viewer's followee and newest post: %v\n%s", err, raw)
	}
	followee := me.Data.Viewer.Following.Edges[0].Node
	author, err := feedcore.ParseID(followee.DatabaseID)
	if err != nil {
		t.Fatal(err)
	}
	since := me.Data.FollowingFeed.Edges[0].Cursor

	if err := c.call(ctx, s, "Page.navigate", map[string]any{"url": origin + "/"}, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, c, s, "GraphiQL to show the example query", jsQueryText, 30*time.Second,
		func(q string) bool { return strings.Contains(q, "followingFeed(first: 10)") })

	// Type the subscription: the editor's text replaced, as a paste would.
	sub := fmt.Sprintf("subscription NewPosts {\n  followingFeedUpdates(since: %q) {\n    newPostCount\n    newPostAuthors { handle }\n    deletedPostIds\n  }\n}\n", since)
	subJSON, _ := json.Marshal(sub)
	if err := c.eval(ctx, s, `(() => { document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.setValue(`+string(subJSON)+`); })()`, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, c, s, "the query editor to hold the subscription", jsQueryText, 10*time.Second,
		func(q string) bool { return strings.Contains(q, "followingFeedUpdates") })
	clickRun(ctx, t, c, s)

	// Publish as the followee, over HTTP: the result pane shows the count.
	var published struct {
		Data struct {
			PublishPost struct {
				Post struct {
					ID string `json:"id"`
				} `json:"post"`
			} `json:"publishPost"`
		} `json:"data"`
	}
	raw = f.query(t, author, `mutation { publishPost(input: { text: "hello from the browser test" }) { post { id } } }`)
	if err := json.Unmarshal(raw, &published); err != nil || published.Data.PublishPost.Post.ID == "" {
		t.Fatalf("publishPost as %s: %v\n%s", followee.DatabaseID, err, raw)
	}
	postID := published.Data.PublishPost.Post.ID
	got := waitFor(ctx, t, c, s, "the result pane to show newPostCount 1", jsResultText, 30*time.Second,
		func(x string) bool { return strings.Contains(x, `"newPostCount"`) || strings.Contains(x, `"errors"`) })
	update := resultUpdate(t, got)
	if update.NewPostCount != 1 || len(update.NewPostAuthors) == 0 || update.NewPostAuthors[0].Handle != followee.Handle {
		t.Fatalf("the result pane shows %+v, want newPostCount 1 by @%s:\n%s", update, followee.Handle, got)
	}
	screenshot(ctx, t, c, s, "graphiql-subscription.png")

	// Deleted: the pane shows the post's id in deletedPostIds.
	f.query(t, author, fmt.Sprintf(`mutation { deletePost(id: %q) { deletedPostId } }`, postID))
	got = waitFor(ctx, t, c, s, "the result pane to show the deleted post", jsResultText, 30*time.Second,
		func(x string) bool { return strings.Contains(x, postID) || strings.Contains(x, `"errors"`) })
	if update := resultUpdate(t, got); len(update.DeletedPostIDs) == 0 || update.DeletedPostIDs[0] != postID {
		t.Fatalf("the result pane shows %+v, want deletedPostIds [%s]:\n%s", update, postID, got)
	}
	t.Logf("GraphiQL showed newPostCount 1 by @%s, then deletedPostIds [%s]", followee.Handle, postID)
}

// followingUpdate is a followingFeedUpdates result as the pane shows it.
type followingUpdate struct {
	NewPostCount   int `json:"newPostCount"`
	NewPostAuthors []struct {
		Handle string `json:"handle"`
	} `json:"newPostAuthors"`
	DeletedPostIDs []string `json:"deletedPostIds"`
}

// resultUpdate reads the result pane's text as a followingFeedUpdates
// result, failing the test on errors.
func resultUpdate(t *testing.T, pane string) followingUpdate {
	t.Helper()
	var r struct {
		Data struct {
			FollowingFeedUpdates followingUpdate `json:"followingFeedUpdates"`
		} `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	if err := json.Unmarshal([]byte(pane), &r); err != nil {
		t.Fatalf("result pane is not JSON: %v\n%s", err, pane)
	}
	if len(r.Errors) > 0 {
		t.Fatalf("the subscription failed:\n%s", pane)
	}
	return r.Data.FollowingFeedUpdates
}

// clickRun presses GraphiQL's run button with a real mouse click.
func clickRun(ctx context.Context, t *testing.T, c *chrome, s string) {
	t.Helper()
	type point struct{ X, Y, W float64 }
	btn := waitFor(ctx, t, c, s, "the run button", jsRunButton, 10*time.Second,
		func(p *point) bool { return p != nil && p.W > 0 })
	for _, typ := range []string{"mouseMoved", "mousePressed", "mouseReleased"} {
		ev := map[string]any{"type": typ, "x": btn.X, "y": btn.Y}
		if typ != "mouseMoved" {
			ev["button"], ev["clickCount"] = "left", 1
		}
		if err := c.call(ctx, s, "Input.dispatchMouseEvent", ev, nil); err != nil {
			t.Fatal(err)
		}
	}
}
