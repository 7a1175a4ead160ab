package feedcore

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
)

// TestRebuildConversations: with every derived structure dropped, the
// parents' sets of replies and the originals' sets of reposts among them,
// Rebuild brings back every feed (the reply rule, the window), every
// post's replies, and the comments and reposts counters, an imported
// base included.
func TestRebuildConversations(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 21))
	clk := clockAt(testEpoch)
	s := testService(t, Options{InboxCap: 6, BigVThreshold: 3, ActiveWindow: time.Hour, Now: clk.now})
	ctx := context.Background()
	r := &modelRun{t: t, s: s, m: newOracle(clk.now), clk: clk, rng: rng}
	for u := store.ID(1); u <= modelUsers; u++ {
		mustUsers(t, s, u)
		r.m.follows[u] = map[store.ID]bool{}
	}
	for step := 0; step < 200; step++ {
		switch op := rng.IntN(10); {
		case op < 2:
			r.publish()
		case op < 4:
			r.reply()
		case op < 6:
			r.repost()
		case op < 7:
			r.undoRepost()
		case op < 8:
			r.deleteRandomPost()
		case op < 9:
			r.follow()
		default:
			r.must(s.Touch(ctx, r.user()))
		}
	}
	// An imported base: the first post with replies counts 40 more.
	var based *content.Post
	for _, p := range r.livePosts() {
		if r.m.commentCount(p.ID) > 0 {
			based = p
			break
		}
	}
	if based == nil {
		t.Fatal("no post has replies: the test proves nothing")
	}
	r.must(s.SetCounts(ctx, based.ID, PostCounts{Comments: r.m.commentCount(based.ID) + 40, Reposts: r.m.repostCount(based.ID) + 7}))
	drain(t, s)
	observe := func() (feeds map[store.ID][]store.ID, counts []PostCounts, replies map[store.ID][]store.ID) {
		feeds, replies = map[store.ID][]store.ID{}, map[store.ID][]store.ID{}
		for v := store.ID(1); v <= modelUsers; v++ {
			feeds[v] = readAll(t, s, v, 3)
		}
		ps := r.livePosts()
		ids := store.CmdsFor(ps, func(p *content.Post) store.ID { return p.ID })
		counts, err := s.PostCounts(ctx, ids)
		r.must(err)
		for _, id := range ids {
			replies[id] = r.readReplies(1, id, 2)
		}
		return feeds, counts, replies
	}
	feeds, counts, replies := observe()
	for v := store.ID(1); v <= modelUsers; v++ {
		if want := r.m.feed(v); !slices.Equal(feeds[v], want) {
			t.Fatalf("before rebuild, viewer %d:\n got %v\nwant %v", v, feeds[v], want)
		}
	}
	derived := append(slices.Clone(derivedPatterns), "rl:{", "rb:{")
	prev := derivedPatterns
	derivedPatterns = derived
	n := dropDerived(t, s)
	derivedPatterns = prev
	if n == 0 {
		t.Fatal("no derived key to drop")
	}
	// Counters drift as if the sets were lost with counts kept.
	r.must(s.Redis.Do(ctx, s.Redis.B().Hset().Key(s.Keys.PostCounts(based.ID)).FieldValue().FieldValue("c", "999").Build()).Error())
	st, err := s.Rebuild(ctx, RebuildOptions{Batch: 7})
	r.must(err)
	if st.Replies == 0 || st.Reposts == 0 {
		t.Fatalf("stats %+v", st)
	}
	drain(t, s)
	gotFeeds, gotCounts, gotReplies := observe()
	for v := store.ID(1); v <= modelUsers; v++ {
		if !slices.Equal(gotFeeds[v], feeds[v]) {
			t.Errorf("after rebuild, viewer %d:\n got %v\nwant %v", v, gotFeeds[v], feeds[v])
		}
	}
	if !slices.Equal(gotCounts, counts) {
		t.Errorf("after rebuild, counters:\n got %v\nwant %v", gotCounts, counts)
	}
	for id, want := range replies {
		if !slices.Equal(gotReplies[id], want) {
			t.Errorf("after rebuild, replies of %d: got %v, want %v", id, gotReplies[id], want)
		}
	}
}
