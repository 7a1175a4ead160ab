package feedcore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
)

// postsOf pages author's posts as viewer at several page sizes, checks
// they agree, and returns them.
func postsOf(tb testing.TB, s *Service, viewer, author store.ID) []store.ID {
	tb.Helper()
	var first []store.ID
	for i, n := range []int{1, 3, 20} {
		got := pagePosts(tb, n, func(first int, after string) (*FeedPage, error) {
			return s.AuthorPosts(context.Background(), viewer, author, false, first, after)
		})
		if i == 0 {
			first = got
		} else if !slices.Equal(got, first) {
			tb.Fatalf("posts of %d as %d: %v with first=%d, %v with first=1", author, viewer, got, n, first)
		}
	}
	return first
}

// An author's posts: newest first, ties by id, deleted ones left out,
// for anyone; empty across a block (either way) or for a viewer the
// author hides its posts from, or muted by the viewer; cursors are bound
// to the author and to includeReplies.
func TestAuthorPosts(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4)
	at := testEpoch.Add(-time.Hour)
	var want []store.ID
	for i := range 12 {
		p := &content.Post{ID: store.ID(100 + i), Author: 2, Text: "post " + store.Itoa(i), CreatedAt: at.Add(time.Duration(i/3) * time.Second)}
		if err := s.PutPost(ctx, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p.ID)
	}
	mustPost(t, s, 200, 3) // other authors'
	mustPost(t, s, 300, 1)
	if err := s.Delete(ctx, 2, 105); err != nil {
		t.Fatal(err)
	}
	slices.Reverse(want)
	want = slices.DeleteFunc(want, func(id store.ID) bool { return id == 105 })
	for _, viewer := range []store.ID{0, 1, 2, 3} {
		if got := postsOf(t, s, viewer, 2); !slices.Equal(got, want) {
			t.Fatalf("posts of 2 as %d: %v, want %v", viewer, got, want)
		}
	}
	if err := s.Block(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Block(ctx, 4, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.HidePostsFrom(ctx, 3, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Mute(ctx, 3, 2, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		viewer, author store.ID
		shown          bool
	}{{1, 2, false}, {2, 1, false}, {4, 2, false}, {1, 3, false}, {3, 2, false}, {3, 1, true}, {2, 3, true}, {0, 2, true}} {
		got := postsOf(t, s, tc.viewer, tc.author)
		if (len(got) > 0) != tc.shown {
			t.Errorf("posts of %d as %d: %v, want shown %v", tc.author, tc.viewer, got, tc.shown)
		}
	}
	if err := s.Unmute(ctx, 3, 2); err != nil {
		t.Fatal(err)
	}
	pg, err := s.AuthorPosts(ctx, 3, 2, false, 2, "")
	if err != nil || len(pg.Edges) != 2 || !pg.HasNext {
		t.Fatalf("first page %+v, %v", pg, err)
	}
	_, err = s.AuthorPosts(ctx, 3, 3, false, 2, pg.EndCursor)
	wantCode(t, "author 2's cursor on author 3", err, apierr.InvalidCursor)
	_, err = s.AuthorPosts(ctx, 3, 2, true, 2, pg.EndCursor)
	wantCode(t, "a cursor without replies on the list with them", err, apierr.InvalidCursor)
	_, err = s.AuthorPosts(ctx, 1, 2, false, 2, pg.EndCursor)
	wantCode(t, "another viewer's cursor", err, apierr.InvalidCursor)
	_, err = s.Favorites(ctx, 3, 2, pg.EndCursor)
	wantCode(t, "an author's cursor on favorites", err, apierr.InvalidCursor)
	with, err := s.AuthorPosts(ctx, 3, 2, true, 2, "")
	if err != nil || len(with.Edges) != 2 {
		t.Fatalf("with replies: %+v, %v", with, err)
	}
	if next, err := s.AuthorPosts(ctx, 3, 2, true, 2, with.EndCursor); err != nil || next.Edges[0].Post.ID != want[2] {
		t.Fatalf("with replies, page 2: %+v, %v", next, err)
	}
}

// An author's posts obey the feeds' rules: empty while the viewer's mute
// of the author is in force (back at once when it ends, with
// viewerHasMuted saying why meanwhile); a post a keyword filter of the
// viewer's matches is left out (an expired filter no longer applies; an
// author's own list is never filtered); a suspended author's list is
// empty, its own view included, and comes back when unsuspended. Pages
// are filled past what they hide and their cursors advance (pageList).
func TestAuthorPostsObeyMutesFiltersSuspensions(t *testing.T) {
	f := newListSafetyFixture(t)
	s, ctx := f.s, context.Background()
	texts := []string{"cats", "plain", "cats again", "plain", "plain", "cats", "plain"}
	var all []store.ID
	for i, x := range texts {
		f.post(store.ID(200+i), 2, x)
		all = append([]store.ID{store.ID(200 + i)}, all...)
	}
	check := func(what string, viewer store.ID, want []store.ID) {
		t.Helper()
		if got := postsOf(t, s, viewer, 2); !slices.Equal(got, want) {
			t.Fatalf("%s: posts of 2 as %d %v, want %v", what, viewer, got, want)
		}
	}
	check("at first", 1, all)
	if err := s.Mute(ctx, 1, 2, time.Minute); err != nil {
		t.Fatal(err)
	}
	check("muted", 1, nil)
	if fl, err := s.RelationFlags(ctx, 1, []store.ID{2}); err != nil || !fl[0].Muted || fl[0].Forbidden() != nil {
		t.Fatalf("the profile's flags while muted: %+v, %v", fl, err)
	}
	check("muted, as another viewer", 3, all)
	f.clk.advance(time.Minute + time.Second)
	check("the mute ended", 1, all)
	f.kw("cats", 0)
	f.kw("plain", time.Minute)
	check("filtering cats, and plain for a minute", 1, nil)
	f.clk.advance(time.Minute + time.Second)
	plain := []store.ID{206, 204, 203, 201}
	check("the plain filter expired", 1, plain)
	if _, err := s.AddKeywordFilter(ctx, KeywordFilter{User: 2, Keyword: "cats", WholeWord: true}); err != nil {
		t.Fatal(err)
	}
	check("the author's own list, filtering its own words", 2, all)
	f.suspend(2, true)
	check("suspended", 1, nil)
	check("suspended, its own view", 2, nil)
	check("suspended, anonymous", 0, nil)
	f.suspend(2, false)
	check("unsuspended", 1, plain)
	check("unsuspended, anonymous", 0, all)
}
