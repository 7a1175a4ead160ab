package feedcore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestConversationPageCost: a warm page of a feed full of replies and
// reposts (some left out by the rules and the window) costs at most twice
// the Redis reply bytes of a warm page of plain posts: what the items
// need besides their hashes (originals, the viewer's follows and hides of
// the authors they name) is served by the client-side cache, and only
// the first seek, which carries room for the window, is larger. A plain
// page after one that decided within a short first batch reads short,
// and costs less again. Cold pages are logged for the record.
func TestConversationPageCost(t *testing.T) {
	st := storetest.New(t)
	s := newService(t, st, Options{})
	startWorkers(t, s, WorkerOptions{})
	ctx := context.Background()
	const plain, conv = store.ID(1), store.ID(2)
	posters, talkers, stranger := idRange(11, 10), idRange(31, 10), store.ID(99)
	mustUsers(t, s, plain, conv, stranger)
	putUsers(t, s, posters)
	putUsers(t, s, talkers)
	follow(t, s, plain, posters)
	follow(t, s, conv, talkers)
	clk := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	next := store.ID(1000)
	put := func(p *content.Post) {
		t.Helper()
		next++
		p.ID, p.Text, p.CreatedAt = next, fmt.Sprintf("post %d, of the length of a short post: some forty characters", next), clk
		clk = clk.Add(time.Second)
		if p.RepostOf != 0 {
			if _, err := s.PutReposts(ctx, []*content.Post{p}); err != nil {
				t.Fatal(err)
			}
			return
		}
		if err := s.PutPost(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	var strangers []store.ID
	for range 20 {
		put(&content.Post{Author: stranger})
		strangers = append(strangers, next)
	}
	for i := range 120 {
		put(&content.Post{Author: posters[i%10]})
		talker := talkers[i%10]
		// Of every eight: a repost of the stranger's post (each twice, far
		// apart, by two talkers), a reply to the stranger (left out), a
		// reply to a followee, a post and a repost of it close by (left
		// out), and posts.
		switch i % 8 {
		case 0:
			k := i / 8
			put(&content.Post{Author: talkers[(k+k/10)%10], RepostOf: strangers[k%10]})
		case 1:
			put(&content.Post{Author: talker, ReplyTo: strangers[i%20]})
		case 2:
			put(&content.Post{Author: talker, ReplyTo: next - 4})
		case 3:
			put(&content.Post{Author: talker})
			put(&content.Post{Author: talkers[(i+1)%10], RepostOf: next})
		default:
			put(&content.Post{Author: talker})
		}
	}
	for _, v := range []store.ID{plain, conv} {
		if err := s.Touch(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	cs, bytes := countedService(t, st, Options{})
	page := func(v store.ID) (n int, reply int64) {
		t.Helper()
		before := bytes.Load()
		pg, err := cs.FollowingFeed(ctx, FeedRequest{Viewer: v, First: 20})
		if err != nil {
			t.Fatal(err)
		}
		return len(pg.Edges), bytes.Load() - before
	}
	var warm [2]int64
	for i, v := range []store.ID{plain, conv} {
		n, cold := page(v)
		_, w := page(v)
		warm[i] = w
		t.Logf("viewer %d (%s): page of %d, %d reply bytes cold, %d warm", v, map[store.ID]string{plain: "plain posts", conv: "replies and reposts"}[v], n, cold, w)
		if n != 20 {
			t.Fatalf("viewer %d: page of %d", v, n)
		}
	}
	// The plain viewer's warm page read a short first batch (its first
	// page decided within one); read deep, as after a page with reposts,
	// it is the measure for the conversation's, which reads deep.
	note, _ := cs.Readers.Get(plain)
	note.Deep = true
	cs.Readers.Put(plain, note)
	_, deep := page(plain)
	t.Logf("viewer %d: a warm page read deep, %d reply bytes", plain, deep)
	if st.Real && warm[0] >= deep {
		t.Errorf("a warm page of plain posts read short costs %d reply bytes, read deep %d: the short batch read no less", warm[0], deep)
	}
	if st.Real && warm[1] > 2*deep {
		t.Errorf("a warm page of replies and reposts costs %d reply bytes, more than twice the %d of plain posts", warm[1], deep)
	}
}
