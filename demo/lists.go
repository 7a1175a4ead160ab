package demo

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/feedd/feedd/feedcore"
)

// Follow times and favorites, from a random source of their own (so the
// users, graph, posts and sessions stay what they were for a seed):
// follower lists then have an order to show, and the active readers have
// bookmarks for Query.favorites.

const (
	followSpan       = 90 * 24 * time.Hour // follows were made over the last 90 days
	favoritesPerUser = 6                   // 1 to this many per active reader (who follows someone who posts)
)

// listsRand is the random source of the follow times and favorites.
func listsRand(seed int64) *rand.Rand { return rand.New(rand.NewPCG(uint64(seed), 0xfa70)) }

// followTimes gives each edge the time it was made: a random moment in
// the followSpan before now, in milliseconds.
func followTimes(rng *rand.Rand, edges []feedcore.Edge, now time.Time) []time.Time {
	out := make([]time.Time, len(edges))
	for i := range edges {
		out[i] = now.Add(-time.Duration(rng.Int64N(int64(followSpan)))).Truncate(time.Millisecond)
	}
	return out
}

// makeFavorites has each active reader favorite a few posts of the
// accounts it follows (of those that post), each some time after the
// post was made.
func makeFavorites(rng *rand.Rand, edges []feedcore.Edge, active []feedcore.ID, posts []*feedcore.Post, now time.Time) []feedcore.Favorite {
	byAuthor := map[feedcore.ID][]*feedcore.Post{}
	for _, p := range posts {
		byAuthor[p.Author] = append(byAuthor[p.Author], p)
	}
	follows := map[feedcore.ID][]feedcore.ID{}
	for _, e := range edges {
		follows[e.Follower] = append(follows[e.Follower], e.Followee)
	}
	var out []feedcore.Favorite
	for _, u := range active {
		seen := map[feedcore.ID]bool{}
		fs := follows[u]
		want := 1 + rng.IntN(favoritesPerUser)
		for tries := 0; len(seen) < want && tries < 8*want && len(fs) > 0; tries++ {
			ps := byAuthor[fs[rng.IntN(len(fs))]]
			if len(ps) == 0 {
				continue
			}
			p := ps[rng.IntN(len(ps))]
			if seen[p.ID] {
				continue
			}
			seen[p.ID] = true
			after := now.Sub(p.CreatedAt)
			at := p.CreatedAt.Add(time.Duration(rng.Int64N(int64(after) + 1))).Truncate(time.Millisecond)
			out = append(out, feedcore.Favorite{User: u, Post: p.ID, At: at})
		}
	}
	return out
}

// loadLists follows edges at their times (at[i] for edges[i]) and
// records the favorites.
func loadLists(ctx context.Context, svc *feedcore.Service, edges []feedcore.Edge, at []time.Time, favs []feedcore.Favorite) error {
	type timed struct {
		e  feedcore.Edge
		at time.Time
	}
	follows := make([]timed, len(edges))
	for i, e := range edges {
		follows[i] = timed{e, at[i]}
	}
	if err := inBatches(ctx, follows, batchSize, func(ctx context.Context, fs []timed) error {
		es, ts := make([]feedcore.Edge, len(fs)), make([]time.Time, len(fs))
		for i, f := range fs {
			es[i], ts[i] = f.e, f.at
		}
		_, err := svc.FollowManyAt(ctx, es, ts)
		return err
	}); err != nil {
		return err
	}
	return inBatches(ctx, favs, batchSize, func(ctx context.Context, fs []feedcore.Favorite) error {
		_, err := svc.PutFavorites(ctx, fs)
		return err
	})
}
