package feedcore

import (
	"context"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// A post made on replica B, fanned out by B's workers, reaches a
// subscriber on replica A over the store they share: by sharded pub/sub
// on Redis, by the process's bus on the embedded store.
func TestRealtimeAcrossReplicas(t *testing.T) {
	st := storetest.New(t)
	a, b := newService(t, st, Options{}), newService(t, st, Options{})
	startWorkers(t, b, WorkerOptions{})
	mustUsers(t, b, 1, 2)
	follow(t, b, 1, []store.ID{2})
	drain(t, b)
	startRealtime(t, a, rtOptions)
	u := &updates{ch: followingUpdates(t, a, 1, "")}
	p, err := b.Publish(context.Background(), 2, "from B")
	if err != nil {
		t.Fatal(err)
	}
	u.awaitCount(t, 1, []store.ID{2})
	if err := b.Delete(context.Background(), 2, p.ID); err != nil {
		t.Fatal(err)
	}
	u.await(t, "the delete from B", func(u *updates) bool { return u.last.NewPostCount == 0 && len(u.deleted) == 1 && u.deleted[0] == p.ID })
}

// Presence gates the fan-out's notices: a post whose followers have no
// subscription open publishes none; with some of them subscribed it
// publishes at most one per subscriber (one per viewer bucket a chunk's
// present readers fall in), and each of them is told.
func TestRealtimePresenceGates(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	const author = 1
	mustUsers(t, s, author)
	followers := makeFollowers(t, s, author, 600) // two chunks
	drain(t, s)
	startRealtime(t, s, rtOptions)
	published := func() int64 { return s.RealtimeStats().NoticesPublished }
	before := published()
	if _, err := s.Publish(ctx, author, "nobody listens"); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	if n := published() - before; n != 0 {
		t.Fatalf("a post with no follower subscribed published %d notices", n)
	}
	var subs []*updates
	for _, f := range []store.ID{followers[0], followers[299], followers[599]} {
		subs = append(subs, &updates{ch: followingUpdates(t, s, f, "")})
	}
	before = published()
	if _, err := s.Publish(ctx, author, "three listen"); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	for _, u := range subs {
		u.awaitCount(t, 1, []store.ID{author})
	}
	if n := published() - before; n < 1 || n > int64(len(subs)) {
		t.Fatalf("a post with %d of %d followers subscribed published %d notices", len(subs), len(followers), n)
	}
}

// A big-V author pushes to its active followers only; a follower it does
// not push to, with a subscription open, is told by the author's channel
// and counts the post its page merges on read. Replica A serves the
// subscription on a clock two hours behind replica B, which runs the
// workers: to B the follower's reads are too old to make it active, so B
// never pushes to it, and A's reads, on a clock that stands still, never
// ask for its upgrade again.
func TestRealtimeBigVMergedOnRead(t *testing.T) {
	st := storetest.New(t)
	o := Options{BigVThreshold: 5, ActiveWindow: time.Hour}
	oa, ob := o, o
	oa.Now, ob.Now = clockAt(testEpoch).now, clockAt(testEpoch.Add(2*time.Hour)).now
	a, b := newService(t, st, oa), newService(t, st, ob)
	startWorkers(t, b, WorkerOptions{})
	ctx := context.Background()
	const author = 1
	mustUsers(t, b, author)
	followers := makeFollowers(t, b, author, 10)
	if _, err := b.Publish(ctx, author, "promotes"); err != nil {
		t.Fatal(err)
	}
	drain(t, b)
	startRealtime(t, a, rtOptions)
	reader := followers[3]
	since := topCursor(t, a, reader)
	u := &updates{ch: followingUpdates(t, a, reader, since)}
	drain(t, b) // its upgrade, which finds it inactive
	writes := b.Stats().InboxWrites
	if _, err := b.Publish(ctx, author, "big news"); err != nil {
		t.Fatal(err)
	}
	u.awaitCount(t, 1, []store.ID{author})
	drain(t, b)
	if w := b.Stats().InboxWrites - writes; w != 0 {
		t.Fatalf("the big-V post made %d inbox writes, want none (no follower active)", w)
	}
}

// A presence set is never a listpack, whose lookups scan it: the fan-out
// asks every reader of a chunk, nearly all absent (presence.go).
func TestRealtimePresenceSetsStayHashed(t *testing.T) {
	storetest.RequireReal(t)
	s := testService(t, Options{})
	mustUsers(t, s, 1)
	startRealtime(t, s, rtOptions)
	followingUpdates(t, s, 1, "")
	key := s.Keys.Presence(store.PresenceBucket(1))
	enc, err := s.Redis.Do(context.Background(), s.Redis.B().ObjectEncoding().Key(key).Build()).ToString()
	if err != nil {
		t.Fatal(err)
	}
	if enc != "skiplist" {
		t.Fatalf("presence set %s is a %s, want a skiplist", key, enc)
	}
}
