package feedcore

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/lists"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// A list cursor opens only the list, owner and viewer it was minted for;
// feed cursors keep their spelling (version 1) and open no list, and a
// list cursor opens no feed.
func TestListCursorsAreBound(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	at := store.Item{TS: 1_700_000_000_000, ID: 42}
	raw := s.SealListCursor(7, cursor.ListFollowers, 9, at)
	c, err := s.OpenListCursor(ctx, raw, 7, cursor.ListFollowers, 9)
	if err != nil || c.Item() != at || c.List != cursor.ListFollowers || c.Owner != 9 {
		t.Fatalf("open(seal) = %+v, %v", c, err)
	}
	feed := s.Cursors().Seal(cursor.Cursor{State: cursor.StateTimeline, LastID: 5, TS: 1, Viewer: 7})
	for _, tc := range []struct {
		what   string
		raw    string
		viewer store.ID
		kind   cursor.ListKind
		owner  store.ID
	}{
		{"another viewer", raw, 8, cursor.ListFollowers, 9},
		{"another kind (following)", raw, 7, cursor.ListFollowing, 9},
		{"another owner", raw, 7, cursor.ListFollowers, 10},
		{"another kind (favorites)", raw, 7, cursor.ListFavorites, 9},
		{"a feed cursor", feed, 7, cursor.ListFollowers, 9},
		{"a feed cursor as the viewer's favorites", feed, 7, cursor.ListFavorites, 7},
		{"a replies cursor", s.SealListCursor(7, cursor.ListReplies, 9, at), 7, cursor.ListFollowers, 9},
		{"with replies vs without", s.SealListCursor(7, cursor.ListAuthorPostsWithReplies, 9, at), 7, cursor.ListAuthorPosts, 9},
		{"garbage", "not-a-cursor", 7, cursor.ListFollowers, 9},
	} {
		if _, err := s.OpenListCursor(ctx, tc.raw, tc.viewer, tc.kind, tc.owner); store.CodeOf(err) != apierr.InvalidCursor {
			t.Errorf("%s: err = %v, want INVALID_CURSOR", tc.what, err)
		}
	}
	if _, err := s.OpenCursor(ctx, raw, 7); store.CodeOf(err) != apierr.InvalidCursor {
		t.Errorf("a list cursor opening a feed: err = %v, want INVALID_CURSOR", err)
	}
	if got, err := s.OpenCursor(ctx, feed, 7); err != nil || got.List != cursor.ListFeed || got.Owner != 0 {
		t.Errorf("a feed cursor: %+v, %v", got, err)
	}
	// Feed cursors are spelled as before lists existed: version 1, state,
	// session, id, time, viewer, MAC; a list's is version 2.
	body := func(raw string) []byte {
		b, err := base64.RawURLEncoding.DecodeString(raw)
		if err != nil {
			t.Fatal(err)
		}
		return b[:len(b)-cursor.MacLen]
	}
	if got := body(s.Cursors().Seal(cursor.Cursor{State: cursor.StateTimeline, LastID: 1, TS: 2, Viewer: 7})); !bytes.Equal(got, []byte{1, 1, 0, 1, 4, 7}) {
		t.Errorf("a feed cursor's body is now %v", got)
	}
	if got := body(s.SealListCursor(7, cursor.ListFollowers, 9, store.Item{TS: 2, ID: 1})); !bytes.Equal(got, []byte{2, 1, 0, 1, 4, 7, byte(cursor.ListFollowers), 9}) {
		t.Errorf("a list cursor's body is %v", got)
	}
}

// listSeek pages a list whose entries share few scores, while entries
// go (the one a cursor points at among them), without a duplicate or a
// gap, whatever the page size: a cursor whose entry is gone finds its
// place among the ties by value.
func TestListSeekAcrossTies(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	key := s.Keys.Favorites(1)
	var all []store.Item
	for i := range 300 {
		it := store.Item{TS: int64(1000 + rng.IntN(4)), ID: store.ID(1+rng.IntN(1<<20))<<8 | store.ID(i)}
		all = append(all, it)
		if err := s.Do(ctx, s.Redis.B().Zadd().Key(key).ScoreMember().ScoreMember(float64(it.TS), store.Member(it.ID)).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortFunc(all, func(a, b store.Item) int {
		if a.Before(b) {
			return -1
		}
		return 1
	})
	for _, n := range []int{1, 3, 7, 50} {
		t.Run(fmt.Sprint("first=", n), func(t *testing.T) {
			var got, gone []store.Item
			var from *store.Item
			defer func() { // put back what went, for the next page size
				for _, it := range gone {
					s.Do(ctx, s.Redis.B().Zadd().Key(key).ScoreMember().ScoreMember(float64(it.TS), store.Member(it.ID)).Build())
				}
			}()
			for pages := 0; ; pages++ {
				if pages > 400 {
					t.Fatal("the list does not end")
				}
				items, frontier, err := lists.ParseListSeek(s.Do(ctx, s.ListSeekCmd(key, "", "", from, n)))
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, items...)
				if frontier == nil {
					break
				}
				last := *frontier
				from = &last
				// Now and then the entry the cursor points at goes: the
				// next page must find its place among the ties by value.
				if rng.IntN(3) == 0 {
					s.Do(ctx, s.Redis.B().Zrem().Key(key).Member(store.Member(last.ID)).Build())
					gone = append(gone, last)
				}
			}
			if !slices.Equal(got, all) {
				t.Fatalf("paged %d entries, want %d, in order, once each", len(got), len(all))
			}
		})
	}
}
