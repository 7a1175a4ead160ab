package feedcore

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
)

// TestListsMatchModel runs the model test's operations (publishes, some
// of words keyword filters match, deletes, follows, unfollows, blocks,
// mutes, hides, keyword filters added and removed, suspensions and
// unsuspensions, account deletions, a clock that mostly stands still:
// ties, and now and then jumps, ending mutes and filters) with favorites
// and unfavorites among them, and checks, for every viewer (and an
// anonymous one), every user's followers and following lists, every
// author's posts and every viewer's favorites, paged at random sizes,
// and every post's favorites counter and the viewer's flag, against an
// oracle built on the model's.
func TestListsMatchModel(t *testing.T) {
	forEachSeed(t, 4, 0, runListsModel)
}

// listsModel is the oracle of the lists, beside the model's.
type listsModel struct {
	followedAt map[Edge]int64                  // when each follow of the model's was made
	favs       map[store.ID]map[store.ID]int64 // user: post: when favorited
}

func runListsModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 20))
	clk := clockAt(testEpoch)
	held, late := lateSettles(seed)
	s := testService(t, Options{InboxCap: 6, Now: clk.now, SettleFollow: held.hold})
	r := &modelRun{t: t, s: s, m: newOracle(clk.now), clk: clk, rng: rng, held: held, late: late}
	lm := &listsModel{followedAt: map[Edge]int64{}, favs: map[store.ID]map[store.ID]int64{}}
	for u := store.ID(1); u <= modelUsers; u++ {
		mustUsers(t, s, u)
		r.m.follows[u] = map[store.ID]bool{}
		lm.favs[u] = map[store.ID]int64{}
	}
	for step := 0; step < 200; step++ {
		switch op := rng.IntN(100); {
		case op < 16:
			r.publish()
		case op < 22:
			r.publishWords()
		case op < 26:
			r.deletePost()
		case op < 38:
			r.follow()
		case op < 43:
			r.unfollow()
		case op < 58:
			lm.favorite(r, true)
		case op < 64:
			lm.favorite(r, false)
		case op < 80:
			r.relate()
		case op < 84:
			r.addFilter()
		case op < 86:
			r.removeFilter()
		case op < 89:
			lm.suspend(r, true)
		case op < 92:
			lm.suspend(r, false)
		case op < 93:
			r.deleteAccount()
		case op < 95: // mutes and filters end
			clk.advance(time.Duration(rng.IntN(90)) * time.Minute)
		default:
			clk.advance(time.Duration(rng.IntN(3)) * time.Second)
		}
		lm.noteFollows(r)
		r.lateFollows()
		if step%20 == 19 {
			r.settle()
			lm.checkAll(r)
		}
	}
}

// noteFollows times the model's new follows at the clock's now (a follow
// again keeps its time) and forgets those gone; and drops the favorites of
// deleted accounts.
func (lm *listsModel) noteFollows(r *modelRun) {
	now := r.clk.now().UnixMilli()
	for e := range lm.followedAt {
		if !r.m.follows[e.Follower][e.Followee] {
			delete(lm.followedAt, e)
		}
	}
	for f, fs := range r.m.follows {
		for g := range fs {
			if _, ok := lm.followedAt[Edge{Follower: f, Followee: g}]; !ok {
				lm.followedAt[Edge{Follower: f, Followee: g}] = now
			}
		}
	}
	for u := range r.m.gone {
		lm.favs[u] = map[store.ID]int64{}
	}
}

// favorite favorites (on) or unfavorites a random post as a random user:
// NOT_FOUND for a deleted post, FORBIDDEN across a block (a favorite),
// changing nothing either way; the payload's counter is the oracle's.
func (lm *listsModel) favorite(r *modelRun, on bool) {
	ps := r.sortedPosts()
	if len(ps) == 0 {
		return
	}
	p, u := ps[r.rng.IntN(len(ps))], r.user()
	op := r.s.UnfavoritePost
	if on {
		op = r.s.FavoritePost
	}
	_, c, err := op(context.Background(), u, p.ID)
	switch {
	case p.Deleted:
		r.wantCode(err, apierr.NotFound, "user %d favorites deleted post %d", u, p.ID)
		return
	case on && r.m.suspended[p.Author]: // read before the block is
		r.wantCode(err, apierr.NotFound, "user %d favorites post %d of a suspended account", u, p.ID)
		return
	case on && r.m.blocked(u, p.Author):
		r.wantCode(err, apierr.Forbidden, "user %d favorites post %d across a block", u, p.ID)
		return
	}
	r.must(err)
	if _, ok := lm.favs[u][p.ID]; on && !ok {
		lm.favs[u][p.ID] = r.clk.now().UnixMilli()
	} else if !on {
		delete(lm.favs[u], p.ID)
	}
	if c.Favorites != lm.count(p.ID) {
		r.t.Fatalf("user %d favorite(%v) of post %d: %d favorites, want %d", u, on, p.ID, c.Favorites, lm.count(p.ID))
	}
}

func (lm *listsModel) count(post store.ID) int {
	n := 0
	for _, fs := range lm.favs {
		if _, ok := fs[post]; ok {
			n++
		}
	}
	return n
}

// newestFirstBy is the ids of items in feed order: newest first, ties by
// id (the model's feed and lists).
func newestFirstBy(items []store.Item) []store.ID {
	slices.SortFunc(items, func(a, b store.Item) int {
		if a.Before(b) {
			return -1
		}
		return 1
	})
	out := make([]store.ID, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// suspend suspends (on) or unsuspends a random account: its posts leave
// (come back to) every list.
func (lm *listsModel) suspend(r *modelRun, on bool) {
	u, op := r.user(), r.s.Unsuspend
	if on {
		op = r.s.Suspend
	}
	_, err := op(context.Background(), u, ModAction{Operator: "model", Reason: "test"})
	r.must(err)
	if on {
		r.m.suspended[u] = true
	} else {
		delete(r.m.suspended, u)
	}
}

// separated: in a list of users, u is kept from viewer: a block between
// them, either way, or viewer's mute of u in force; not a hide (viewer 0:
// none).
func (lm *listsModel) separated(m *oracle, viewer, u store.ID) bool {
	return viewer != 0 && viewer != u && (m.blocked(viewer, u) || m.mutes[Edge{Follower: viewer, Followee: u}] > m.now().UnixMilli())
}

// shown says whether a list of posts shows viewer p: not deleted, its
// author not suspended nor hidden from viewer (a block, a mute, a hide),
// and no filter of viewer's matching it (its own are never hidden).
func (lm *listsModel) shown(m *oracle, viewer store.ID, p *content.Post) bool {
	return !p.Deleted && !m.suspended[p.Author] && (viewer == 0 || !m.hidden(viewer, p.Author) && !m.filtered(viewer, p))
}

// followers and following are user's lists as viewer sees them: a
// suspended account is in none, and its own are empty.
func (lm *listsModel) follows(m *oracle, viewer, user store.ID, followers bool) []store.ID {
	if lm.separated(m, viewer, user) || m.gone[user] || m.suspended[user] {
		return nil
	}
	var items []store.Item
	for e, at := range lm.followedAt {
		other, mine := e.Follower, e.Followee
		if !followers {
			other, mine = e.Followee, e.Follower
		}
		if mine == user && !lm.separated(m, viewer, other) && !m.suspended[other] {
			items = append(items, store.Item{TS: at, ID: other})
		}
	}
	return newestFirstBy(items)
}

// postsOf is author's list as viewer sees it.
func (lm *listsModel) postsOf(m *oracle, viewer, author store.ID) []store.ID {
	var items []store.Item
	for _, p := range m.posts {
		if p.Author == author && lm.shown(m, viewer, p) {
			items = append(items, store.Item{TS: p.CreatedAt.UnixMilli(), ID: p.ID})
		}
	}
	return newestFirstBy(items)
}

// favoritesOf is viewer's favorites list.
func (lm *listsModel) favoritesOf(m *oracle, viewer store.ID) []store.ID {
	var items []store.Item
	for id, at := range lm.favs[viewer] {
		p := m.posts[id]
		if !lm.shown(m, viewer, p) {
			continue
		}
		items = append(items, store.Item{TS: at, ID: id})
	}
	return newestFirstBy(items)
}

// checkAll compares every list, and the favorites counters and flags,
// with the oracle.
func (lm *listsModel) checkAll(r *modelRun) {
	t, s, m := r.t, r.s, r.m
	t.Helper()
	ctx := context.Background()
	sizes := []int{1, 2, 3, 5, 100}
	size := func() int { return sizes[r.rng.IntN(len(sizes))] }
	for v := store.ID(0); v <= modelUsers; v++ {
		if m.gone[v] {
			continue
		}
		for u := store.ID(1); u <= modelUsers; u++ {
			if m.gone[u] {
				continue
			}
			if got, want := pageUsers(t, s.Followers, v, u, size()), lm.follows(m, v, u, true); !slices.Equal(got, want) {
				t.Fatalf("followers of %d as %d: %v, want %v", u, v, got, want)
			}
			if got, want := pageUsers(t, s.Following, v, u, size()), lm.follows(m, v, u, false); !slices.Equal(got, want) {
				t.Fatalf("following of %d as %d: %v, want %v", u, v, got, want)
			}
			n := size()
			got := pagePosts(t, n, func(first int, after string) (*FeedPage, error) {
				return s.AuthorPosts(ctx, v, u, false, first, after)
			})
			if want := lm.postsOf(m, v, u); !slices.Equal(got, want) {
				t.Fatalf("posts of %d as %d (first=%d): %v, want %v", u, v, n, got, want)
			}
		}
		if v == 0 {
			continue
		}
		n := size()
		got := pagePosts(t, n, func(first int, after string) (*FeedPage, error) { return s.Favorites(ctx, v, first, after) })
		if want := lm.favoritesOf(m, v); !slices.Equal(got, want) {
			t.Fatalf("favorites of %d (first=%d): %v, want %v", v, n, got, want)
		}
	}
	var live []store.ID
	for _, p := range r.sortedPosts() {
		if !p.Deleted {
			live = append(live, p.ID)
		}
	}
	cs, err := s.PostCounts(ctx, live)
	r.must(err)
	for i, id := range live {
		if cs[i].Favorites != lm.count(id) {
			t.Fatalf("post %d: %d favorites, want %d", id, cs[i].Favorites, lm.count(id))
		}
	}
	for v := store.ID(1); v <= modelUsers; v++ {
		if m.gone[v] {
			continue
		}
		got, err := s.Favorited(ctx, v, live)
		r.must(err)
		for i, id := range live {
			if _, want := lm.favs[v][id]; got[i] != want {
				t.Fatalf("user %d favorited post %d: %v, want %v", v, id, got[i], want)
			}
		}
	}
}
