package loaders_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/loaders"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

func setup(t *testing.T) *feedcore.Service {
	t.Helper()
	st := storetest.New(t)
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{Prefix: st.Prefix})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var us []feedcore.User
	for i := 1; i <= 30; i++ {
		us = append(us, feedcore.User{ID: feedcore.ID(i), Handle: fmt.Sprintf("u%d", i)})
	}
	if _, err := svc.PutUsers(ctx, us); err != nil {
		t.Fatal(err)
	}
	for i := 2; i <= 30; i += 2 {
		if err := svc.Follow(ctx, 1, feedcore.ID(i)); err != nil {
			t.Fatal(err)
		}
		p := &feedcore.Post{ID: feedcore.ID(100 + i), Author: feedcore.ID(i), Text: "x", CreatedAt: time.UnixMilli(int64(1e12 + i))}
		if err := svc.PutPost(ctx, p); err != nil {
			t.Fatal(err)
		}
		if i%4 == 0 {
			if _, _, err := svc.Like(ctx, 1, p.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	return svc
}

// Loads made together are read together: one round trip per kind, each
// key once, values in key order, absent keys nil.
func TestBatching(t *testing.T) {
	svc := setup(t)
	ctx, trips := roundtrip.NewContext(context.Background())
	// A wide window, so the race detector's slow goroutine starts on a
	// busy machine do not split batches; production windows are short.
	l := loaders.New(svc, 1, loaders.WithWait(100*time.Millisecond))
	start := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]string{}
	put := func(k, v string) { mu.Lock(); got[k] = v; mu.Unlock() }
	for i := 1; i <= 31; i++ {
		id := feedcore.ID(i)
		wg.Go(func() {
			<-start
			u, err := l.User(ctx, id)
			if err != nil {
				t.Error(err)
			}
			put(fmt.Sprint("user ", id), fmt.Sprint(u != nil && u.Handle == fmt.Sprintf("u%d", id)))
		})
		wg.Go(func() {
			<-start
			f, err := l.Following(ctx, id).Get()
			if err != nil {
				t.Error(err)
			}
			put(fmt.Sprint("following ", id), fmt.Sprint(f))
		})
		wg.Go(func() { // twice: the same key is read once
			<-start
			_, _ = l.User(ctx, id)
		})
	}
	close(start)
	wg.Wait()
	for i := 1; i <= 31; i++ {
		wantUser := i <= 30
		wantFollowing := i%2 == 0 && i <= 30
		if got[fmt.Sprint("user ", i)] != fmt.Sprint(wantUser) || got[fmt.Sprint("following ", i)] != fmt.Sprint(wantFollowing) {
			t.Errorf("id %d: user %s following %s", i, got[fmt.Sprint("user ", i)], got[fmt.Sprint("following ", i)])
		}
	}
	// Two kinds, one batch each; a batch that missed the window would show
	// as a third round trip.
	if n := trips.Trips(); n != 2 {
		t.Errorf("%d round trips, want 2 (one per kind)", n)
	}
	// Loaded values are kept for the request.
	before := trips.Trips()
	if u, _ := l.User(ctx, 5); u == nil || u.Handle != "u5" {
		t.Errorf("user 5 again: %+v", u)
	}
	if trips.Trips() != before {
		t.Error("a loaded user was read again")
	}
}

// Hydrate reads a page's needs in one round trip and primes the loaders:
// the loads after it cost nothing.
func TestHydratePrimes(t *testing.T) {
	svc := setup(t)
	ctx, trips := roundtrip.NewContext(context.Background())
	l := loaders.New(svc, 1)
	posts := []feedcore.ID{102, 104, 106}
	authors := []feedcore.ID{2, 4, 6}
	if err := l.Hydrate(ctx, feedcore.HydrateRequest{Counts: posts, Liked: posts, Users: authors, GraphCounts: authors, Following: authors}); err != nil {
		t.Fatal(err)
	}
	if n := trips.Trips(); n != 1 {
		t.Errorf("hydrate: %d round trips, want 1", n)
	}
	for i, p := range posts {
		c, err1 := l.PostCounts(ctx, p).Get()
		liked, err2 := l.Liked(ctx, p).Get()
		u, err3 := l.User(ctx, authors[i])
		g, err4 := l.GraphCounts(ctx, authors[i]).Get()
		f, err5 := l.Following(ctx, authors[i]).Get()
		wantLiked := authors[i]%4 == 0
		if err := cmpErr(err1, err2, err3, err4, err5); err != nil || c.Likes != b2i(wantLiked) || liked != wantLiked ||
			u.ID != authors[i] || g.Followers != 1 || !f {
			t.Errorf("post %d: counts %+v liked %v user %+v graph %+v following %v, %v", p, c, liked, u, g, f, err)
		}
	}
	if n := trips.Trips(); n != 1 {
		t.Errorf("loads after hydrate: %d round trips in all, want 1", n)
	}
	// A like changes what was primed.
	l.PrimeLike(102, feedcore.PostCounts{Likes: 9}, true)
	if c, _ := l.PostCounts(ctx, 102).Get(); c.Likes != 9 {
		t.Errorf("after PrimeLike: %+v", c)
	}
	// Anonymous loaders answer viewer flags without reading.
	anon := loaders.New(svc, 0)
	if liked, err := anon.Liked(ctx, 104).Get(); liked || err != nil {
		t.Errorf("anonymous liked: %v, %v", liked, err)
	}
	if f, err := l.Following(ctx, 1).Get(); f || err != nil {
		t.Errorf("following oneself: %v, %v", f, err)
	}
	if n := trips.Trips(); n != 1 {
		t.Errorf("flags without a viewer cost %d round trips", n-1)
	}
}

func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Relation flags are read in one batch for many users, primed by Hydrate,
// forgotten by ForgetUsers, and false without a read for anonymous loaders
// and the viewer's own profile.
func TestRelation(t *testing.T) {
	svc := setup(t)
	bg := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(svc.Block(bg, 1, 3))
	must(svc.Block(bg, 5, 1))
	must(svc.Mute(bg, 1, 7, time.Hour))
	must(svc.HidePostsFrom(bg, 1, 9))
	want := map[feedcore.ID]func(feedcore.RelationFlags) bool{
		3: func(f feedcore.RelationFlags) bool { return f.Blocked && !f.BlocksViewer },
		5: func(f feedcore.RelationFlags) bool { return f.BlocksViewer && !f.Blocked },
		7: func(f feedcore.RelationFlags) bool { return f.Muted && !f.MuteEnds.IsZero() },
		9: func(f feedcore.RelationFlags) bool { return f.HidesFrom && !f.Muted },
		8: func(f feedcore.RelationFlags) bool { return f == feedcore.RelationFlags{} },
	}
	ctx, trips := roundtrip.NewContext(bg)
	l := loaders.New(svc, 1, loaders.WithWait(100*time.Millisecond))
	var wg sync.WaitGroup
	for id, ok := range want {
		wg.Go(func() {
			if f, err := l.Relation(ctx, id).Get(); err != nil || !ok(f) {
				t.Errorf("user %d: %+v, %v", id, f, err)
			}
		})
	}
	wg.Wait()
	if n := trips.Trips(); n != 1 {
		t.Errorf("%d round trips, want 1 batch", n)
	}
	if f, err := l.Relation(ctx, 1).Get(); f != (feedcore.RelationFlags{}) || err != nil {
		t.Errorf("oneself: %+v, %v", f, err)
	}
	if f, err := loaders.New(svc, 0).Relation(ctx, 3).Get(); f != (feedcore.RelationFlags{}) || err != nil {
		t.Errorf("anonymous: %+v, %v", f, err)
	}
	if n := trips.Trips(); n != 1 {
		t.Errorf("flags without a viewer cost %d round trips", n-1)
	}
	// Hydrate primes them in its one round trip.
	h := loaders.New(svc, 1)
	if err := h.Hydrate(ctx, feedcore.HydrateRequest{Users: []feedcore.ID{3, 9}, Relations: []feedcore.ID{3, 9}}); err != nil {
		t.Fatal(err)
	}
	f3, _ := h.Relation(ctx, 3).Get()
	f9, _ := h.Relation(ctx, 9).Get()
	if !want[3](f3) || !want[9](f9) {
		t.Errorf("hydrated: 3 %+v, 9 %+v", f3, f9)
	}
	if n := trips.Trips(); n != 2 {
		t.Errorf("hydrate and loads: %d round trips in all, want 2", n)
	}
	// A change of relation is read again after ForgetUsers.
	must(svc.Unblock(bg, 1, 3))
	h.ForgetUsers(3)
	if f, err := h.Relation(ctx, 3).Get(); f.Blocked || err != nil {
		t.Errorf("after unblocking and forgetting: %+v, %v", f, err)
	}
}
