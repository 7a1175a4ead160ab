package feedcore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/store"
)

// The count follows the page's rules as the viewer changes them: a block
// takes the blocked author's new post out of the count and reports it,
// and the blocked author's post on the viewer's screen, as deleted; a
// mute likewise; a keyword filter takes out the posts it matches; an
// unmute brings the muted author's post back.
func TestRealtimeCountFollowsTheViewersRules(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	const viewer, blocked, muted, plain = 1, 2, 3, 4
	mustUsers(t, s, viewer, blocked, muted, plain)
	follow(t, s, viewer, []store.ID{blocked, muted, plain})
	onScreen, err := s.Publish(ctx, blocked, "on screen")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	since := topCursor(t, s, viewer)
	post := map[store.ID]store.ID{}
	for _, a := range []store.ID{blocked, muted, plain} {
		p, err := s.Publish(ctx, a, "news from "+store.FormatID(a))
		if err != nil {
			t.Fatal(err)
		}
		post[a] = p.ID
	}
	drain(t, s)
	startRealtime(t, s, rtOptions)
	u := &updates{ch: followingUpdates(t, s, viewer, since)}
	// Newest first, as the ids order them: on a cluster the three authors'
	// posts come from three stream shards' clocks, not in publish order.
	_, authors := newPostsOracle(t, s, viewer, since)
	u.awaitCount(t, 3, authors)

	if err := s.Block(ctx, viewer, blocked); err != nil {
		t.Fatal(err)
	}
	u.await(t, "the block", func(u *updates) bool {
		return u.last.NewPostCount == 2 && slices.Contains(u.deleted, post[blocked]) && slices.Contains(u.deleted, onScreen.ID)
	})
	if err := s.Mute(ctx, viewer, muted, 0); err != nil {
		t.Fatal(err)
	}
	u.await(t, "the mute", func(u *updates) bool {
		return u.last.NewPostCount == 1 && slices.Contains(u.deleted, post[muted])
	})
	if _, err := s.AddKeywordFilter(ctx, KeywordFilter{User: viewer, Keyword: "news", WholeWord: true}); err != nil {
		t.Fatal(err)
	}
	u.awaitCount(t, 0, []store.ID{})
	if err := s.Unmute(ctx, viewer, muted); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, muted, "back again"); err != nil {
		t.Fatal(err)
	}
	u.awaitCount(t, 1, []store.ID{muted})
}

// Notices within Options.MinInterval of the last update are coalesced:
// with an hour's interval, three posts after the first update make no
// second one, and are counted coalesced but the first.
func TestRealtimeCoalesces(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	follow(t, s, 1, []store.ID{2})
	drain(t, s)
	since := ""
	if _, err := s.Publish(ctx, 1, "own"); err != nil { // an item to count from
		t.Fatal(err)
	}
	drain(t, s)
	since = topCursor(t, s, 1)
	if _, err := s.Publish(ctx, 2, "first"); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	o := rtOptions
	o.MinInterval = time.Hour
	startRealtime(t, s, o)
	u := &updates{ch: followingUpdates(t, s, 1, since)}
	u.awaitCount(t, 1, []store.ID{2})
	before := s.RealtimeStats()
	for range 3 {
		if _, err := s.Publish(ctx, 2, "more"); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	waitFor(t, "the three notices", func() bool {
		st := s.RealtimeStats()
		return st.NoticesReceived >= before.NoticesReceived+3 && st.NoticesCoalesced >= before.NoticesCoalesced+2
	})
	if u.take(); u.n != 1 {
		t.Fatalf("%d updates within the interval, want the first alone; last %+v", u.n, u.last)
	}
}

// An account deleted takes its posts out of every feed without a fan-out
// of their removal: the subscriptions recount, and report them deleted.
func TestRealtimeAccountDeletion(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	follow(t, s, 1, []store.ID{2, 3})
	if _, err := s.Publish(ctx, 3, "stays"); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	since := topCursor(t, s, 1)
	p, err := s.Publish(ctx, 2, "goes")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	startRealtime(t, s, rtOptions)
	u := &updates{ch: followingUpdates(t, s, 1, since)}
	u.awaitCount(t, 1, []store.ID{2})
	if err := s.DeleteAccount(ctx, 2, "u2"); err != nil {
		t.Fatal(err)
	}
	u.await(t, "the deletion", func(u *updates) bool { return u.last.NewPostCount == 0 && slices.Contains(u.deleted, p.ID) })
}
