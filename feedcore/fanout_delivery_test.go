package feedcore

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/live"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/redisstore/storetest"
)

// waitFor polls cond until it holds, failing the test after a deadline.
func waitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func outboxIDs(tb testing.TB, s *Service, author store.ID) []store.ID {
	tb.Helper()
	return timelineIDs(tb, s, s.Keys.Outbox(author))
}

// timelineIDs lists the ids in a timeline key, newest first.
func timelineIDs(tb testing.TB, s *Service, key string) []store.ID {
	tb.Helper()
	items, err := s.Newest(context.Background(), key, 1000)
	if err != nil {
		tb.Fatal(err)
	}
	ids := make([]store.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids
}

// TestPublishIdempotent: a retry with the same key returns the first
// attempt's post and creates nothing; keys are per author.
func TestPublishIdempotent(t *testing.T) {
	s := testService(t, Options{StreamShards: 3}) // several shards on every lane
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	if err := s.Follow(ctx, 3, 1); err != nil {
		t.Fatal(err)
	}
	first, err := s.PublishOnce(ctx, 1, "hello", "k1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.PublishOnce(ctx, 1, "hello, edited", "k1")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again, first) {
		t.Fatalf("retry returned %+v, want the first attempt's %+v", again, first)
	}
	other, err := s.PublishOnce(ctx, 2, "hello", "k1")
	if err != nil || other.ID == first.ID {
		t.Fatalf("another author's post with the same key: %+v, %v", other, err)
	}
	second, err := s.PublishOnce(ctx, 1, "hello", "k2")
	if err != nil || second.ID == first.ID {
		t.Fatalf("a new key: %+v, %v", second, err)
	}
	drain(t, s)
	if got, want := readAll(t, s, 3, 5), []store.ID{second.ID, first.ID}; !slices.Equal(got, want) {
		t.Fatalf("follower's feed %v, want %v", got, want)
	}
	if got := outboxIDs(t, s, 1); len(got) != 2 {
		t.Fatalf("author's outbox %v, want 2 posts", got)
	}
	_, err = s.PublishOnce(ctx, 1, "x", strings.Repeat("k", timeline.MaxIdempotencyKey+1))
	wantCode(t, "key too long", err, apierr.BadInput)
}

// TestPublishFinishedByWorkers: a publish whose request died right after
// logging its event (nothing materialized) is finished by the workers: the
// post is stored and reaches the author's and every follower's feed.
func TestPublishFinishedByWorkers(t *testing.T) {
	st := storetest.New(t)
	s := newService(t, st, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	if err := s.Follow(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	p, err := s.LogPublish(ctx, 1, NewPost{Text: "logged only"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if ps, err := s.Posts(ctx, []store.ID{p.ID}); err != nil || ps[0] != nil {
		t.Fatalf("post stored before any worker ran: %v, %v", ps[0], err)
	}
	startWorkers(t, s, WorkerOptions{})
	drain(t, s)
	ps, err := s.Posts(ctx, []store.ID{p.ID})
	if err != nil || ps[0] == nil || ps[0].Text != "logged only" || !ps[0].CreatedAt.Equal(p.CreatedAt) {
		t.Fatalf("post after the workers: %+v, %v", ps[0], err)
	}
	for _, reader := range []store.ID{1, 2} {
		if got := readAll(t, s, reader, 3); !slices.Equal(got, []store.ID{p.ID}) {
			t.Fatalf("reader %d feed %v, want [%d]", reader, got, p.ID)
		}
	}
}

// TestNoGhostWhenTheLogFails: when the event cannot be appended (here its
// stream key holds the wrong type, a fault Redis reports at once), the
// publish fails and nothing of the post exists anywhere; a retry with the
// same key, once the fault is gone, publishes it once.
func TestNoGhostWhenTheLogFails(t *testing.T) {
	st := storetest.New(t)
	s := newService(t, st, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	if err := s.Follow(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	events := s.Keys.Events(s.ShardOf(1))
	if err := s.Redis.Do(ctx, s.Redis.B().Del().Key(events).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := s.Redis.Do(ctx, s.Redis.B().Set().Key(events).Value("broken").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishOnce(ctx, 1, "lost", "k"); err == nil {
		t.Fatal("publish succeeded with its events stream broken")
	}
	if got := outboxIDs(t, s, 1); len(got) != 0 {
		t.Fatalf("a failed publish left %v in the outbox", got)
	}
	// (A feed read would fail too: it queues the reader's activation on
	// the same broken stream.)
	for _, reader := range []store.ID{1, 2} {
		if n, err := s.Redis.Do(ctx, s.Redis.B().Zcard().Key(s.Keys.Inbox(reader)).Build()).AsInt64(); err != nil || n != 0 {
			t.Fatalf("a failed publish left %d entries in reader %d's inbox (%v)", n, reader, err)
		}
	}
	if keys, err := storetest.Keys(ctx, st.Client, s.Keys.Prefix+"p:"); err != nil || len(keys) != 0 {
		t.Fatalf("a failed publish left post hashes %v (%v)", keys, err)
	}
	if err := s.Redis.Do(ctx, s.Redis.B().Del().Key(events).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	startWorkers(t, s, WorkerOptions{})
	p, err := s.PublishOnce(ctx, 1, "lost", "k")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	for _, reader := range []store.ID{1, 2} {
		if got := readAll(t, s, reader, 3); !slices.Equal(got, []store.ID{p.ID}) {
			t.Fatalf("reader %d feed %v, want [%d]", reader, got, p.ID)
		}
	}
}

// TestDeadLetters: an entry no worker can read goes to the dead letters at
// once; one that fails every time goes there after MaxDeliveries; both are
// counted, and the backlog drains.
func TestDeadLetters(t *testing.T) {
	st := storetest.New(t)
	s := newService(t, st, Options{StreamShards: 1})
	ctx := context.Background()
	startWorkers(t, s, WorkerOptions{ReclaimIdle: 100 * time.Millisecond, MaxDeliveries: 3})
	// No user field: malformed.
	if err := s.Redis.Do(ctx, s.Redis.B().Xadd().Key(s.Keys.Events(0)).Id("*").FieldValue().FieldValue("t", core.EvPublish).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	// A task whose target set is not a sorted set fails every time.
	bad := s.Keys.Prefix + "not-a-set"
	if err := s.Redis.Do(ctx, s.Redis.B().Set().Key(bad).Value("x").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	tk := timeline.Task{Type: core.EvPublish, Author: 1, Item: store.Item{TS: 1, ID: 1}, Set: bad, Lo: "-", Hi: "+"}
	if err := s.Redis.Do(ctx, s.Redis.B().Xadd().Key(s.Keys.Tasks(0)).Id("*").FieldValue().
		FieldValue("t", tk.Type).FieldValue("u", "1").FieldValue("p", "1").FieldValue("s", "1").
		FieldValue("set", tk.Set).FieldValue("lo", tk.Lo).FieldValue("hi", tk.Hi).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "two dead letters", func() bool {
		n, err := s.DeadLetters(ctx)
		return err == nil && n == 2
	})
	drain(t, s)
	if got := s.Stats().DeadLetters; got != 2 {
		t.Fatalf("Stats.DeadLetters = %d, want 2", got)
	}
	dl, err := s.Redis.Do(ctx, s.Redis.B().Xrange().Key(s.Keys.DeadLetters(0)).Start("-").End("+").Build()).AsXRange()
	if err != nil || len(dl) != 2 {
		t.Fatalf("dead letters %v, %v", dl, err)
	}
	reasons := dl[0].FieldValues["dl.reason"] + " | " + dl[1].FieldValues["dl.reason"]
	if !strings.Contains(reasons, "malformed") || !strings.Contains(reasons, "delivered 3 times") {
		t.Fatalf("dead letter reasons %q", reasons)
	}
}

// TestJournalRepairsDeadMutations: follows, unfollows and live changes
// whose requests died after changing their record of truth are completed
// by the workers, everywhere.
func TestJournalRepairsDeadMutations(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	// The follow that lives settles before it answers, so the repairs
	// below are the three mutations that die.
	s := newService(t, st, Options{StreamShards: 3, SettleFollow: func(settle func(context.Context) error) {
		if err := settle(ctx); err != nil {
			t.Error(err)
		}
	}})
	mustUsers(t, s, 1, 2, 3)
	if err := s.Follow(ctx, 3, 2); err != nil {
		t.Fatal(err)
	}
	p, err := s.Publish(ctx, 2, "from 2")
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.ScheduleLive(ctx, 2, "show", s.Opts.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartLive(ctx, 2, l.ID); err != nil {
		t.Fatal(err)
	}
	// Three mutations that die right after their record of truth changed:
	// 1 follows 2, 3 unfollows 2, 2 ends its live session.
	die := func(shard int, fields ...string) {
		if _, err := s.Begin(ctx, shard, fields...); err != nil {
			t.Fatal(err)
		}
	}
	die(s.ShardOf(1), "k", timeline.JEdges, "e", core.EncodeEdges([]Edge{{Follower: 1, Followee: 2}}))
	if _, err := s.AddFollowing(ctx, []Edge{{Follower: 1, Followee: 2}}, nil); err != nil {
		t.Fatal(err)
	}
	die(s.ShardOf(3), "k", timeline.JEdges, "e", core.EncodeEdges([]Edge{{Follower: 3, Followee: 2}}))
	if err := s.Redis.Do(ctx, s.Redis.B().Zrem().Key(s.Keys.Following(3)).Member(store.Member(2)).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	die(s.ShardOf(2), "k", live.JLive, "a", "2", "p", store.FormatID(l.ID))
	if _, err := s.Transition(ctx, 2, l.ID, "e", s.NowMS()); err != nil {
		t.Fatal(err)
	}
	counts, err := s.Counts(ctx, []store.ID{2})
	if err != nil || counts[0].Followers != 1 {
		t.Fatalf("before the repair, 2 has %+v followers (%v): want the half-done state, 1", counts, err)
	}

	startWorkers(t, s, WorkerOptions{RepairAfter: 50 * time.Millisecond})
	drain(t, s)
	if s.Stats().Repairs != 3 {
		t.Fatalf("repairs = %d, want 3", s.Stats().Repairs)
	}
	counts, err = s.Counts(ctx, []store.ID{1, 2, 3})
	if err != nil || counts[1].Followers != 1 || counts[0].Following != 1 || counts[2].Following != 0 {
		t.Fatalf("counts after the repair: %+v, %v", counts, err)
	}
	if got := readAll(t, s, 1, 3); !slices.Equal(got, []store.ID{p.ID}) {
		t.Fatalf("new follower's feed %v, want [%d]", got, p.ID)
	}
	if got := readAll(t, s, 3, 3); len(got) != 0 {
		t.Fatalf("unfollower's feed %v, want empty", got)
	}
	if n, err := s.Redis.Do(ctx, s.Redis.B().Zcard().Key(s.Keys.LiveQueue(2)).Build()).AsInt64(); err != nil || n != 0 {
		t.Fatalf("ended session still queued: %d, %v", n, err)
	}
	if got := timelineIDs(t, s, s.Keys.ReplayOutbox(2)); !slices.Equal(got, []store.ID{l.ID}) {
		t.Fatalf("replay outbox %v, want [%d]", got, l.ID)
	}
}

// TestLockReleasesOnlyItsOwn: a lock that expired while its holder worked,
// and was taken by another worker, is not released by the first holder.
func TestLockReleasesOnlyItsOwn(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	ok, err := s.WithLock(ctx, 7, func(context.Context) error {
		// Our lock expires and another worker takes it.
		return s.Redis.Do(ctx, s.Redis.B().Set().Key(s.Keys.Lock(7)).Value("other").Build()).Error()
	})
	if !ok || err != nil {
		t.Fatalf("withLock = %v, %v", ok, err)
	}
	if got, err := s.Redis.Do(ctx, s.Redis.B().Get().Key(s.Keys.Lock(7)).Build()).ToString(); err != nil || got != "other" {
		t.Fatalf("the other worker's lock is %q (%v) after we released ours", got, err)
	}
	if ok, err := s.WithLock(ctx, 7, func(context.Context) error { return nil }); ok || err != nil {
		t.Fatalf("took a lock another holds: %v, %v", ok, err)
	}
}

// TestWaitReplicas: with WaitReplicas, a mutation is acknowledged only once
// replicas have its commit write. On a cluster (a replica per master) it
// goes through; on a lone Redis no replica ever confirms, so the publish
// answers UNAVAILABLE, and its retry with the same key, once replicas are
// not required, returns the same post.
func TestWaitReplicas(t *testing.T) {
	storetest.RequireReal(t)
	st := storetest.New(t)
	ctx := context.Background()
	s := newService(t, st, Options{WaitReplicas: 1, WaitTimeout: 200 * time.Millisecond})
	mustUsers(t, s, 1, 2)
	if st.Cluster() {
		if err := s.Follow(ctx, 2, 1); err != nil {
			t.Fatal(err)
		}
		p, err := s.PublishOnce(ctx, 1, "replicated", "k")
		if err != nil {
			t.Fatalf("publish waiting for a replica on a cluster: %v", err)
		}
		if _, _, err := s.Like(ctx, 2, p.ID); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, 1, p.ID); err != nil {
			t.Fatal(err)
		}
		return
	}
	first, err := s.PublishOnce(ctx, 1, "unreplicated", "k")
	if store.CodeOf(err) != apierr.Unavailable || !errors.Is(err, store.ErrNotReplicated) {
		t.Fatalf("publish with no replica to wait for: %v, %v; want UNAVAILABLE", first, err)
	}
	plain := newService(t, st, Options{})
	again, err := plain.PublishOnce(ctx, 1, "unreplicated", "k")
	if err != nil {
		t.Fatal(err)
	}
	if got := outboxIDs(t, plain, 1); len(got) != 1 || got[0] != again.ID {
		t.Fatalf("outbox %v after the retry, want only %d", got, again.ID)
	}
}
