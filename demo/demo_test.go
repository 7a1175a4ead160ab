package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
)

var clock = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// testMediaBase is where the tests pretend MediaHandler is served.
const testMediaBase = "http://127.0.0.1:8080/demo/media/"

func newService(t *testing.T) *feedcore.Service {
	t.Helper()
	st := storetest.New(t)
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{
		Prefix: st.Prefix, BigVThreshold: Threshold, Now: func() time.Time { return clock },
	})
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func TestDeterministic(t *testing.T) {
	gen := func() string {
		rng := rand.New(rand.NewPCG(7, 0xfeedd))
		people := makePeople(rng, numUsers)
		edges := makeFollows(rng, people)
		posts := makePosts(rng, people, clock)
		return fmt.Sprint(people, edges, len(posts), *posts[0], *posts[len(posts)-1])
	}
	if a, b := gen(), gen(); a != b {
		t.Fatal("same seed, different data")
	}
}

func TestShape(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 0xfeedd))
	people := makePeople(rng, numUsers)
	handles := map[string]bool{}
	for _, p := range people {
		if handles[p.Handle] {
			t.Fatalf("duplicate handle %q", p.Handle)
		}
		handles[p.Handle] = true
	}
	makeFollows(rng, people)
	posts := makePosts(rng, people, clock)
	perMS := map[int64]int{}
	ids := map[feedcore.ID]bool{}
	for _, p := range posts {
		perMS[p.CreatedAt.UnixMilli()]++
		if ids[p.ID] {
			t.Fatalf("duplicate post id %d", p.ID)
		}
		ids[p.ID] = true
		if age := clock.Sub(p.CreatedAt); age < 0 || age > span+time.Minute || p.Text == "" {
			t.Fatalf("post %+v: age %v", p, age)
		}
	}
	ties := 0
	for _, n := range perMS {
		if n > 1 {
			ties++
		}
	}
	if ties < 10 {
		t.Errorf("only %d milliseconds hold more than one post", ties)
	}
}

func TestLoad(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	start := time.Now()
	r, err := Load(ctx, svc, 1, testMediaBase)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loaded in %v: %+v", time.Since(start), r)
	if r.Users != numUsers || r.Posts != numPosts+len(showcase(nil, clock, ""))+numReplies || r.Replies != numReplies || r.Reposts != numReposts || r.Follows < 2000 {
		t.Errorf("report counts: %+v", r)
	}
	if len(r.BigV) < 3 || len(r.BigV) > 15 {
		t.Errorf("%d big-V authors, want a few: %+v", len(r.BigV), r.BigV)
	}
	if len(r.Viewers) != 3 {
		t.Fatalf("viewers: %+v", r.Viewers)
	}
	// The report's numbers are the store's.
	counts, err := svc.Counts(ctx, []feedcore.ID{r.BigV[0].ID})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d followers", counts[0].Followers); r.BigV[0].Description != want {
		t.Errorf("big-V report %q, store says %q", r.BigV[0].Description, want)
	}
	u, err := svc.UserByHandle(ctx, r.Viewers[0].Handle)
	if err != nil || u == nil || u.ID != r.Viewers[0].ID {
		t.Fatalf("viewer %+v not in store: %+v, %v", r.Viewers[0], u, err)
	}
	// Follows have times over the last 90 days; active readers favorites.
	fs, err := svc.Followers(ctx, 0, r.BigV[0].ID, 100, "")
	if err != nil || len(fs.Users) != 100 {
		t.Fatalf("followers of %s: %+v, %v", r.BigV[0].Handle, fs, err)
	}
	if r.Favorites < 100 {
		t.Errorf("%d favorites, want the active readers' few each", r.Favorites)
	}
	favorited := 0
	for id := feedcore.ID(firstID); id < firstID+numUsers; id++ {
		pg, err := svc.Favorites(ctx, id, 100, "")
		if err != nil {
			t.Fatal(err)
		}
		favorited += len(pg.Edges)
	}
	if favorited != r.Favorites {
		t.Errorf("%d favorites listed, the report says %d", favorited, r.Favorites)
	}
}

// TestDemoFeeds reads the interesting viewers' feeds: Load returns with
// the fan-out done, so each has a full first page at once.
func TestDemoFeeds(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	r, err := Load(ctx, svc, 1, testMediaBase)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := svc.Backlog(ctx); err != nil || n != 0 {
		t.Fatalf("backlog after Load = %d, %v", n, err)
	}
	replies, reposts := 0, 0
	for _, v := range r.Viewers {
		page, err := svc.FollowingFeed(ctx, feedcore.FeedRequest{Viewer: v.ID, First: 100})
		if err != nil {
			t.Fatalf("%s: %v", v.Handle, err)
		}
		if len(page.Edges) != 100 || !page.HasNext {
			t.Errorf("%s: first page has %d posts, hasNext %v", v.Handle, len(page.Edges), page.HasNext)
		}
		for _, e := range page.Edges {
			if e.Repost != nil {
				reposts++
			}
			if e.Post.ReplyTo != 0 {
				replies++
			}
		}
	}
	// Threads and reposts show in the demo's feeds.
	if replies == 0 || reposts == 0 {
		t.Errorf("the viewers' first pages show %d replies and %d reposts, want some of each", replies, reposts)
	}
}
