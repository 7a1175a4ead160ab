package feedcore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/lists"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// pageUsers pages one of user's follower lists (list: Followers or
// Following) as viewer, n a page, to the end.
func pageUsers(tb testing.TB, list func(context.Context, store.ID, store.ID, int, string) (*UserPage, error), viewer, user store.ID, n int) []store.ID {
	tb.Helper()
	return pageList(tb, n, func(after string) ([]store.ID, bool, string, error) {
		pg, err := list(context.Background(), viewer, user, n, after)
		if err != nil {
			return nil, false, "", err
		}
		if len(pg.Cursors) != len(pg.Users) {
			tb.Fatalf("page %+v: a cursor per user", pg)
		}
		return pg.Users, pg.HasNextPage, pg.EndCursor, nil
	})
}

// pageList pages a list to the end, n a page: read returns the ids of a
// page after a cursor, whether more follow, and its end cursor. It fails
// on a page over n, on a page short of n that says more follow (a page
// is filled past the entries it hides: the tests' lists are far below
// the read bound), and on an end cursor that does not advance.
func pageList(tb testing.TB, n int, read func(after string) ([]store.ID, bool, string, error)) []store.ID {
	tb.Helper()
	var out []store.ID
	after := ""
	for pages := 0; ; pages++ {
		if pages > 1000 {
			tb.Fatal("the list does not end")
		}
		ids, more, end, err := read(after)
		if err != nil {
			tb.Fatal(err)
		}
		if len(ids) > n {
			tb.Fatalf("%d entries for first=%d", len(ids), n)
		}
		out = append(out, ids...)
		if more && len(ids) < n {
			tb.Fatalf("a page of %d entries for first=%d, and more follow: not filled past hidden entries", len(ids), n)
		}
		if !more {
			return out
		}
		if end == "" || end == after {
			tb.Fatalf("endCursor did not advance (%q)", end)
		}
		after = end
	}
}

// Follower lists: newest follow first (ties by id, highest first), with
// the times follows were made at; an unfollow leaves, a follow again
// comes first; blocks and mutes leave users out (the whole list when
// the block is with its owner); every page size gives the same list.
func TestFollowerLists(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4, 5, 6, 7)
	at := func(sec int) { clk.ms.Store(testEpoch.Add(time.Duration(sec) * time.Second).UnixMilli()) }
	for _, f := range []struct {
		sec      int
		follower store.ID
		followee store.ID
	}{{0, 2, 1}, {1, 3, 1}, {2, 4, 1}, {2, 5, 1}, {3, 1, 3}, {4, 6, 1}, {5, 1, 2}, {6, 7, 1}} {
		at(f.sec)
		if err := s.Follow(ctx, f.follower, f.followee); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, list func(context.Context, store.ID, store.ID, int, string) (*UserPage, error), viewer, user store.ID, want []store.ID) {
		t.Helper()
		for _, n := range []int{1, 2, 3, 20} {
			if got := pageUsers(t, list, viewer, user, n); !slices.Equal(got, want) {
				t.Errorf("%s, first=%d: %v, want %v", what, n, got, want)
			}
		}
	}
	check("followers of 1", s.Followers, 0, 1, []store.ID{7, 6, 5, 4, 3, 2})
	check("following of 1", s.Following, 0, 1, []store.ID{2, 3})
	if got := zscores(t, s, s.Keys.FollowerTimes(1)); got[5] != testEpoch.Add(2*time.Second).UnixMilli() {
		t.Errorf("follower times of 1: %v", got)
	}
	// Fan-out pages the graph's sets by member: their scores stay 0.
	if got := zscores(t, s, s.Keys.Followers(1)); got[5] != 0 || len(got) != 6 {
		t.Errorf("followers of 1: %v, want six at score 0", got)
	}
	at(10)
	if err := s.Unfollow(ctx, 4, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Unfollow(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	at(11)
	if err := s.Follow(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.Follow(ctx, 2, 1); err != nil { // again: keeps its time
		t.Fatal(err)
	}
	check("followers of 1 after unfollows", s.Followers, 0, 1, []store.ID{2, 7, 6, 5, 3})
	if got := zscores(t, s, s.Keys.FollowingTimes(4)); len(got) != 0 {
		t.Errorf("the unfollow left follow times: %v", got)
	}
	// Viewer 3 blocks 6 and mutes 7; 5 blocks viewer 3.
	if err := s.Block(ctx, 3, 6); err != nil {
		t.Fatal(err)
	}
	if err := s.Block(ctx, 5, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.Mute(ctx, 3, 7, 0); err != nil {
		t.Fatal(err)
	}
	check("followers of 1 as 3", s.Followers, 3, 1, []store.ID{2, 3})
	check("followers of 1 as 2", s.Followers, 2, 1, []store.ID{2, 7, 6, 5, 3})
	check("followers of 6 as 3 (a block between them)", s.Followers, 3, 6, nil)
	check("following of 5 as 3 (a block between them)", s.Following, 3, 5, nil)
	check("following of 3 as itself", s.Following, 3, 3, []store.ID{1})
}

// Imported follows keep their times; a follow already there keeps its
// own. Rebuild recomputes the followers' side from the following times,
// and times the follows made before times were kept, once.
func TestFollowTimesImportAndRebuild(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4, 5)
	old := testEpoch.Add(-time.Hour)
	edges := []Edge{{Follower: 2, Followee: 1}, {Follower: 3, Followee: 1}, {Follower: 4, Followee: 1}, {Follower: 5, Followee: 1}}
	times := []time.Time{old.Add(3 * time.Second), old.Add(time.Second), {}, old.Add(2 * time.Second)}
	if n, err := s.FollowManyAt(ctx, edges, times); err != nil || n != 4 {
		t.Fatalf("FollowManyAt: %d, %v", n, err)
	}
	if n, err := s.FollowManyAt(ctx, edges[:1], []time.Time{old}); err != nil || n != 1 {
		t.Fatalf("FollowManyAt again: %d, %v", n, err)
	}
	want := []store.ID{4, 2, 5, 3} // 4 at the clock's now, then by the times given
	if got := pageUsers(t, s.Followers, 0, 1, 2); !slices.Equal(got, want) {
		t.Fatalf("followers %v, want %v", got, want)
	}
	before := zscores(t, s, s.Keys.FollowerTimes(1))
	// The followers' side lost; a follow from before times were kept.
	s.Do(ctx, s.Redis.B().Del().Key(s.Keys.FollowerTimes(1)).Build())
	s.Do(ctx, s.Redis.B().Zrem().Key(s.Keys.FollowingTimes(3)).Member(store.Member(1)).Build())
	s.Do(ctx, s.Redis.B().Zadd().Key(s.Keys.FollowerTimes(1)).ScoreMember().ScoreMember(5, store.Member(9)).Build()) // not a follower
	clk.advance(time.Hour)
	st, err := s.Rebuild(ctx, RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	after := zscores(t, s, s.Keys.FollowerTimes(1))
	now := clk.now().UnixMilli()
	if after[3] != now || after[2] != before[2] || after[4] != before[4] || after[5] != before[5] || len(after) != 4 || st.FollowTimes < 4 {
		t.Fatalf("follower times after the rebuild %v (before %v), stats %+v", after, before, st)
	}
	if got := zscores(t, s, s.Keys.FollowingTimes(3)); got[1] != now {
		t.Fatalf("following times of 3 after the rebuild: %v", got)
	}
	if got, want := pageUsers(t, s.Followers, 0, 1, 3), []store.ID{3, 4, 2, 5}; !slices.Equal(got, want) {
		t.Fatalf("followers after the rebuild %v, want %v", got, want)
	}
}

// A follow whose settle has not run yet (the journal repairs it) does not
// show in the followers' list, nor an unfollow's leftover in the
// following list: each entry is checked against the graph's set.
func TestFollowListsCheckTheGraph(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	follow(t, s, 2, []store.ID{1})
	follow(t, s, 3, []store.ID{1})
	// Leftovers: 3 no longer follows 1, its times not yet removed.
	s.Do(ctx, s.Redis.B().Zrem().Key(s.Keys.Following(3)).Member(store.Member(1)).Build())
	s.Do(ctx, s.Redis.B().Zrem().Key(s.Keys.Followers(1)).Member(store.Member(3)).Build())
	if got := pageUsers(t, s.Followers, 0, 1, 1); !slices.Equal(got, []store.ID{2}) {
		t.Errorf("followers of 1: %v, want [2]", got)
	}
	if got := pageUsers(t, s.Following, 0, 3, 1); len(got) != 0 {
		t.Errorf("following of 3: %v, want none", got)
	}
}

// Follower lists obey mutes: a muted user leaves every list the viewer
// reads (its own following list too) while the mute is in force, and
// the whole list of a muted owner is empty; an ended mute shows them at
// once. A user hiding its posts from the viewer stays listed (the hide is
// kept from its target); a suspended account is in no list, as if it
// blocked everyone, and is back once unsuspended. Pages are filled past what they hide
// and their cursors advance (pageList).
func TestFollowerListsObeyMutes(t *testing.T) {
	f := newListSafetyFixture(t)
	s, ctx := f.s, context.Background()
	mustUsers(t, s, 5, 6, 7)
	for _, u := range []store.ID{2, 3, 5, 6, 7} {
		f.clk.advance(time.Second)
		if err := s.Follow(ctx, u, 4); err != nil {
			t.Fatal(err)
		}
		if err := s.Follow(ctx, 1, u); err != nil {
			t.Fatal(err)
		}
	}
	check := func(what string, list func(context.Context, store.ID, store.ID, int, string) (*UserPage, error), user store.ID, want []store.ID) {
		t.Helper()
		for _, n := range []int{1, 2, 3, 20} {
			if got := pageUsers(t, list, 1, user, n); !slices.Equal(got, want) {
				t.Fatalf("%s, first=%d: %v, want %v", what, n, got, want)
			}
		}
	}
	check("followers of 4", s.Followers, 4, []store.ID{7, 6, 5, 3, 2})
	for _, u := range []store.ID{6, 3} {
		if err := s.Mute(ctx, 1, u, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	check("followers of 4, 6 and 3 muted", s.Followers, 4, []store.ID{7, 5, 2})
	check("the viewer's own following, 6 and 3 muted", s.Following, 1, []store.ID{7, 5, 2})
	check("followers of muted 6", s.Followers, 6, nil)
	check("following of muted 3", s.Following, 3, nil)
	f.clk.advance(time.Minute + time.Second)
	check("followers of 4, the mutes ended", s.Followers, 4, []store.ID{7, 6, 5, 3, 2})
	check("following of 3, the mute ended", s.Following, 3, []store.ID{4})
	if err := s.HidePostsFrom(ctx, 5, 1); err != nil {
		t.Fatal(err)
	}
	f.suspend(7, true)
	check("followers of 4, 5 hiding from the viewer and 7 suspended", s.Followers, 4, []store.ID{6, 5, 3, 2})
	check("following of suspended 7", s.Following, 7, nil)
	f.suspend(7, false)
	check("followers of 4, 7 unsuspended", s.Followers, 4, []store.ID{7, 6, 5, 3, 2})
	// More mutes than a page reads with its list (sepPrefetch), ending
	// before the mute of 6: the page reads its users' separations.
	f.muteMany(lists.SepPrefetch + 6)
	if err := s.Mute(ctx, 1, 6, 0); err != nil {
		t.Fatal(err)
	}
	now := s.NowMS()
	if h, err := s.ParseSepPrefetch(s.DoMulti(ctx, s.SepPrefetchCmds(1, now)...), 1, now); err != nil || h.Complete || h.Users[6] {
		t.Fatalf("the prefetch: complete %v, holds 6 %v, %v; want it short of 6", h.Complete, h.Users[6], err)
	}
	check("followers of 4, 6 muted among many", s.Followers, 4, []store.ID{7, 5, 3, 2})
	f.suspend(7, true)
	check("followers of 4, 6 muted among many and 7 suspended", s.Followers, 4, []store.ID{5, 3, 2})
}
