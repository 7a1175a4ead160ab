package feedcore

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// BenchmarkRebuild rebuilds a network of 2000 users following 50 each with
// 10 posts each, reporting users/s and inbox entries/s. On a real Redis:
// FEED_TEST_REDIS=redis://127.0.0.1:6379 go test -run '^$' -bench Rebuild -benchtime 1x ./feedcore
func BenchmarkRebuild(b *testing.B) {
	const users, follows, posts = 2000, 50, 10
	s := newService(b, storetest.New(b), Options{})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 1))
	for u := store.ID(1); u <= users; u++ {
		mustUsers(b, s, u)
	}
	var ps []*content.Post
	now := time.Now()
	for u := store.ID(1); u <= users; u++ {
		for j := range posts {
			ps = append(ps, &content.Post{ID: u*100 + store.ID(j), Author: u, Text: "p", CreatedAt: now.Add(-time.Duration(rng.IntN(100000)) * time.Second)})
		}
	}
	for i := 0; i < len(ps); i += 500 {
		if _, err := s.PutPosts(ctx, ps[i:min(i+500, len(ps))]); err != nil {
			b.Fatal(err)
		}
	}
	for u := store.ID(1); u <= users; u++ {
		var edges []Edge
		for range follows {
			if f := store.ID(1 + rng.IntN(users)); f != u {
				edges = append(edges, Edge{Follower: u, Followee: f})
			}
		}
		if _, err := s.FollowMany(ctx, edges); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		st, err := s.Rebuild(ctx, RebuildOptions{Restart: true})
		if err != nil {
			b.Fatal(err)
		}
		took := time.Since(start).Seconds()
		b.ReportMetric(float64(users)/took, "users/s")
		b.ReportMetric(float64(st.InboxEntries)/took, "entries/s")
	}
}
