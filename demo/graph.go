package demo

import (
	"math"
	"math/rand/v2"
	"sort"

	"github.com/feedd/feedd/feedcore"
)

// Follower skew: each user follows a few accounts, picked mostly by a Zipf
// popularity (weight 1/(rank+1)) and partly at random (friends). With 300
// users this gives a handful of accounts with 50+ followers, a long tail
// with a few each, and about 3,500 follows.
const (
	zipfExponent = 1.0
	friendShare  = 0.4 // share of follows picked uniformly
	minFollows   = 3
	meanExtra    = 9 // mean of the exponential number of further follows
	maxFollows   = 80
)

// makeFollows returns the follow edges, follower by follower, each
// follower's followees in the order they were picked.
func makeFollows(rng *rand.Rand, people []person) []feedcore.Edge {
	n := len(people)
	byRank := make([]int, n) // rank -> index into people
	for i, p := range people {
		byRank[p.rank] = i
	}
	cum := make([]float64, n)
	total := 0.0
	for r := range n {
		total += 1 / math.Pow(float64(r+1), zipfExponent)
		cum[r] = total
	}
	var edges []feedcore.Edge
	for i, p := range people {
		k := min(minFollows+int(rng.ExpFloat64()*meanExtra), maxFollows)
		picked := map[int]bool{}
		for tries := 0; len(picked) < k && tries < 20*k; tries++ {
			j := byRank[sort.SearchFloat64s(cum, rng.Float64()*total)]
			if rng.Float64() < friendShare {
				j = rng.IntN(n)
			}
			if j == i || picked[j] {
				continue
			}
			picked[j] = true
			edges = append(edges, feedcore.Edge{Follower: p.ID, Followee: people[j].ID})
		}
	}
	return edges
}
