package main

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestDormantChoice: the dormant share is a fixed choice of the seed, of
// about the share's size, and another seed's differs.
func TestDormantChoice(t *testing.T) {
	const users = 100_000
	a := dormantUsers(7, users, 0.3)
	if n := len(a); n < 29_000 || n > 31_000 {
		t.Errorf("%d of %d users dormant at share 0.3", n, users)
	}
	if !slices.Equal(a, dormantUsers(7, users, 0.3)) {
		t.Error("the same seed chose other users")
	}
	for _, u := range a[:100] {
		if !isDormant(7, u, 0.3) || !isDormant(7, u, 0.5) {
			t.Errorf("user %d: chosen at 0.3, so at 0.5 too", u)
		}
	}
	if b := dormantUsers(8, users, 0.3); slices.Equal(a[:100], b[:100]) {
		t.Error("seeds 7 and 8 chose the same users")
	}
	if len(dormantUsers(7, users, 0)) != 0 {
		t.Error("share 0 chose users")
	}
}

// TestPopulation: viewers are active users; a dormant user returns once,
// then is active; without a share every user is a viewer.
func TestPopulation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	if _, err := newPopulation(3, []int{1, 2, 3}); err != errNoActiveUser {
		t.Errorf("all dormant: %v", err)
	}
	p, err := newPopulation(10, []int{2, 5, 7})
	if err != nil {
		t.Fatal(err)
	}
	for range 1000 {
		if v := p.viewer(r); v < 1 || v > 10 || v == 2 || v == 5 || v == 7 {
			t.Fatalf("viewer %d: dormant or no user", v)
		}
	}
	var back []int
	for v := p.returning(r); v != 0; v = p.returning(r) {
		back = append(back, v)
	}
	if slices.Sort(back); !slices.Equal(back, []int{2, 5, 7}) || p.asleep() != 0 {
		t.Errorf("returned %v, %d asleep; want 2, 5, 7 once each", back, p.asleep())
	}
	seen := map[int]bool{}
	for range 1000 {
		seen[p.viewer(r)] = true
	}
	if len(seen) != 10 {
		t.Errorf("after the returns, viewers %v, want all 10", seen)
	}
	all, _ := newPopulation(4, nil)
	if v := all.viewer(r); v < 1 || v > 4 || all.returning(r) != 0 {
		t.Errorf("without a share: viewer %d", v)
	}
}
