package feedcore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestPulledBelowChangesNoPage: what a replica remembers of a reader's
// pulls below the inbox's horizon (core.Service.PulledBelow) saves round
// trips and changes no page. Random writes (posts new and old, follows,
// unfollows, deletions) raise the horizon and change whose outboxes a
// pull reads; between them the reader scrolls, and goes back to cursors
// it was given before, on one replica that remembers its pulls; every
// page is compared with the page a replica that never served the reader
// (a new Service on the same store) gives for the same cursor.
func TestPulledBelowChangesNoPage(t *testing.T) {
	forEachSeed(t, 6, 26_000, runPulledBelow)
}

func runPulledBelow(t *testing.T, seed uint64) {
	st := storetest.New(t)
	opts := Options{InboxCap: 6, BigVThreshold: 4}
	warm := newService(t, st, opts)
	startWorkers(t, warm, WorkerOptions{})
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(seed, 7))
	// More sources than a pull asks for its whole limit (perSource), and
	// one prolific author: its outbox's seeks fill before they reach the
	// horizon or the cursor.
	const reader, users = store.ID(1), 24
	mustUsers(t, warm, idRange(1, users)...)
	follow(t, warm, reader, idRange(2, 18))
	next, base := store.ID(1000), time.UnixMilli(1e12).UTC()
	authors := map[store.ID]store.ID{}
	publish := func(age time.Duration) {
		author := store.ID(1 + rng.IntN(users))
		if rng.IntN(3) == 0 {
			author = 2
		}
		p := &content.Post{ID: next, Author: author, Text: "p", CreatedAt: base.Add(time.Duration(next)*time.Second - age)}
		authors[next] = p.Author
		next++
		if err := warm.PutPost(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	for range 80 {
		publish(time.Duration(rng.IntN(3000)) * time.Second)
	}
	var cursors []string // every cursor the reader was given
	same := func(step int, after string) string {
		t.Helper()
		req := FeedRequest{Viewer: reader, First: 1 + rng.IntN(6), After: after}
		got, err := warm.FollowingFeed(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		want, err := newService(t, st, opts).FollowingFeed(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := pageIDs(got), pageIDs(want); !slices.Equal(g, w) || got.HasNext != want.HasNext {
			t.Fatalf("step %d, first %d after %q: the replica that remembers pulls shows %v (more: %v), a new one %v (more: %v)",
				step, req.First, after, g, got.HasNext, w, want.HasNext)
		}
		cursors = append(cursors, got.EndCursor)
		return got.EndCursor
	}
	for step := range 30 {
		switch op := rng.IntN(10); {
		case op < 4:
			publish(time.Duration(rng.IntN(2)) * time.Duration(rng.IntN(3000)) * time.Second)
		case op < 6:
			if err := warm.Follow(ctx, reader, store.ID(2+rng.IntN(users-1))); err != nil {
				t.Fatal(err)
			}
		case op < 7:
			if err := warm.Unfollow(ctx, reader, store.ID(2+rng.IntN(users-1))); err != nil {
				t.Fatal(err)
			}
		case op < 8:
			id := 1000 + store.ID(rng.IntN(int(next-1000)))
			if err := warm.Delete(ctx, authors[id], id); err != nil {
				t.Fatal(err)
			}
		}
		drain(t, warm)
		after := ""
		if len(cursors) > 0 && rng.IntN(2) == 0 {
			after = cursors[rng.IntN(len(cursors))] // back to an earlier place
		}
		for range 1 + rng.IntN(6) {
			after = same(step, after)
		}
	}
	if warm.PulledBelow.Len() == 0 {
		t.Fatal("the reader never paged below its inbox's horizon")
	}
}

// pageIDs are the ids of a page's items.
func pageIDs(pg *FeedPage) []string {
	ids := make([]string, len(pg.Edges))
	for i, e := range pg.Edges {
		ids[i] = fmt.Sprint(itemID(e))
	}
	return ids
}

// TestPulledBelowIsBounded: a replica remembers a pull below the horizon
// only for a reader who follows fewer than core.MaxPulledBelow accounts,
// so the memo holds at most PulledBelowViewers lists of that length, and
// forgets a reader who has since followed more.
func TestPulledBelowIsBounded(t *testing.T) {
	st := storetest.New(t)
	s := newService(t, st, Options{InboxCap: 4, BigVThreshold: 1 << 20})
	startWorkers(t, s, WorkerOptions{})
	ctx := context.Background()
	const reader = store.ID(1)
	few, many := idRange(10, 5), idRange(10, core.MaxPulledBelow)
	mustUsers(t, s, reader)
	putUsers(t, s, many)
	follow(t, s, reader, few)
	for i, a := range few {
		for k := range store.ID(3) {
			mustPost(t, s, 1000+10*store.ID(i)+k, a)
		}
	}
	drain(t, s)
	scroll := func() {
		t.Helper()
		after := ""
		for range 4 {
			pg, err := s.FollowingFeed(ctx, FeedRequest{Viewer: reader, First: 3, After: after})
			if err != nil {
				t.Fatal(err)
			}
			after = pg.EndCursor
		}
	}
	scroll()
	pull, ok := s.PulledBelow.Get(reader)
	if !ok || len(pull.Authors) != 1+len(few) {
		t.Fatalf("after a pull of %d followees the replica remembers %v (%v)", len(few), pull.Authors, ok)
	}
	follow(t, s, reader, many[len(few):])
	drain(t, s)
	scroll()
	if pull, ok := s.PulledBelow.Get(reader); ok {
		t.Fatalf("a reader who follows %d accounts is remembered with %d", len(many), len(pull.Authors))
	}
}
