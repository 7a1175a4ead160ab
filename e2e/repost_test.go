package e2e

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
)

// Reposts and "never the same post twice" (issue 21), seen through the
// client on both feed paths: an active reader's pushed inbox, and a
// reader who has never read, whose big-V followees' items are merged in
// on read.

// item is a feed edge as these tests compare it: the post's text and who
// reposted it ("" for a post itself).
type item struct{ text, by string }

func (i item) String() string {
	if i.by == "" {
		return i.text
	}
	return i.text + " (reposted by " + i.by + ")"
}

// itemEdge is an edge of a FeedItems page: with why the post is there.
type itemEdge = client.FeedItemsFollowingFeedPostConnectionEdgesPostEdge

// feedItems pages c's following feed to the end, n at a time. It fails
// when a cursor yields an item (a post, or one repost of it) twice, or
// when a repost's edge lacks its time.
func feedItems(t *testing.T, c graphql.Client, n int) []item {
	t.Helper()
	var out []item
	seen := map[item]bool{}
	pageFeed(t, n, func(after *string) ([]itemEdge, client.PageInfoFields) {
		page := must(client.FeedItems(t.Context(), c, &n, after))(t).FollowingFeed
		return page.Edges, page.PageInfo.PageInfoFields
	}, func(e itemEdge) {
		it := item{text: e.Node.Text}
		if e.RepostedBy != nil {
			it.by = e.RepostedBy.Handle
			if e.RepostedAt == nil {
				t.Fatalf("%v: repostedBy without repostedAt", it)
			}
		} else if e.RepostedAt != nil {
			t.Fatalf("%v: repostedAt without repostedBy", it)
		}
		if seen[it] {
			t.Fatalf("page size %d: %v yielded twice", n, it)
		}
		seen[it] = true
		out = append(out, it)
	})
	return out
}

// world is a small network for reposts: viewer follows ann (who writes
// originals), fil (who writes filler) and the reposters rob and ray; xan
// follows them too. On the merged path every one of them is big-V and
// the viewer has never read; the workers are stopped once the graph is
// settled, so the viewer is never upgraded and every read merges.
type world struct {
	t                          *testing.T
	e                          *env
	clk                        *clock
	merged                     bool
	viewer, ann, fil, rob, ray graphql.Client
	ids                        map[string]string // text: post id
}

func newWorld(t *testing.T, merged bool) *world {
	t.Helper()
	w := &world{t: t, clk: &clock{}, merged: merged, ids: map[string]string{}}
	opts := feedcore.Options{Now: w.clk.now}
	if merged {
		opts.BigVThreshold = 1 // two followers make a big-V
	}
	w.e = newEnv(t, opts)
	w.e.users("viewer", "ann", "fil", "rob", "ray", "xan")
	stop := feedtest.Workers(t, w.e.svc)
	w.viewer, w.ann, w.fil, w.rob, w.ray = w.e.as(1), w.e.as(2), w.e.as(3), w.e.as(4), w.e.as(5)
	authors := []string{"2", "3", "4", "5"}
	follows(t, map[graphql.Client][]string{w.viewer: authors, w.e.as(6): authors})
	w.e.drain()
	if merged {
		stop()
	} else {
		w.e.activate(w.viewer)
	}
	return w
}

// sync lets the fan-out reach the viewer's inbox; the merged path reads
// the outboxes the requests wrote.
func (w *world) sync() {
	if !w.merged {
		w.e.drain()
	}
}

// publish posts text as c, a second after the world's last item, so
// items come in a known order on every store.
func (w *world) publish(c graphql.Client, text string) string {
	w.clk.advance(time.Second)
	id := publish(w.t, c, text)
	w.ids[text] = id
	return id
}

// fill publishes n posts by fil, "<prefix>1" first.
func (w *world) fill(prefix string, n int) []item {
	var out []item
	for i := 1; i <= n; i++ {
		text := fmt.Sprintf("%s%d", prefix, i)
		w.publish(w.fil, text)
		out = append(out, item{text: text})
	}
	slices.Reverse(out) // newest first
	return out
}

// repost reposts the post text as c, a second after the last item.
func (w *world) repost(c graphql.Client, text string) client.RepostRepostRepostPayloadPost {
	w.clk.advance(time.Second)
	p := must(client.Repost(w.t.Context(), c, w.ids[text]))(w.t).Repost.Post
	if p.Text != text || !p.ViewerHasReposted {
		w.t.Fatalf("repost of %q: %+v", text, p)
	}
	return p
}

// want compares the viewer's whole feed, paged at several sizes, with
// items.
func (w *world) want(what string, items ...item) {
	w.t.Helper()
	w.sync()
	for _, n := range []int{100, 7, 1} {
		if got := feedItems(w.t, w.viewer, n); !slices.Equal(got, items) {
			w.t.Fatalf("%s (page size %d):\n got %v\nwant %v", what, n, got, items)
		}
	}
}

func paths(t *testing.T, run func(t *testing.T, w *world)) {
	for _, merged := range []bool{false, true} {
		name := "inbox"
		if merged {
			name = "merged"
		}
		t.Run(name, func(t *testing.T) { run(t, newWorld(t, merged)) })
	}
}

// TestRepostWindow: a repost is left out when the post it reposts is
// among the 40 items after it (39th, 40th), and shown when it is the 41st
// (and the post stays where it is, further down).
func TestRepostWindow(t *testing.T) {
	for _, at := range []int{39, 40, 41} {
		t.Run(fmt.Sprintf("original %dth after", at), func(t *testing.T) {
			paths(t, func(t *testing.T, w *world) {
				w.publish(w.ann, "original")
				between := w.fill("filler ", at-1)
				w.repost(w.rob, "original")
				want := append(between, item{text: "original"})
				if at > 40 {
					want = append([]item{{text: "original", by: "rob"}}, want...)
				}
				w.want("after rob's repost", want...)
			})
		})
	}
}

// TestRepostTakesThePlace: of two reposts of a post close together the
// first shows; taken back, the later one shows in its place on the next
// read. Reposting again changes nothing; deleting the post takes every
// repost of it out of the feed at once.
func TestRepostTakesThePlace(t *testing.T) {
	paths(t, func(t *testing.T, w *world) {
		ctx := t.Context()
		w.publish(w.ann, "original")
		old := w.fill("old ", 45) // the original is past the window of what follows
		w.repost(w.ray, "original")
		mid := w.fill("mid ", 5)
		w.repost(w.rob, "original")
		rayShown := slices.Concat(mid, []item{{text: "original", by: "ray"}}, old, []item{{text: "original"}})
		w.want("rob's repost, 6 items before ray's", rayShown...)

		if p := w.repost(w.rob, "original"); p.Counts.Reposts != 2 {
			t.Errorf("reposting again: %d reposts, want 2", p.Counts.Reposts)
		}
		w.want("rob reposted again", rayShown...)

		p := must(client.UndoRepost(ctx, w.ray, w.ids["original"]))(t).UndoRepost.Post
		if p.ViewerHasReposted || p.Counts.Reposts != 1 {
			t.Errorf("ray took the repost back: %+v", p)
		}
		if p := must(client.UndoRepost(ctx, w.ray, w.ids["original"]))(t).UndoRepost.Post; p.ViewerHasReposted || p.Counts.Reposts != 1 {
			t.Errorf("ray took it back again: %+v", p)
		}
		robShown := slices.Concat([]item{{text: "original", by: "rob"}}, mid, old, []item{{text: "original"}})
		w.want("ray took the repost back", robShown...)

		must(client.DeletePost(ctx, w.ann, w.ids["original"]))(t)
		w.want("ann deleted the original", slices.Concat(mid, old)...)
		wantCode(t, "repost a deleted post", errOf(client.Repost(ctx, w.ray, w.ids["original"])), "NOT_FOUND")
	})
}

// errOf is the error of a call's results.
func errOf[T any](_ T, err error) error { return err }

// TestRepostRelations: blocks, mutes and hides apply to the reposter and
// to the original's author alike; reposting across a block is FORBIDDEN.
func TestRepostRelations(t *testing.T) {
	paths(t, func(t *testing.T, w *world) {
		ctx := t.Context()
		w.publish(w.ann, "original")
		w.fill("filler ", 45)
		w.repost(w.rob, "original")
		shown := func() bool {
			return slices.Contains(feedItems(t, w.viewer, 100), item{text: "original", by: "rob"})
		}
		w.sync()
		if !shown() {
			t.Fatal("rob's repost is not in the feed")
		}
		// The viewer stops following ann: her post still comes through rob.
		must(client.UnfollowUser(ctx, w.viewer, "2"))(t)
		if !shown() {
			t.Error("rob's repost of ann's post left when the viewer unfollowed ann")
		}
		for _, c := range []struct {
			what     string
			set, end func() error
		}{
			{"the viewer mutes ann", func() error { return errOf(client.MuteUser(ctx, w.viewer, "2", nil)) },
				func() error { return errOf(client.UnmuteUser(ctx, w.viewer, "2")) }},
			{"ann hides her posts from the viewer", func() error { return errOf(client.HideMyPostsFrom(ctx, w.ann, "1")) },
				func() error { return errOf(client.UnhideMyPostsFrom(ctx, w.ann, "1")) }},
			{"the viewer mutes rob", func() error { return errOf(client.MuteUser(ctx, w.viewer, "4", nil)) },
				func() error { return errOf(client.UnmuteUser(ctx, w.viewer, "4")) }},
			{"ann blocks the viewer", func() error { return errOf(client.BlockUser(ctx, w.ann, "1")) },
				func() error { return errOf(client.UnblockUser(ctx, w.ann, "1")) }},
		} {
			if err := c.set(); err != nil {
				t.Fatalf("%s: %v", c.what, err)
			}
			if shown() {
				t.Errorf("%s: rob's repost of ann's post is still in the viewer's feed", c.what)
			}
			if err := c.end(); err != nil {
				t.Fatalf("%s, undone: %v", c.what, err)
			}
			w.sync()
			if !shown() {
				t.Errorf("%s, undone: rob's repost of ann's post is not back", c.what)
			}
		}
		must(client.BlockUser(ctx, w.ann, "5"))(t)
		forbidden(t, "ray reposts ann's post while she blocks him", errOf(client.Repost(ctx, w.ray, w.ids["original"])))
		wantCode(t, "repost a missing post", errOf(client.Repost(ctx, w.ray, "999999")), "NOT_FOUND")
		wantCode(t, "repost a bad id", errOf(client.Repost(ctx, w.ray, "nope")), "BAD_USER_INPUT")
		wantCode(t, "repost anonymously", errOf(client.Repost(ctx, w.e.anon(), w.ids["original"])), "UNAUTHENTICATED")
	})
}
