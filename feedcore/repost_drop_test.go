package feedcore

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestDeletingTakesRepostsBack: deleting a reposted post takes every
// repost of it back through the workers: each record tombstoned, out of
// its reposter's outbox and its followers' inboxes, the original's set of
// reposts all taken back. The reposts leave every feed at once, whatever
// the workers have done. FEED_REPOSTS=10000 times a post reposted that often
// (real Redis: FEED_TEST_REDIS).
func TestDeletingTakesRepostsBack(t *testing.T) {
	n := 300
	if v, err := strconv.Atoi(os.Getenv("FEED_REPOSTS")); err == nil {
		n = v
	}
	s := newService(t, storetest.New(t), Options{})
	startWorkers(t, s, WorkerOptions{})
	ctx := context.Background()
	const author, reader = store.ID(1), store.ID(2)
	mustUsers(t, s, author, reader)
	reposters := idRange(1000, n)
	putUsers(t, s, reposters)
	follow(t, s, reader, reposters[:min(n, 100)])
	orig, err := s.Publish(ctx, author, "reposted a lot")
	if err != nil {
		t.Fatal(err)
	}
	recs := make([]*content.Post, n)
	at := time.Now().UTC().Truncate(time.Millisecond)
	for i, u := range reposters {
		recs[i] = &content.Post{ID: store.ID(1_000_000 + i), Author: u, CreatedAt: at.Add(time.Duration(i) * time.Millisecond), RepostOf: orig.ID}
	}
	for lo := 0; lo < n; lo += 1000 {
		if _, err := s.PutReposts(ctx, recs[lo:min(lo+1000, n)]); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	// The reader's inbox holds its followees' reposts; the window shows
	// only the first of them.
	if in, err := s.Newest(ctx, s.Keys.Inbox(reader), 200); err != nil || len(in) != min(n, 100) {
		t.Fatalf("the reader's inbox holds %d items (%v), want its %d followees' reposts", len(in), err, min(n, 100))
	}
	if got := readAll(t, s, reader, 100); len(got) != 1 || got[0] != recs[0].ID {
		t.Fatalf("the reader's feed holds %v, want the first repost, %d", got, recs[0].ID)
	}
	start := time.Now()
	if err := s.Delete(ctx, author, orig.ID); err != nil {
		t.Fatal(err)
	}
	// At once, whatever the workers did yet: the page reads the original.
	if got := readAll(t, s, reader, 100); len(got) != 0 {
		t.Fatalf("at once: the reader's feed holds %v, reposts of a deleted post", got)
	}
	drain(t, s)
	took := time.Since(start)
	t.Logf("%d reposts of a deleted post taken back in %v", n, took.Round(time.Millisecond))
	live, err := s.Reposted(ctx, reposters[0], []store.ID{orig.ID})
	if err != nil || live[0] {
		t.Fatalf("reposter %d still reposts it: %v, %v", reposters[0], live, err)
	}
	ps, err := s.Posts(ctx, store.CmdsFor(recs, func(r *content.Post) store.ID { return r.ID }))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range ps {
		if p == nil || !p.Deleted {
			t.Fatalf("repost %d of %d not tombstoned: %+v", i, n, p)
		}
	}
	for _, u := range []store.ID{reposters[0], reposters[n-1]} {
		if got, err := s.Newest(ctx, s.Keys.Outbox(u), 10); err != nil || len(got) != 0 {
			t.Fatalf("reposter %d's outbox: %v, %v", u, got, err)
		}
	}
	if got, err := s.Newest(ctx, s.Keys.Inbox(reader), 10); err != nil || len(got) != 0 {
		t.Fatalf("the reader's inbox: %v, %v", got, err)
	}
	rb, err := s.Redis.Do(ctx, s.Redis.B().Hvals().Key(s.Keys.Reposts(orig.ID)).Build()).AsStrSlice()
	if err != nil || len(rb) != n {
		t.Fatalf("the original's set of reposts: %d entries, %v", len(rb), err)
	}
	for _, v := range rb {
		if v[0] != '-' {
			t.Fatal("a repost is still live in the original's set")
		}
	}
}
