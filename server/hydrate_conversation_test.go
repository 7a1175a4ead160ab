package server

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
)

// The hydrated page with conversations and reposts: feedFixture's store
// plus an outsider neither reader follows, whose posts followees repost
// (some twice within the window, so one of the two is left out), reposts
// by the big-V author and by the reader itself, and replies (to the
// outsider, left out by the reply rule; to followees; threads). Its pages
// cost what a plain page does once warm: 2 round trips.

const outsider = feedcore.ID(70)

// convItem is one item of the conversations fixture: a post (by its index
// in posts) or a repost of one.
type convItem struct {
	post int         // index in convFixture.posts
	by   feedcore.ID // the reposter; 0 for the post itself
	id   feedcore.ID
	at   time.Time
}

type convFixture struct {
	*feedFixture
	posts []feedcore.Post // feedFixture's, then the outsider's
	items []convItem
}

func newConvFixture(t testing.TB) *convFixture {
	t.Helper()
	f := &convFixture{feedFixture: newFeedFixture(t)}
	svc, err := feedcore.New(context.Background(), f.st.Client, feedcore.Options{Prefix: f.st.Prefix, BigVThreshold: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer feedtest.Workers(t, svc)()
	if err := svc.PutUser(ctx, feedcore.User{ID: outsider, Handle: "outsider"}); err != nil {
		t.Fatal(err)
	}
	f.posts = slices.Clone(f.feedFixture.posts)
	for k := range f.posts {
		f.items = append(f.items, convItem{post: k, id: f.posts[k].ID, at: f.posts[k].CreatedAt})
	}
	base := f.posts[len(f.posts)-1].CreatedAt
	var out []*feedcore.Post
	for j := range 20 {
		k := len(f.posts)
		f.posts = append(f.posts, feedcore.Post{ID: feedcore.ID(1000 + k), Author: outsider, Text: fmt.Sprintf("outside %d", j),
			CreatedAt: base.Add(time.Duration(1+j) * time.Second)})
		out = append(out, &f.posts[k])
	}
	if _, err := svc.PutPosts(ctx, out); err != nil {
		t.Fatal(err)
	}
	firstOutside := len(f.posts) - 20
	// Reposts among the newest posts, each half a second after a post
	// (every third post, going back): followees 11..20 repost the
	// outsider's posts, the big-V one in nine, the reader one. Reposts of
	// one post come 15 apart (both shown, 60 items apart for the reader),
	// and one more of the first repost's post comes a few items before it
	// (left out by the window).
	var recs []*feedcore.Post
	newest := len(f.feedFixture.posts) - 1
	add := func(j, k int, by feedcore.ID, after int) {
		it := convItem{post: k, by: by, id: feedcore.ID(90000 + j), at: f.posts[after].CreatedAt.Add(500 * time.Millisecond)}
		f.items = append(f.items, it)
		recs = append(recs, &feedcore.Post{ID: it.id, Author: by, CreatedAt: it.at, RepostOf: f.posts[k].ID})
	}
	for j := range 30 {
		by := feedcore.ID(11 + j%10)
		switch {
		case j%9 == 4:
			by = bigV
		case j == 7:
			by = reader
		}
		add(j, firstOutside+j%15, by, newest-3*j)
	}
	add(30, firstOutside+29%15, 12, newest-3*29+6) // 8 items before repost 29, of the same post
	// Replies among the newest posts too: to the outsider (left out: no
	// reader follows it), to a followed author, to the replier's own post
	// (a thread), to the reply before.
	var replies []*feedcore.Post
	for j := range 20 {
		by := feedcore.ID(11 + j%10)
		if j%5 == 0 {
			by = bigV
		}
		var parent int
		switch j % 4 {
		case 0:
			parent = firstOutside + j%20
		case 1:
			parent = newest - j
		case 2:
			parent = slices.IndexFunc(f.posts, func(p feedcore.Post) bool { return p.Author == by })
		case 3:
			parent = len(f.posts) - 1
		}
		k := len(f.posts)
		at := f.posts[newest-3*j-1].CreatedAt.Add(250 * time.Millisecond)
		f.posts = append(f.posts, feedcore.Post{ID: feedcore.ID(80000 + j), Author: by, Text: fmt.Sprintf("reply %d", j), CreatedAt: at,
			ReplyTo: f.posts[parent].ID, ReplyToAuthor: f.posts[parent].Author})
		f.items = append(f.items, convItem{post: k, id: f.posts[k].ID, at: at})
		replies = append(replies, &f.posts[k])
	}
	if _, err := svc.PutPosts(ctx, replies); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PutReposts(ctx, recs); err != nil {
		t.Fatal(err)
	}
	feedtest.Drain(t, svc)
	return f
}

// follows says whether viewer follows u in the fixture.
func (f *convFixture) follows(viewer, u feedcore.ID) bool {
	return u != outsider && u != viewer && (viewer == reader && u != fan || u == bigV)
}

// want is viewer's feed: its visible items less the reposts the window
// leaves out.
func (f *convFixture) want(viewer feedcore.ID) []convItem {
	items := f.visible(viewer)
	var out []convItem
	for i, it := range items {
		if it.by != 0 && slices.ContainsFunc(items[i+1:min(len(items), i+41)], func(x convItem) bool { return x.post == it.post }) {
			continue
		}
		out = append(out, it)
	}
	return out
}

// visible is the items of the viewer and its followees, newest first.
func (f *convFixture) visible(viewer feedcore.ID) []convItem {
	var items []convItem
	for _, it := range f.items {
		p, who := f.posts[it.post], it.by
		if who == 0 {
			who = p.Author
		}
		if (who == viewer || f.follows(viewer, who)) && (it.by != 0 || f.replyShown(viewer, p)) {
			items = append(items, it)
		}
	}
	slices.SortFunc(items, func(a, b convItem) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return int(b.id) - int(a.id)
	})
	return items
}

// replyShown is the reply rule for p in viewer's feed.
func (f *convFixture) replyShown(viewer feedcore.ID, p feedcore.Post) bool {
	b := p.ReplyToAuthor
	return p.ReplyTo == 0 || p.Author == viewer || b == viewer || b == p.Author || f.follows(viewer, b)
}

// comments is how many replies post k has in the fixture.
func (f *convFixture) comments(k int) int {
	n := 0
	for _, p := range f.posts {
		if p.ReplyTo == f.posts[k].ID {
			n++
		}
	}
	return n
}

// reposts is how many reposts post k has in the fixture.
func (f *convFixture) reposts(k int) int {
	n := 0
	for _, it := range f.items {
		if it.by != 0 && it.post == k {
			n++
		}
	}
	return n
}

const convPage = `query ConvPage($first: Int) {
	followingFeed(first: $first) {
		edges { cursor repostedAt
			repostedBy { databaseId handle followerCount viewerIsFollowing }
			node {
				id databaseId text createdAt
				counts { likes comments reposts favorites }
				viewerHasLiked viewerHasReposted
				author { id databaseId handle followerCount followingCount viewerIsFollowing }
				replyTo { databaseId text author { databaseId handle } }
			}
		}
		pageInfo { hasNextPage endCursor }
	}
}`

type convResult struct {
	FollowingFeed struct {
		Edges []struct {
			RepostedAt *time.Time `json:"repostedAt"`
			RepostedBy *struct {
				DatabaseID string `json:"databaseId"`
				Following  bool   `json:"viewerIsFollowing"`
			} `json:"repostedBy"`
			Node struct {
				DatabaseID string `json:"databaseId"`
				Counts     struct{ Comments, Reposts int }
				ReplyTo    *struct {
					DatabaseID string `json:"databaseId"`
					Author     struct {
						DatabaseID string `json:"databaseId"`
					}
				} `json:"replyTo"`
				Reposted bool `json:"viewerHasReposted"`
				Author   struct {
					DatabaseID string `json:"databaseId"`
					Following  bool   `json:"viewerIsFollowing"`
				}
			}
		}
	} `json:"followingFeed"`
}

// check compares a page with the fixture's want.
func (f *convFixture) check(t *testing.T, viewer feedcore.ID, got convResult, want []convItem) {
	t.Helper()
	edges := got.FollowingFeed.Edges
	if len(edges) != len(want) {
		t.Fatalf("viewer %d: %d edges, want %d", viewer, len(edges), len(want))
	}
	for i, it := range want {
		p, e := f.posts[it.post], edges[i]
		base, comments := 0, 0
		if it.post%7 == 0 && it.post < len(f.feedFixture.posts) {
			base, comments = 3, 7
		}
		comments += f.comments(it.post)
		replyTo := e.Node.ReplyTo == nil
		if p.ReplyTo != 0 {
			replyTo = e.Node.ReplyTo != nil && e.Node.ReplyTo.DatabaseID == feedcore.FormatID(p.ReplyTo) &&
				e.Node.ReplyTo.Author.DatabaseID == feedcore.FormatID(p.ReplyToAuthor)
		}
		reposted := slices.ContainsFunc(f.items, func(x convItem) bool { return x.by == viewer && x.post == it.post })
		ok := e.Node.DatabaseID == feedcore.FormatID(p.ID) && e.Node.Counts.Reposts == base+f.reposts(it.post) &&
			e.Node.Counts.Comments == comments && replyTo &&
			e.Node.Reposted == reposted && e.Node.Author.DatabaseID == feedcore.FormatID(p.Author) &&
			e.Node.Author.Following == f.follows(viewer, p.Author)
		if it.by == 0 {
			ok = ok && e.RepostedBy == nil && e.RepostedAt == nil
		} else {
			ok = ok && e.RepostedBy != nil && e.RepostedBy.DatabaseID == feedcore.FormatID(it.by) &&
				e.RepostedBy.Following == f.follows(viewer, it.by) && e.RepostedAt != nil && e.RepostedAt.Equal(it.at)
		}
		if !ok {
			t.Fatalf("viewer %d, edge %d: got %+v, want post %d (%+v) reposted by %d", viewer, i, e, it.post, p, it.by)
		}
	}
}

// TestConversationPageRoundTrips extends TestHydratedPageRoundTrips to a
// feed of reposts, some left out by the window: a warm page, which
// decides the window over what its first read brought and finds the
// originals and the viewer's follows of their authors cached, costs 2
// round trips where client-side caching works; a cold one reads the
// originals in one step more, and hydrates the page in that step
// (FeedRequest.Alongside), so it costs 3. Pages are checked edge by edge.
func TestConversationPageRoundTrips(t *testing.T) {
	f := newConvFixture(t)
	if all, shown := len(f.visible(reader)), len(f.want(reader)); all == shown {
		t.Fatalf("the window leaves none of the reader's %d items out: the fixture does not exercise it", all)
	}
	for _, viewer := range []feedcore.ID{reader, fan} {
		shown, hidden := 0, 0
		for _, it := range f.items {
			if p := f.posts[it.post]; it.by == 0 && p.ReplyTo != 0 && f.follows(viewer, p.Author) {
				if f.replyShown(viewer, p) {
					shown++
				} else {
					hidden++
				}
			}
		}
		if shown == 0 || hidden == 0 {
			t.Fatalf("viewer %d: %d replies shown, %d left out by the rule: the fixture does not exercise it", viewer, shown, hidden)
		}
	}
	for _, viewer := range []feedcore.ID{reader, fan} {
		for _, n := range []int{1, 20, 100} {
			t.Run(fmt.Sprintf("viewer=%d/first=%d", viewer, n), func(t *testing.T) {
				want := f.want(viewer)
				want = want[:min(n, len(want))]
				e := replica(t, f.st)
				vars := map[string]any{"first": n}
				for _, run := range []string{"cold", "warm"} {
					before := e.tripsSoFar("ConvPage")
					var got convResult
					e.do(viewer, convPage, vars).as(t, &got)
					trips := e.tripsSince("ConvPage", before)
					f.check(t, viewer, got, want)
					t.Logf("%s: %d round trips", run, trips)
					switch {
					case run == "cold" && trips > 3:
						t.Errorf("cold page cost %d round trips, want at most 3", trips)
					case run == "warm" && f.st.Real && trips != 2:
						t.Errorf("warm page cost %d round trips, want 2", trips)
					}
				}
			})
		}
	}
}
