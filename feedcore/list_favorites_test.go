package feedcore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/lists"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// pagePosts pages a list of posts (read: a page) n a page, to the end,
// and returns the post ids.
func pagePosts(tb testing.TB, n int, read func(first int, after string) (*FeedPage, error)) []store.ID {
	tb.Helper()
	return pageList(tb, n, func(after string) ([]store.ID, bool, string, error) {
		pg, err := read(n, after)
		if err != nil {
			return nil, false, "", err
		}
		ids := make([]store.ID, len(pg.Edges))
		for i, e := range pg.Edges {
			ids[i] = e.Post.ID
		}
		return ids, pg.HasNext, pg.EndCursor, nil
	})
}

// favoritesOf pages viewer's favorites at several page sizes, checks they
// agree, and returns them.
func favoritesOf(tb testing.TB, s *Service, viewer store.ID) []store.ID {
	tb.Helper()
	var first []store.ID
	for i, n := range []int{1, 2, 20} {
		got := pagePosts(tb, n, func(first int, after string) (*FeedPage, error) {
			return s.Favorites(context.Background(), viewer, first, after)
		})
		if i == 0 {
			first = got
		} else if !slices.Equal(got, first) {
			tb.Fatalf("favorites of %d: %v with first=%d, %v with first=1", viewer, got, n, first)
		}
	}
	return first
}

func favoriteCount(tb testing.TB, s *Service, post store.ID) int {
	tb.Helper()
	cs, err := s.PostCounts(context.Background(), []store.ID{post})
	if err != nil {
		tb.Fatal(err)
	}
	return cs[0].Favorites
}

// Favorites: most recently favorited first; favoriting again changes
// nothing (time, counter); unfavoriting what is not favorited changes
// nothing; a deleted post leaves the list and the record; blocks, hides
// and mutes leave posts out (a block refuses a favorite too).
func TestFavorites(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4)
	for _, p := range []struct{ id, author store.ID }{{101, 2}, {102, 2}, {103, 2}, {104, 3}} {
		mustPost(t, s, p.id, p.author)
	}
	fav := func(viewer, post store.ID, on bool) (*content.Post, PostCounts) {
		t.Helper()
		clk.advance(time.Second)
		op := s.UnfavoritePost
		if on {
			op = s.FavoritePost
		}
		p, c, err := op(ctx, viewer, post)
		if err != nil {
			t.Fatalf("favorite(%d, %d, %v): %v", viewer, post, on, err)
		}
		if p.ID != post {
			t.Fatalf("favorite(%d, %d): post %d", viewer, post, p.ID)
		}
		return p, c
	}
	fav(1, 101, true)
	fav(1, 103, true)
	fav(1, 104, true)
	if _, c := fav(1, 101, true); c.Favorites != 1 {
		t.Fatalf("favoriting again: %d favorites, want 1", c.Favorites)
	}
	if _, c := fav(4, 101, true); c.Favorites != 2 {
		t.Fatalf("a second favoriter: %d favorites, want 2", c.Favorites)
	}
	if got, want := favoritesOf(t, s, 1), []store.ID{104, 103, 101}; !slices.Equal(got, want) {
		t.Fatalf("favorites %v, want %v (the second favorite of 101 keeps its first time)", got, want)
	}
	if got, err := s.Favorited(ctx, 1, []store.ID{101, 102, 104}); err != nil || !slices.Equal(got, []bool{true, false, true}) {
		t.Fatalf("favorited %v, %v", got, err)
	}
	if _, c := fav(1, 103, false); c.Favorites != 0 {
		t.Fatalf("unfavorited: %d favorites", c.Favorites)
	}
	if _, c := fav(1, 103, false); c.Favorites != 0 {
		t.Fatalf("unfavorited again: %d favorites", c.Favorites)
	}
	if _, c := fav(1, 102, false); c.Favorites != 0 {
		t.Fatalf("unfavorited a post never favorited: %d favorites", c.Favorites)
	}
	if got, want := favoritesOf(t, s, 1), []store.ID{104, 101}; !slices.Equal(got, want) {
		t.Fatalf("favorites %v, want %v", got, want)
	}
	// A deleted post leaves the list, and the record. This process's
	// client-side cache learns of the delete from Redis's invalidation,
	// which may arrive just after the delete's reply (seen on the cluster
	// lane): the list is read once it has.
	if err := s.Delete(ctx, 3, 104); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the delete of post 104 reaching this process's cache", func() bool {
		ps, err := s.CachedPosts(ctx, []store.ID{104})
		return err == nil && (ps[0] == nil || ps[0].Deleted)
	})
	if got, want := favoritesOf(t, s, 1), []store.ID{101}; !slices.Equal(got, want) {
		t.Fatalf("favorites after a delete %v, want %v", got, want)
	}
	if got := zscores(t, s, s.Keys.Favorites(1)); len(got) != 1 {
		t.Fatalf("the record still holds the deleted post: %v", got)
	}
	_, _, err := s.FavoritePost(ctx, 1, 104)
	wantCode(t, "favorite a deleted post", err, apierr.NotFound)
	_, _, err = s.FavoritePost(ctx, 1, 999)
	wantCode(t, "favorite a missing post", err, apierr.NotFound)
	_, _, err = s.FavoritePost(ctx, 0, 101)
	wantCode(t, "favorite anonymously", err, apierr.Unauthenticated)
	_, err = s.Favorites(ctx, 0, 0, "")
	wantCode(t, "anonymous favorites", err, apierr.Unauthenticated)
	_, err = s.Favorites(ctx, 1, MaxPageSize+1, "")
	wantCode(t, "first over the most", err, apierr.BadInput)
	// Blocks either way, hides and mutes leave the author's posts out. A
	// favorite across a block is refused, an unfavorite not.
	fav(1, 102, true)
	if err := s.Block(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	if got := favoritesOf(t, s, 1); len(got) != 0 {
		t.Fatalf("favorites across a block: %v", got)
	}
	_, _, err = s.FavoritePost(ctx, 1, 103)
	wantCode(t, "favorite across a block", err, apierr.Forbidden)
	if got := favoriteCount(t, s, 103); got != 0 {
		t.Fatalf("a refused favorite counted: %d", got)
	}
	if err := s.Unblock(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.HidePostsFrom(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	if got := favoritesOf(t, s, 1); len(got) != 0 {
		t.Fatalf("favorites of an author hiding its posts: %v", got)
	}
	if err := s.UnhidePostsFrom(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Mute(ctx, 1, 2, 0); err != nil {
		t.Fatal(err)
	}
	if got := favoritesOf(t, s, 1); len(got) != 0 {
		t.Fatalf("favorites of a muted author: %v", got)
	}
	if err := s.Unmute(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	if got, want := favoritesOf(t, s, 1), []store.ID{102, 101}; !slices.Equal(got, want) {
		t.Fatalf("favorites after the unmute %v, want %v", got, want)
	}
	// Cursors are the viewer's, and this list's.
	pg, err := s.Favorites(ctx, 1, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Favorites(ctx, 4, 1, pg.EndCursor)
	wantCode(t, "another viewer's favorites cursor", err, apierr.InvalidCursor)
	_, err = s.AuthorPosts(ctx, 1, 1, false, 1, pg.EndCursor)
	wantCode(t, "a favorites cursor on an author's posts", err, apierr.InvalidCursor)
	_, err = s.FollowingFeed(ctx, FeedRequest{Viewer: 1, First: 1, After: pg.EndCursor})
	wantCode(t, "a favorites cursor on the feed", err, apierr.InvalidCursor)
}

// A favorite whose request died after its record changed is settled by
// the journal's repair: the post's favoriters and counter follow.
func TestFavoriteRepair(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	mustPost(t, s, 101, 2)
	pair := []Edge{{Follower: 1, Followee: 101}}
	if _, err := s.Begin(ctx, s.ShardOf(1), "k", lists.JFav, "p", core.EncodeEdges(pair)); err != nil {
		t.Fatal(err)
	}
	keys, args := s.FavoriteCommitArgs(1, 101, store.Member(2), true, s.NowMS())
	if err := s.Do(ctx, lists.FavoriteCommit.Cmd(s.Redis.B(), keys, args)).Error(); err != nil {
		t.Fatal(err)
	}
	if got := favoriteCount(t, s, 101); got != 0 {
		t.Fatalf("counted before the repair: %d", got)
	}
	startWorkers(t, s, WorkerOptions{RepairAfter: 50 * time.Millisecond})
	drain(t, s)
	waitFor(t, "the journal's repair of the favorite", func() bool { return favoriteCount(t, s, 101) == 1 })
	if in, err := s.Do(ctx, s.Redis.B().Sismember().Key(s.Keys.Favoriters(101)).Member(store.Member(1)).Build()).AsBool(); err != nil || !in {
		t.Fatalf("favoriters after the repair: %v, %v", in, err)
	}
}

// Imported favorites keep their times (import order stands in for the
// missing ones), skip the block check and refuse a deleted post; a
// deleted account's favorites leave their posts' counters.
func TestPutFavoritesAndDeletion(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	for _, p := range []store.ID{101, 102, 103} {
		mustPost(t, s, p, 2)
	}
	if err := s.Block(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	old := testEpoch.Add(-time.Hour)
	n, err := s.PutFavorites(ctx, []Favorite{{User: 1, Post: 101, At: old.Add(time.Second)}, {User: 1, Post: 102, At: old},
		{User: 3, Post: 101}, {User: 1, Post: 999}, {User: 1, Post: 103}})
	if n != 3 || store.CodeOf(err) != apierr.NotFound {
		t.Fatalf("PutFavorites: %d, %v; want 3 and NOT_FOUND", n, err)
	}
	if got := zscores(t, s, s.Keys.Favorites(1)); got[101] != old.Add(time.Second).UnixMilli() || got[102] != old.UnixMilli() || len(got) != 2 {
		t.Fatalf("favorites of 1: %v", got)
	}
	if got := favoriteCount(t, s, 101); got != 2 {
		t.Fatalf("favorites of 101: %d, want 2", got)
	}
	if err := s.Unblock(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	if got, want := favoritesOf(t, s, 1), []store.ID{101, 102}; !slices.Equal(got, want) {
		t.Fatalf("favorites %v, want %v", got, want)
	}
	if err := s.DeleteAccount(ctx, 1, "u1"); err != nil {
		t.Fatal(err)
	}
	if a, b := favoriteCount(t, s, 101), favoriteCount(t, s, 102); a != 1 || b != 0 {
		t.Fatalf("after the favoriter's deletion: %d and %d favorites, want 1 and 0", a, b)
	}
	if got := zscores(t, s, s.Keys.Favorites(1)); len(got) != 0 {
		t.Fatalf("a deleted account's favorites stay: %v", got)
	}
}

// Counters: an import's counts line is a base live favorites and likes
// add to; Rebuild recomputes them as the base plus the records, keeps a
// counter set before bases were kept, and clamps what it shows to Int.
func TestCountersRebuild(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4)
	for _, p := range []store.ID{101, 102, 103} {
		mustPost(t, s, p, 2)
	}
	if _, _, err := s.FavoritePost(ctx, 3, 101); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCounts(ctx, 101, PostCounts{Likes: 10, Comments: 1, Favorites: 5}); err != nil {
		t.Fatal(err)
	}
	if _, c, err := s.FavoritePost(ctx, 4, 101); err != nil || c.Favorites != 6 {
		t.Fatalf("a live favorite on an imported base: %+v, %v", c, err)
	}
	if _, _, err := s.Like(ctx, 4, 101); err != nil {
		t.Fatal(err)
	}
	// Drift, and a counter from before bases were kept.
	s.Do(ctx, s.Redis.B().Hset().Key(s.Keys.PostCounts(101)).FieldValue().FieldValue("f", "99").FieldValue("l", "0").Build())
	s.Do(ctx, s.Redis.B().Hset().Key(s.Keys.PostCounts(102)).FieldValue().FieldValue("f", "7").Build())
	s.Do(ctx, s.Redis.B().Hset().Key(s.Keys.PostCounts(103)).FieldValue().FieldValue("f", store.Itoa(MaxCount)).FieldValue("fb", "2147483647").Build())
	if _, _, err := s.FavoritePost(ctx, 3, 103); err != nil {
		t.Fatal(err)
	}
	if got := favoriteCount(t, s, 103); got != MaxCount {
		t.Fatalf("a counter past Int shows %d, want %d", got, MaxCount)
	}
	st, err := s.Rebuild(ctx, RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cs, err := s.PostCounts(ctx, []store.ID{101, 102})
	if err != nil {
		t.Fatal(err)
	}
	if cs[0] != (PostCounts{Likes: 11, Comments: 1, Favorites: 6}) || cs[1].Favorites != 7 || st.Counters < 2 {
		t.Fatalf("after the rebuild: %+v, stats %+v", cs, st)
	}
	if got := favoriteCount(t, s, 103); got != MaxCount {
		t.Fatalf("a counter past Int shows %d after the rebuild, want %d", got, MaxCount)
	}
}

// listSafetyFixture is the world of the lists' safety tests: viewer 1,
// authors 2 and 3, on clk; kw adds a keyword filter of the viewer's
// (until, when not zero, from now) and returns its id; suspend suspends
// (on) or unsuspends an author.
type listSafetyFixture struct {
	t       *testing.T
	s       *Service
	clk     *clock
	kw      func(word string, until time.Duration) store.ID
	suspend func(u store.ID, on bool)
}

func newListSafetyFixture(t *testing.T) listSafetyFixture {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	mustUsers(t, s, 1, 2, 3, 4)
	ctx := context.Background()
	f := listSafetyFixture{t: t, s: s, clk: clk}
	f.kw = func(word string, until time.Duration) store.ID {
		t.Helper()
		kf := KeywordFilter{User: 1, Keyword: word, WholeWord: true}
		if until > 0 {
			at := clk.now().Add(until)
			kf.ExpiresAt = &at
		}
		got, err := s.AddKeywordFilter(ctx, kf)
		if err != nil {
			t.Fatal(err)
		}
		return got.ID
	}
	f.suspend = func(u store.ID, on bool) {
		t.Helper()
		op := s.Unsuspend
		if on {
			op = s.Suspend
		}
		if _, err := op(ctx, u, ModAction{Operator: "test", Reason: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// muteMany has the viewer mute n new users, 1000 on, for an hour.
func (f listSafetyFixture) muteMany(n int) {
	f.t.Helper()
	var many []store.ID
	for u := store.ID(1000); u < 1000+store.ID(n); u++ {
		many = append(many, u)
	}
	mustUsers(f.t, f.s, many...)
	for _, u := range many {
		if err := f.s.Mute(context.Background(), 1, u, time.Hour); err != nil {
			f.t.Fatal(err)
		}
	}
}

// post publishes post id of author with text, at its id's second.
func (f listSafetyFixture) post(id, author store.ID, text string) {
	f.t.Helper()
	p := &content.Post{ID: id, Author: author, Text: text, CreatedAt: testEpoch.Add(-time.Hour + time.Duration(id)*time.Second)}
	if err := f.s.PutPost(context.Background(), p); err != nil {
		f.t.Fatal(err)
	}
}

// Favorites obey the feeds' rules: a muted author's posts leave the list
// while the mute is in force (an ended one shows them at once); a post a
// keyword filter matches leaves it (never the viewer's own; an expired
// filter no longer applies); a suspended author's posts leave it and
// come back when unsuspended. Pages are filled past what they hide and
// their cursors advance (pageList), at every page size.
func TestFavoritesObeyMutesFiltersSuspensions(t *testing.T) {
	f := newListSafetyFixture(t)
	s, ctx := f.s, context.Background()
	f.post(201, 2, "cats and dogs")
	f.post(301, 3, "plain")
	f.post(101, 1, "my cats")
	f.post(202, 2, "plain")
	f.post(302, 3, "news of cats")
	for _, p := range []store.ID{201, 301, 101, 202, 302} {
		f.clk.advance(time.Second)
		if _, _, err := s.FavoritePost(ctx, 1, p); err != nil {
			t.Fatal(err)
		}
	}
	all := []store.ID{302, 202, 101, 301, 201}
	check := func(what string, want []store.ID) {
		t.Helper()
		if got := favoritesOf(t, s, 1); !slices.Equal(got, want) {
			t.Fatalf("%s: favorites %v, want %v", what, got, want)
		}
	}
	check("at first", all)
	if err := s.Mute(ctx, 1, 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	check("author 2 muted", []store.ID{302, 101, 301})
	f.clk.advance(time.Minute + time.Second)
	check("the mute ended", all)
	cats := f.kw("cats", 0)
	check("filtering cats (not the viewer's own)", []store.ID{202, 101, 301})
	f.kw("plain", time.Minute)
	check("filtering plain too, for a minute", []store.ID{101})
	f.clk.advance(time.Minute + time.Second)
	check("the plain filter expired", []store.ID{202, 101, 301})
	if err := s.RemoveKeywordFilter(ctx, 1, cats); err != nil {
		t.Fatal(err)
	}
	check("the cats filter removed", all)
	f.suspend(3, true)
	check("author 3 suspended", []store.ID{202, 101, 201})
	f.suspend(3, false)
	check("author 3 unsuspended", all)
	f.suspend(1, true)
	check("the viewer suspended: its own posts too, as in the feed", []store.ID{302, 202, 301, 201})
	f.suspend(1, false)
	check("the viewer unsuspended", all)
}

// A viewer with more hidden authors than a page reads with its list
// (sepPrefetch) still has each hidden author's posts left out: the
// page's authors are then checked in one more read.
func TestFavoritesOfAViewerWithManyHidden(t *testing.T) {
	f := newListSafetyFixture(t)
	s, ctx := f.s, context.Background()
	// Muted for an hour, they come before author 2's mute (no end) in the
	// hidden set's order: the prefetch holds them and not author 2.
	f.muteMany(lists.SepPrefetch + 6)
	f.post(201, 2, "a")
	f.post(301, 3, "b")
	for _, p := range []store.ID{201, 301} {
		f.clk.advance(time.Second)
		if _, _, err := s.FavoritePost(ctx, 1, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Mute(ctx, 1, 2, 0); err != nil {
		t.Fatal(err)
	}
	now := s.NowMS()
	h, err := s.ParseHiddenPrefetch(s.DoMulti(ctx, s.HiddenPrefetchCmds(1, now)...), 1, now)
	if err != nil || h.Complete || h.Users[2] {
		t.Fatalf("the prefetch: complete %v, holds author 2 %v, %v; want it short of author 2", h.Complete, h.Users[2], err)
	}
	if got, want := favoritesOf(t, s, 1), []store.ID{301}; !slices.Equal(got, want) {
		t.Fatalf("favorites %v, want %v", got, want)
	}
}
