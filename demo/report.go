package demo

import (
	"fmt"
	"sort"

	"github.com/feedd/feedd/feedcore"
)

// report picks the users worth trying from the generated graph.
func report(people []person, edges []feedcore.Edge, active map[feedcore.ID]bool, threshold int) Report {
	followers := map[feedcore.ID]int{}
	following := map[feedcore.ID][]feedcore.ID{}
	for _, e := range edges {
		followers[e.Followee]++
		following[e.Follower] = append(following[e.Follower], e.Followee)
	}
	r := Report{Users: len(people), Follows: len(edges), Threshold: threshold}

	ranked := append([]person(nil), people...)
	sort.Slice(ranked, func(i, j int) bool {
		fi, fj := followers[ranked[i].ID], followers[ranked[j].ID]
		return fi > fj || fi == fj && ranked[i].ID < ranked[j].ID
	})
	big := map[feedcore.ID]bool{}
	for _, p := range ranked {
		if followers[p.ID] <= threshold {
			break
		}
		big[p.ID] = true
		r.BigV = append(r.BigV, Viewer{ID: p.ID, Handle: p.Handle,
			Description: fmt.Sprintf("%d followers", followers[p.ID])})
	}
	bigFollowed := func(id feedcore.ID) int {
		n := 0
		for _, f := range following[id] {
			if big[f] {
				n++
			}
		}
		return n
	}
	// best returns the user maximising score among those ok accepts.
	best := func(ok func(person) bool, score func(person) int) (person, bool) {
		var out person
		found, top := false, -1
		for _, p := range people {
			if ok(p) && score(p) > top {
				out, found, top = p, true, score(p)
			}
		}
		return out, found
	}
	byFollowees := func(p person) int { return 100*bigFollowed(p.ID) + len(following[p.ID]) }

	if p, ok := best(func(p person) bool { return active[p.ID] && !big[p.ID] }, byFollowees); ok {
		r.Viewers = append(r.Viewers, Viewer{ID: p.ID, Handle: p.Handle, Description: fmt.Sprintf(
			"active reader following %d accounts (%d big-V): big-V posts are pushed to its inbox, so a page is one inbox seek",
			len(following[p.ID]), bigFollowed(p.ID))})
	}
	if p, ok := best(func(p person) bool { return !active[p.ID] && !big[p.ID] }, byFollowees); ok {
		r.Viewers = append(r.Viewers, Viewer{ID: p.ID, Handle: p.Handle, Description: fmt.Sprintf(
			"inactive reader following %d big-V authors: its first read merges their outboxes into the page, then it is upgraded in the background",
			bigFollowed(p.ID))})
	}
	if len(ranked) > 0 {
		p := ranked[0]
		what := "the most-followed author"
		if big[p.ID] {
			what = "a big-V author"
		}
		r.Viewers = append(r.Viewers, Viewer{ID: p.ID, Handle: p.Handle, Description: fmt.Sprintf(
			"%s (%d followers, threshold %d): publish as it and watch only active followers get the push",
			what, followers[p.ID], threshold)})
	}
	return r
}
