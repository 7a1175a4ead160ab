package feedcore

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/moderation"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// accountWorld: user 1 (to be deleted) follows 4 and is followed by 2 and
// 3; 1 and 4 publish; 1 likes 4's post and 2 likes 1's; 1 mutes 2, 4
// hides its posts from 1, and 5 blocks 1.
type accountWorld struct {
	s        *Service
	clk      *clock
	own, its *content.Post // a post of 1's, a post of 4's
}

func newAccountWorld(t *testing.T, s *Service, clk *clock) accountWorld {
	t.Helper()
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4, 5)
	followEdges(t, s, []Edge{{Follower: 2, Followee: 1}, {Follower: 3, Followee: 1}, {Follower: 1, Followee: 4}, {Follower: 2, Followee: 4}})
	w := accountWorld{s: s, clk: clk}
	var err error
	if w.own, err = s.Publish(ctx, 1, "mine"); err != nil {
		t.Fatal(err)
	}
	if w.its, err = s.Publish(ctx, 4, "theirs"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Like(ctx, 1, w.its.ID); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Like(ctx, 2, w.own.ID); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []func() error{
		func() error { return s.Mute(ctx, 1, 2, 0) },
		func() error { return s.HidePostsFrom(ctx, 4, 1) },
		func() error { return s.Block(ctx, 5, 1) },
	} {
		if err := rel(); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	if got := readAll(t, s, 2, 10); !slices.Contains(got, w.own.ID) {
		t.Fatalf("before: 2's feed %v lacks 1's post", got)
	}
	drain(t, s) // the read's activation, before a test stops the workers
	return w
}

// check asserts every effect of 1's deletion.
func (w accountWorld) check(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	s := w.s
	for _, v := range []store.ID{2, 3} {
		if got := readAll(t, s, v, 10); slices.Contains(got, w.own.ID) {
			t.Errorf("user %d's feed %v still shows the deleted account's post", v, got)
		}
	}
	if got := readAll(t, s, 2, 10); !slices.Contains(got, w.its.ID) {
		t.Errorf("user 2's feed %v lost 4's post", got)
	}
	counts, err := s.Counts(ctx, []store.ID{1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	want := []GraphCounts{{Followers: 0, Following: 0}, {Followers: 0, Following: 1}, {Followers: 0, Following: 0}, {Followers: 1, Following: 0}}
	if !slices.Equal(counts, want) {
		t.Errorf("follow counts of 1..4 = %v, want %v", counts, want)
	}
	pc, err := s.PostCounts(ctx, []store.ID{w.its.ID})
	if err != nil {
		t.Fatal(err)
	}
	if pc[0].Likes != 0 {
		t.Errorf("4's post has %d likes, want 0 (1's like gone)", pc[0].Likes)
	}
	if liked, _ := s.Liked(ctx, 1, []store.ID{w.its.ID}); liked[0] {
		t.Error("1 still likes 4's post")
	}
	ps, err := s.Posts(ctx, []store.ID{w.own.ID})
	if err != nil || ps[0] == nil || !ps[0].Deleted || ps[0].Text != "" {
		t.Errorf("1's post = %+v, %v; want a tombstone without text", ps[0], err)
	}
	if u, err := s.Users(ctx, []store.ID{1}); err != nil || u[0] != nil {
		t.Errorf("profile of 1 = %+v, %v; want none", u[0], err)
	}
	if u, err := s.UserByHandle(ctx, "u1"); err != nil || u != nil {
		t.Errorf("UserByHandle(u1) = %+v, %v; want none", u, err)
	}
	if out := outboxIDs(t, s, 1); len(out) != 0 {
		t.Errorf("outbox of 1 = %v, want empty", out)
	}
	// No relation of 1's, nor anyone's naming 1, is left anywhere.
	for _, key := range []string{s.Keys.Blocks(5), s.Keys.HiddenAuthors(5), s.Keys.NoPush(2), s.Keys.Hides(4), s.Keys.NoPush(4), s.Keys.HiddenAuthors(4)} {
		if in, err := store.IsMember(s.Do(ctx, s.Redis.B().Zscore().Key(key).Member(store.Member(1)).Build())); err != nil || in {
			t.Errorf("%s still names user 1 (%v)", key, err)
		}
	}
	if b, err := s.Blocked(ctx, 5, 1); err != nil || b {
		t.Errorf("Blocked(5, 1) = %v, %v after the deletion", b, err)
	}
}

func TestDeleteAccountWrongHandle(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1)
	if err := s.DeleteAccount(ctx, 1, "someone"); store.CodeOf(err) != apierr.BadInput {
		t.Fatalf("wrong handle: %v, want BAD_USER_INPUT", err)
	}
	if u, _ := s.User(ctx, 1); u == nil {
		t.Fatal("a refused deletion deleted the profile")
	}
	if n, _ := s.Redis.Do(ctx, s.Redis.B().Exists().Key(s.Keys.Gone(s.ShardOf(1), 1)).Build()).AsInt64(); n != 0 {
		t.Fatal("a refused deletion wrote the gone marker")
	}
	if err := s.DeleteAccount(ctx, 9, "u9"); store.CodeOf(err) != apierr.Unauthenticated {
		t.Fatalf("no such user: %v, want UNAUTHENTICATED", err)
	}
}

func TestDeleteAccount(t *testing.T) {
	clk := clockAt(time.Now())
	s := testService(t, Options{Now: clk.now, HandleHold: time.Hour})
	w := newAccountWorld(t, s, clk)
	ctx := context.Background()
	if err := s.DeleteAccount(ctx, 1, "u1"); err != nil {
		t.Fatal(err)
	}
	w.check(t)
	// A retry succeeds again and changes nothing.
	if err := s.DeleteAccount(ctx, 1, "u1"); err != nil {
		t.Fatalf("retry: %v", err)
	}
	w.check(t)
	if err := s.DeleteAccount(ctx, 1, "u2"); store.CodeOf(err) != apierr.BadInput {
		t.Fatalf("retry with another handle: %v, want BAD_USER_INPUT", err)
	}

	// The account's requests are refused, with the rate limit off or on,
	// and a refused publish writes nothing.
	for _, l := range []RateLimit{{}, {Rate: 100, Burst: 100}} {
		ch := s.NewCharge(Subject{Viewer: 1}, 1, l)
		_, err := s.FollowingFeed(WithCharge(ctx, ch), FeedRequest{Viewer: 1, First: 5})
		if store.CodeOf(err) != apierr.Unauthenticated {
			t.Errorf("limit %+v: feed of a deleted account: %v, want UNAUTHENTICATED", l, err)
		}
		ch = s.NewWriteCharge(Subject{Viewer: 1}, 1, l)
		s.Known.Add(1) // a process that saw the user before
		if _, err := s.Publish(WithCharge(ctx, ch), 1, "after"); store.CodeOf(err) != apierr.Unauthenticated {
			t.Errorf("limit %+v: publish of a deleted account: %v, want UNAUTHENTICATED", l, err)
		}
	}
	if out := outboxIDs(t, s, 1); len(out) != 0 {
		t.Errorf("a refused publish wrote %v", out)
	}
	// Another viewer's charge is not refused.
	ch := s.NewCharge(Subject{Viewer: 2}, 1, RateLimit{})
	if _, err := s.FollowingFeed(WithCharge(ctx, ch), FeedRequest{Viewer: 2, First: 5}); err != nil {
		t.Errorf("feed of user 2 with a charge: %v", err)
	}

	// The handle is held, then free once the hold has passed.
	if err := s.PutUser(ctx, User{ID: 7, Handle: "u1"}); store.CodeOf(err) != apierr.BadInput {
		t.Fatalf("taking a held handle: %v, want BAD_USER_INPUT", err)
	}
	clk.advance(time.Hour + time.Second)
	if err := s.PutUser(ctx, User{ID: 7, Handle: "u1"}); err != nil {
		t.Fatalf("taking the handle after the hold: %v", err)
	}
	if u, err := s.UserByHandle(ctx, "u1"); err != nil || u == nil || u.ID != 7 {
		t.Fatalf("UserByHandle(u1) = %+v, %v; want user 7", u, err)
	}
}

// committedDeletion is an accountWorld whose deletion of 1 was committed
// by a request that died at once, with no worker running.
func committedDeletion(t *testing.T) (accountWorld, *clock) {
	t.Helper()
	clk := clockAt(time.Now())
	s := newService(t, storetest.New(t), Options{Now: clk.now})
	stop := startWorkers(t, s, WorkerOptions{})
	w := newAccountWorld(t, s, clk)
	stop()
	if _, err := s.CommitGone(context.Background(), 1, "u1"); err != nil {
		t.Fatal(err)
	}
	return w, clk
}

// TestDeleteAccountFinishedByWorkers: the request dies right after the
// commit; the journal's repair finishes the job.
func TestDeleteAccountFinishedByWorkers(t *testing.T) {
	w, clk := committedDeletion(t)
	s, ctx := w.s, context.Background()
	// Half the job ran before the request died: it resumes from there.
	if err := s.DropProfile(ctx, moderation.GoneAccount{User: 1, Handle: "u1", DeletedAt: clk.now().UnixMilli()}); err != nil {
		t.Fatal(err)
	}
	marker := s.Keys.Gone(s.ShardOf(1), 1)
	s.Do(ctx, s.Redis.B().Hset().Key(marker).FieldValue().FieldValue("ph", "1").Build())
	startWorkers(t, s, WorkerOptions{RepairAfter: 50 * time.Millisecond})
	waitFor(t, "the deletion job", func() bool {
		ph, _ := s.Redis.Do(ctx, s.Redis.B().Hget().Key(marker).Field("ph").Build()).AsInt64()
		return ph == int64(len(moderation.AccountPhases))
	})
	drain(t, s)
	w.check(t)
}

// TestDeleteAccountRebuild: a rebuild finishes an unfinished deletion and
// brings none of the account's posts back.
func TestDeleteAccountRebuild(t *testing.T) {
	w, _ := committedDeletion(t)
	s, ctx := w.s, context.Background()
	if _, err := s.Rebuild(ctx, RebuildOptions{Restart: true}); err != nil {
		t.Fatal(err)
	}
	w.check(t)
	if n, _ := s.Redis.Do(ctx, s.Redis.B().Xlen().Key(s.Keys.Journal(s.ShardOf(1))).Build()).AsInt64(); n != 0 {
		t.Errorf("journal after the rebuild: %d entries, want 0", n)
	}
}

// TestDeleteAccountScale measures deleting an account with 10,000
// followers (FEED_SCALE_FOLLOWERS to change it), each with the account's
// 20 posts in its inbox. Opt-in (FEED_SCALE=1), on either lane:
//
//	FEED_SCALE=1 go test ./feedcore -run TestDeleteAccountScale -v
//	FEED_SCALE=1 FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./feedcore -run TestDeleteAccountScale -v
func TestDeleteAccountScale(t *testing.T) {
	if os.Getenv(scaleEnv) == "" {
		t.Skipf("opt-in scale measurement: set %s=1", scaleEnv)
	}
	ctx := context.Background()
	s := testService(t, Options{})
	const author = 1
	n := scaleFollowers(t, 10000)
	mustUsers(t, s, author)
	buildFollowers(t, s, author, n)
	for i := range 20 {
		if _, err := s.Publish(ctx, author, "post "+store.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	reader := store.ID(author + n/2)
	if got := timelineIDs(t, s, s.Keys.Inbox(reader)); len(got) != 20 {
		t.Fatalf("reader %d's inbox holds %d posts before, want 20", reader, len(got))
	}
	start := time.Now()
	if err := s.DeleteAccount(ctx, author, "u1"); err != nil {
		t.Fatal(err)
	}
	d := time.Since(start)
	if got := timelineIDs(t, s, s.Keys.Inbox(reader)); len(got) != 0 {
		t.Fatalf("reader %d's inbox holds %v after, want none", reader, got)
	}
	if c, _ := s.Counts(ctx, []store.ID{reader}); c[0].Following != 0 {
		t.Fatalf("reader %d still follows %d", reader, c[0].Following)
	}
	t.Logf("deleted an account with %d followers and 20 posts in each inbox in %v", n, d.Round(time.Millisecond))
}

// TestDeleteAccountSecondPass: what a request admitted just before the
// commit writes after the job (here a follow of the account and a post of
// its own, materialized late) is taken away by the second pass.
func TestDeleteAccountSecondPass(t *testing.T) {
	clk := clockAt(time.Now())
	s := newService(t, storetest.New(t), Options{Now: clk.now})
	stop := startWorkers(t, s, WorkerOptions{})
	w := newAccountWorld(t, s, clk)
	stop()
	ctx := context.Background()
	if err := s.DeleteAccount(ctx, 1, "u1"); err != nil {
		t.Fatal(err)
	}
	late := &content.Post{ID: 99, Author: 1, Text: "late", CreatedAt: clk.now()}
	if _, err := s.MaterializePosts(ctx, []*content.Post{late}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddFollowing(ctx, []Edge{{Follower: 3, Followee: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.AddFollows(ctx, []Edge{{Follower: 3, Followee: 1}}, nil); err != nil {
		t.Fatal(err)
	}
	startWorkers(t, s, WorkerOptions{RepairAfter: 50 * time.Millisecond})
	waitFor(t, "the second pass", func() bool {
		n, _ := s.Redis.Do(ctx, s.Redis.B().Zcard().Key(s.Keys.AccountSweeps(s.ShardOf(1))).Build()).AsInt64()
		return n == 0
	})
	w.check(t)
	if ps, _ := s.Posts(ctx, []store.ID{late.ID}); ps[0] == nil || !ps[0].Deleted {
		t.Errorf("the late post = %+v, want a tombstone", ps[0])
	}
}
