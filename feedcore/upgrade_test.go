package feedcore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// TestUpgradeWritesOneInboxWorth: a quiet reader following many big-V
// authors, each with more posts than the inbox holds, is upgraded with one
// inbox's worth of entries (the newest cap of all of them, merged), not a
// cap of each; the inbox then holds exactly those, and the feed read through
// it and the outboxes below its horizon is every post, newest first.
func TestUpgradeWritesOneInboxWorth(t *testing.T) {
	const inboxCap, authors, each = 24, 6, 30
	clk := clockAt(testEpoch)
	s := testService(t, Options{BigVThreshold: 1, InboxCap: inboxCap, ActiveWindow: time.Hour, Now: clk.now})
	ctx := context.Background()
	const reader = 100
	mustUsers(t, s, reader, 101)
	var bigs, all []store.ID
	for a := store.ID(1); a <= authors; a++ {
		mustUsers(t, s, a)
		follow(t, s, 101, []store.ID{a}) // a second follower makes a big-V
		bigs = append(bigs, a)
	}
	follow(t, s, reader, bigs)
	for i := 0; i < each; i++ {
		for _, a := range bigs {
			clk.advance(time.Millisecond)
			all = append(all, publishN(t, s, a, 1)...)
		}
	}
	drain(t, s)
	before := s.Stats().InboxWrites
	edges := make([]Edge, len(bigs))
	for i, a := range bigs {
		edges[i] = Edge{Follower: reader, Followee: a}
	}
	n, err := s.Backfill(ctx, []core.Timeline{s.PostsTL()}, edges)
	if err != nil {
		t.Fatal(err)
	}
	if n != inboxCap {
		t.Fatalf("backfill of %d followees with %d posts each copied %d entries, want the cap, %d", authors, each, n, inboxCap)
	}
	inbox, err := s.Newest(ctx, s.Keys.Inbox(reader), 10*inboxCap)
	if err != nil {
		t.Fatal(err)
	}
	want := newestFirst(all)[:inboxCap]
	if got := idsOfItems(inbox); !slices.Equal(got, want) {
		t.Fatalf("inbox after the backfill holds %v, want the %d newest %v", got, inboxCap, want)
	}
	if err := s.Touch(ctx, reader); err != nil { // and the upgrade itself
		t.Fatal(err)
	}
	drain(t, s)
	if w := s.Stats().InboxWrites - before; w != 0 {
		t.Fatalf("upgrade made %d fan-out writes, want none", w)
	}
	if got := readAll(t, s, reader, 7); !slices.Equal(got, newestFirst(all)) {
		t.Fatalf("upgraded reader's feed is %v, want %v", got, newestFirst(all))
	}
}

func idsOfItems(items []store.Item) []store.ID {
	out := make([]store.ID, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}
