package feedcore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

func mustPost(tb testing.TB, s *Service, id, author store.ID) {
	tb.Helper()
	p := &content.Post{ID: id, Author: author, Text: "post " + store.FormatID(id), CreatedAt: time.UnixMilli(int64(1e12 + id)).UTC()}
	if err := s.PutPost(context.Background(), p); err != nil {
		tb.Fatal(err)
	}
}

func wantCode(tb testing.TB, what string, err error, code apierr.Code) {
	tb.Helper()
	var e *apierr.Error
	if !errors.As(err, &e) || e.Code != code {
		tb.Errorf("%s: err = %v, want %s", what, err, code)
	}
}

func TestLikes(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	mustPost(t, s, 10, 1)
	mustPost(t, s, 11, 1)

	check := func(what string, post store.ID, likes int, liked map[store.ID]bool) {
		t.Helper()
		cs, err := s.PostCounts(ctx, []store.ID{post})
		if err != nil {
			t.Fatal(err)
		}
		if cs[0].Likes != likes {
			t.Errorf("%s: likes = %d, want %d", what, cs[0].Likes, likes)
		}
		for viewer, want := range liked {
			got, err := s.Liked(ctx, viewer, []store.ID{post})
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != want {
				t.Errorf("%s: viewer %d liked = %v, want %v", what, viewer, got[0], want)
			}
		}
	}
	check("no likes", 10, 0, map[store.ID]bool{2: false})
	p, c, err := s.Like(ctx, 2, 10)
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != 10 || p.Author != 1 || p.Text != "post 10" || !p.CreatedAt.Equal(time.UnixMilli(1e12+10)) || c.Likes != 1 {
		t.Errorf("like returned %+v, %+v", p, c)
	}
	if _, c, err = s.Like(ctx, 2, 10); err != nil || c.Likes != 1 {
		t.Errorf("liking twice: %+v, %v; want 1 like", c, err)
	}
	if _, c, _ = s.Like(ctx, 3, 10); c.Likes != 2 {
		t.Errorf("second liker: %d likes, want 2", c.Likes)
	}
	check("two likers", 10, 2, map[store.ID]bool{1: false, 2: true, 3: true})
	check("other post", 11, 0, map[store.ID]bool{2: false})
	if _, c, _ = s.Unlike(ctx, 2, 10); c.Likes != 1 {
		t.Errorf("unlike: %d likes, want 1", c.Likes)
	}
	if _, c, _ = s.Unlike(ctx, 2, 10); c.Likes != 1 {
		t.Errorf("unliking twice: %d likes, want 1", c.Likes)
	}
	if _, c, _ = s.Unlike(ctx, 1, 10); c.Likes != 1 {
		t.Errorf("unliking what one never liked: %d likes, want 1", c.Likes)
	}
	check("after unlikes", 10, 1, map[store.ID]bool{2: false, 3: true})

	// Counters set by an import stay, and likes count from them.
	if err := s.SetCounts(ctx, 11, PostCounts{Likes: 5, Comments: 4, Reposts: 3, Favorites: 2}); err != nil {
		t.Fatal(err)
	}
	if _, c, _ = s.Like(ctx, 2, 11); c != (PostCounts{Likes: 6, Comments: 4, Reposts: 3, Favorites: 2}) {
		t.Errorf("like after import: %+v", c)
	}
	// Import sets the counter below the likers recorded: unliking never
	// takes it below zero.
	if err := s.SetCounts(ctx, 11, PostCounts{}); err != nil {
		t.Fatal(err)
	}
	if _, c, _ = s.Unlike(ctx, 2, 11); c.Likes != 0 {
		t.Errorf("unlike below zero: %d likes", c.Likes)
	}
	wantCode(t, "SetCounts of a missing post", s.SetCounts(ctx, 99, PostCounts{Likes: 1}), apierr.NotFound)
	wantCode(t, "SetCounts below zero", s.SetCounts(ctx, 11, PostCounts{Likes: -1}), apierr.BadInput)

	// Missing and deleted posts are NOT_FOUND, and their counters do not move.
	_, _, err = s.Like(ctx, 2, 99)
	wantCode(t, "like a missing post", err, apierr.NotFound)
	if err := s.Delete(ctx, 1, 10); err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Like(ctx, 1, 10)
	wantCode(t, "like a deleted post", err, apierr.NotFound)
	_, _, err = s.Unlike(ctx, 3, 10)
	wantCode(t, "unlike a deleted post", err, apierr.NotFound)
	check("deleted", 10, 1, map[store.ID]bool{1: false, 3: true})
}

// Many viewers like and unlike the same posts at once, each several times
// over and some from two goroutines at a time: every counter ends equal to
// the number of its likers.
func TestLikesConcurrent(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	const viewers, posts, ops = 40, 3, 30
	us := make([]User, viewers)
	for i := range us {
		us[i] = User{ID: store.ID(i + 1), Handle: fmt.Sprintf("v%d", i+1)}
	}
	if _, err := s.PutUsers(ctx, us); err != nil {
		t.Fatal(err)
	}
	for p := range posts {
		mustPost(t, s, store.ID(1000+p), 1)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*viewers)
	for v := range viewers {
		for g := range 2 { // two goroutines per viewer race each other
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(v), uint64(g)))
				for range ops {
					post := store.ID(1000 + rng.IntN(posts))
					op := s.Like
					if rng.IntN(2) == 0 {
						op = s.Unlike
					}
					if _, _, err := op(ctx, store.ID(v+1), post); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	ids := []store.ID{1000, 1001, 1002}
	counts, err := s.PostCounts(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for i, post := range ids {
		likers := 0
		for v := range viewers {
			liked, err := s.Liked(ctx, store.ID(v+1), []store.ID{post})
			if err != nil {
				t.Fatal(err)
			}
			if liked[0] {
				likers++
			}
		}
		if counts[i].Likes != likers {
			t.Errorf("post %d: likes counter %d, but %d viewers like it", post, counts[i].Likes, likers)
		}
		total += likers
	}
	if total == 0 {
		t.Error("no post ended with a like: the test did not exercise much")
	}
}

// Hydrate reads counters, likes, profiles, graph counts and follows in one
// round trip, and answers flags false for an anonymous viewer.
func TestHydrate(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	for _, e := range []Edge{{Follower: 1, Followee: 2}, {Follower: 3, Followee: 2}} {
		if err := s.Follow(ctx, e.Follower, e.Followee); err != nil {
			t.Fatal(err)
		}
	}
	mustPost(t, s, 10, 2)
	mustPost(t, s, 11, 3)
	if _, _, err := s.Like(ctx, 1, 11); err != nil {
		t.Fatal(err)
	}
	rctx, trips := roundtrip.NewContext(ctx)
	h, err := s.Hydrate(rctx, HydrateRequest{Viewer: 1, Counts: []store.ID{10, 11}, Liked: []store.ID{10, 11},
		Users: []store.ID{2, 3, 9}, GraphCounts: []store.ID{2, 3}, Following: []store.ID{2, 3}})
	if err != nil {
		t.Fatal(err)
	}
	if n := trips.Trips(); n != 1 {
		t.Errorf("hydrate cost %d round trips, want 1", n)
	}
	if fmt.Sprint(h.Counts) != "[{0 0 0 0} {1 0 0 0}]" || fmt.Sprint(h.Liked) != "[false true]" ||
		h.Users[0].Handle != "u2" || h.Users[1].Handle != "u3" || h.Users[2] != nil ||
		fmt.Sprint(h.GraphCounts) != "[{2 0} {0 1}]" || fmt.Sprint(h.Following) != "[true false]" {
		t.Errorf("hydration %+v", h)
	}
	h, err = s.Hydrate(ctx, HydrateRequest{Liked: []store.ID{11}, Following: []store.ID{2}})
	if err != nil || fmt.Sprint(h.Liked, h.Following) != "[false] [false]" {
		t.Errorf("anonymous hydration %+v, %v", h, err)
	}
}

// TestLikeAtMaxCount: a like on a post whose counter is at MaxCount is
// refused whole (not recorded, counter unchanged); an unlike still works.
func TestLikeAtMaxCount(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	p, err := s.Publish(ctx, 1, "popular")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Like(ctx, 3, p.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCounts(ctx, p.ID, PostCounts{Likes: MaxCount}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCounts(ctx, p.ID, PostCounts{Likes: MaxCount + 1}); store.CodeOf(err) != apierr.BadInput {
		t.Fatalf("SetCounts over MaxCount: %v", err)
	}
	if _, _, err := s.Like(ctx, 2, p.ID); store.CodeOf(err) != apierr.BadInput {
		t.Fatalf("like at the max: err = %v", err)
	}
	liked, err := s.Liked(ctx, 2, []store.ID{p.ID})
	if err != nil || liked[0] {
		t.Fatalf("a refused like was recorded: %v, %v", liked, err)
	}
	cs, err := s.PostCounts(ctx, []store.ID{p.ID})
	if err != nil || cs[0].Likes != MaxCount {
		t.Fatalf("counts %+v, %v", cs, err)
	}
	// An existing liker liking again is a no-op, not a refusal.
	if _, c, err := s.Like(ctx, 3, p.ID); err != nil || c.Likes != MaxCount {
		t.Fatalf("repeat like at the max: %+v, %v", c, err)
	}
	if _, c, err := s.Unlike(ctx, 3, p.ID); err != nil || c.Likes != MaxCount-1 {
		t.Fatalf("unlike at the max: %+v, %v", c, err)
	}
	if _, c, err := s.Like(ctx, 2, p.ID); err != nil || c.Likes != MaxCount {
		t.Fatalf("like below the max: %+v, %v", c, err)
	}
}
