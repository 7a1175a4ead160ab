package feedcore

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/moderation"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/redisstore/storetest"
)

var op = ModAction{Operator: "alice", Reason: "spam"}

// suspendWorld: author 2 is big-V (threshold 2) and followed by 1, an
// active reader whose inbox is complete, and by 10..19, who never read:
// each is read once (a read upgrades its reader), merged on read. 5 is
// another author they all follow. 2 has two posts, a live session and a
// replay; 5 has a post.
type suspendWorld struct {
	s            *Service
	posts        []store.ID // 2's
	other        store.ID   // 5's post
	live, replay store.ID   // 2's sessions
	merged       []store.ID // readers not read yet
}

func newSuspendWorld(t *testing.T, s *Service) *suspendWorld {
	t.Helper()
	ctx := context.Background()
	w := &suspendWorld{s: s, merged: idRange(10, 10)}
	mustUsers(t, s, append([]store.ID{1, 2, 5}, w.merged...)...)
	for _, r := range append([]store.ID{1}, w.merged...) {
		follow(t, s, r, []store.ID{2, 5})
	}
	readAll(t, s, 1, 5) // 1 becomes active: the workers complete its inbox
	drain(t, s)
	for _, text := range []string{"one", "two"} {
		p, err := s.Publish(ctx, 2, text)
		if err != nil {
			t.Fatal(err)
		}
		w.posts = append(w.posts, p.ID)
	}
	p, err := s.Publish(ctx, 5, "other")
	if err != nil {
		t.Fatal(err)
	}
	w.other = p.ID
	l, err := s.ScheduleLive(ctx, 2, "soon", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	w.live = l.ID
	r, err := s.ScheduleLive(ctx, 2, "was", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartLive(ctx, 2, r.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EndLive(ctx, 2, r.ID); err != nil {
		t.Fatal(err)
	}
	w.replay = r.ID
	drain(t, s)
	w.check(t, "before", true)
	return w
}

// check asserts whether 2's posts and sessions show in 1's feeds and a
// merged reader's, 5's always showing.
func (w *suspendWorld) check(t *testing.T, when string, shown bool) {
	t.Helper()
	for _, v := range []store.ID{1, w.mergedReader()} {
		got := readAll(t, w.s, v, 2)
		for _, p := range w.posts {
			if slices.Contains(got, p) != shown {
				t.Fatalf("%s: viewer %d's feed %v shows 2's post %d: %v, want %v", when, v, got, p, !shown, shown)
			}
		}
		if !slices.Contains(got, w.other) {
			t.Fatalf("%s: viewer %d's feed %v lost 5's post", when, v, got)
		}
		var live []store.ID
		for _, l := range pageLive(t, w.s, v, 1, nil) {
			live = append(live, l.id)
		}
		for _, l := range []store.ID{w.live, w.replay} {
			if slices.Contains(live, l) != shown {
				t.Fatalf("%s: viewer %d's live feed %v shows 2's session %d: %v, want %v", when, v, live, l, !shown, shown)
			}
		}
	}
}

// TestSuspend: a suspension takes the account's posts and sessions out of
// every feed at once (inbox and merged readers, live and replays), refuses
// its requests with FORBIDDEN (the rate limit on or off, a publish writing
// nothing), keeps its follows; a second suspension changes nothing;
// unsuspending brings everything back.
func TestSuspend(t *testing.T) {
	s := testService(t, Options{BigVThreshold: 2})
	w := newSuspendWorld(t, s)
	ctx := context.Background()

	out, err := s.Suspend(ctx, 2, op)
	if err != nil {
		t.Fatal(err)
	}
	if !out.Changed || out.Posts != 2 || out.Sessions != 2 {
		t.Errorf("Suspend = %+v, want changed, 2 posts, 2 sessions", out)
	}
	w.check(t, "suspended", false)
	for _, l := range []RateLimit{{}, {Rate: 100, Burst: 100}} {
		ch := s.NewCharge(Subject{Viewer: 2}, 1, l)
		_, err := s.FollowingFeed(WithCharge(ctx, ch), FeedRequest{Viewer: 2, First: 5})
		wantSuspended(t, fmt.Sprintf("limit %+v: a read", l), err)
		ch = s.NewWriteCharge(Subject{Viewer: 2}, 1, l)
		s.Known.Add(2)
		_, err = s.Publish(WithCharge(ctx, ch), 2, "after")
		wantSuspended(t, fmt.Sprintf("limit %+v: a publish", l), err)
		ch = s.NewWriteCharge(Subject{Viewer: 2}, 1, l)
		wantSuspended(t, fmt.Sprintf("limit %+v: a follow", l), s.Follow(WithCharge(ctx, ch), 2, 5))
	}
	if got := outboxIDs(t, s, 2); len(got) != 2 {
		t.Errorf("a refused publish wrote: outbox %v", got)
	}
	if c, _ := s.Counts(ctx, []store.ID{2}); c[0].Followers != 11 {
		t.Errorf("2's followers while suspended: %d, want 11", c[0].Followers)
	}
	if ps, _ := s.CachedPosts(ctx, w.posts); !ps[0].AuthorSuspended || ps[0].Deleted {
		t.Errorf("2's post read through the cache: %+v, want AuthorSuspended", ps[0])
	}
	if again, err := s.Suspend(ctx, 2, op); err != nil || again.Changed {
		t.Errorf("second Suspend = %+v, %v; want no change", again, err)
	}

	out, err = s.Unsuspend(ctx, 2, ModAction{Operator: "bob", Reason: "appeal"})
	if err != nil || !out.Changed || out.Posts != 2 {
		t.Fatalf("Unsuspend = %+v, %v", out, err)
	}
	w.check(t, "unsuspended", true)
	ch := s.NewWriteCharge(Subject{Viewer: 2}, 1, RateLimit{})
	if _, err := s.Publish(WithCharge(ctx, ch), 2, "back"); err != nil {
		t.Errorf("publish after unsuspending: %v", err)
	}
	if again, err := s.Unsuspend(ctx, 2, op); err != nil || again.Changed {
		t.Errorf("second Unsuspend = %+v, %v; want no change", again, err)
	}
	wantAudit(t, s, "suspend user:2 spam alice", "unsuspend user:2 appeal bob")
}

// mergedReader is a reader that has never read, merged on read.
func (w *suspendWorld) mergedReader() store.ID {
	r := w.merged[0]
	w.merged = w.merged[1:]
	return r
}

func wantSuspended(t *testing.T, what string, err error) {
	t.Helper()
	if store.CodeOf(err) != apierr.Forbidden || !strings.Contains(err.Error(), "this account is suspended") {
		t.Errorf("%s of a suspended account: %v, want FORBIDDEN, this account is suspended", what, err)
	}
}

// wantAudit asserts the audit stream holds want ("action subject reason
// operator" each), in order.
func wantAudit(t *testing.T, s *Service, want ...string) {
	t.Helper()
	var got []string
	err := s.AuditLog(context.Background(), Since{}, func(es []AuditEntry) error {
		for _, e := range es {
			if e.At.IsZero() || !ValidEntryID(e.ID) {
				t.Errorf("audit entry %+v: no time or id", e)
			}
			got = append(got, strings.Join([]string{e.Action, e.Subject, e.Reason, e.Operator}, " "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Errorf("audit log %q, want %q", got, want)
	}
}

// TestModerationInput: actions refuse what they cannot do, change nothing
// and write no audit entry.
func TestModerationInput(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1)
	p, err := s.Publish(ctx, 1, "mine")
	if err != nil {
		t.Fatal(err)
	}
	deleted, err := s.Publish(ctx, 1, "gone")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, 1, deleted.ID); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		run  func() (ModOutcome, error)
		code apierr.Code
	}{
		{"suspend unknown", func() (ModOutcome, error) { return s.Suspend(ctx, 9, op) }, apierr.NotFound},
		{"unsuspend unknown", func() (ModOutcome, error) { return s.Unsuspend(ctx, 9, op) }, apierr.NotFound},
		{"takedown unknown", func() (ModOutcome, error) { return s.Takedown(ctx, 999, op) }, apierr.NotFound},
		{"takedown deleted by its author", func() (ModOutcome, error) { return s.Takedown(ctx, deleted.ID, op) }, apierr.BadInput},
		{"no reason", func() (ModOutcome, error) { return s.Suspend(ctx, 1, ModAction{Operator: "a"}) }, apierr.BadInput},
		{"blank reason", func() (ModOutcome, error) { return s.Takedown(ctx, p.ID, ModAction{Operator: "a", Reason: " \u200b "}) }, apierr.BadInput},
		{"long reason", func() (ModOutcome, error) {
			return s.Takedown(ctx, p.ID, ModAction{Operator: "a", Reason: strings.Repeat("x", MaxModReason+1)})
		}, apierr.BadInput},
		{"no operator", func() (ModOutcome, error) { return s.Suspend(ctx, 1, ModAction{Reason: "r"}) }, apierr.BadInput},
		{"resolve unknown", func() (ModOutcome, error) { return s.ResolveReport(ctx, "1-0", op) }, apierr.NotFound},
		{"resolve malformed", func() (ModOutcome, error) { return s.ResolveReport(ctx, "abc", op) }, apierr.BadInput},
	} {
		if _, err := c.run(); store.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	if got := readAll(t, s, 1, 5); !slices.Equal(got, []store.ID{p.ID}) {
		t.Errorf("feed after refusals: %v, want [%d]", got, p.ID)
	}
	wantAudit(t, s)
}

// TestTakedown: a takedown removes the post from every feed as a delete
// does, marks it, and a second one changes nothing.
func TestTakedown(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	follow(t, s, 2, []store.ID{1})
	p, err := s.Publish(ctx, 1, "bad")
	if err != nil {
		t.Fatal(err)
	}
	keep, err := s.Publish(ctx, 1, "fine")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	if got := readAll(t, s, 2, 5); !slices.Contains(got, p.ID) {
		t.Fatalf("before: %v", got)
	}
	out, err := s.Takedown(ctx, p.ID, op)
	if err != nil || !out.Changed {
		t.Fatalf("Takedown = %+v, %v", out, err)
	}
	for _, v := range []store.ID{1, 2} {
		if got := readAll(t, s, v, 5); !slices.Equal(got, []store.ID{keep.ID}) {
			t.Errorf("viewer %d's feed after the takedown: %v, want [%d]", v, got, keep.ID)
		}
	}
	drain(t, s)
	if got := timelineIDs(t, s, s.Keys.Inbox(2)); slices.Contains(got, p.ID) {
		t.Errorf("the removal did not fan out: 2's inbox %v", got)
	}
	ps, err := s.Posts(ctx, []store.ID{p.ID})
	if err != nil || !ps[0].Deleted || ps[0].TakenDown.IsZero() || ps[0].TakedownReason != "spam" || ps[0].Text != "bad" {
		t.Errorf("taken-down post = %+v, %v", ps[0], err)
	}
	if again, err := s.Takedown(ctx, p.ID, op); err != nil || again.Changed {
		t.Errorf("second Takedown = %+v, %v; want no change", again, err)
	}
	wantAudit(t, s, fmt.Sprintf("takedown post:%d spam alice", p.ID))
}

// TestModerationJobsFinishedByRepair: a takedown and a suspension whose
// requests died right after their commits are finished by the journal's
// repair, each audit entry appended once however often the job runs.
func TestModerationJobsFinishedByRepair(t *testing.T) {
	s := newService(t, storetest.New(t), Options{BigVThreshold: 2})
	stop := startWorkers(t, s, WorkerOptions{})
	w := newSuspendWorld(t, s)
	ctx := context.Background()
	bad, err := s.Publish(ctx, 5, "bad")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	stop()
	shard := s.ShardOf(2)
	commit := func(keys, args []string, sc *store.Script) {
		if err := s.Do(ctx, sc.Cmd(s.Redis.B(), keys, args)).Error(); err != nil {
			t.Fatal(err)
		}
	}
	fields := append([]string{"k", moderation.JSuspend, "u", "2"}, op.AuditFields(moderation.ActionSuspend, "user:2", s.NowMS())...)
	commit([]string{s.Keys.Suspended(shard, 2), s.Keys.Journal(shard), s.Keys.SuspendSweeps(shard)},
		append([]string{"1", "0", op.Reason, op.Operator, "2"}, fields...), moderation.SuspensionCommit)
	ev := core.Event{Type: core.EvDelete, User: 5, Item: store.Item{TS: bad.CreatedAt.UnixMilli(), ID: bad.ID}}.Fields()
	tfields := append([]string{"k", moderation.JTakedown, "p", store.FormatID(bad.ID), "u", "5"}, op.AuditFields(moderation.ActionTakedown, "post:"+store.FormatID(bad.ID), s.NowMS())...)
	commit([]string{s.Keys.TakenDown(s.ShardOf(5), bad.ID), s.Keys.Events(s.ShardOf(5)), s.Keys.Journal(s.ShardOf(5))},
		append(append([]string{"1", "", store.Itoa(len(ev))}, ev...), tfields...), moderation.TakedownCommit)

	ch := s.NewCharge(Subject{Viewer: 2}, 1, RateLimit{})
	_, err = s.FollowingFeed(WithCharge(ctx, ch), FeedRequest{Viewer: 2})
	wantSuspended(t, "a read right after the commit", err)
	startWorkers(t, s, WorkerOptions{RepairAfter: 50 * time.Millisecond})
	waitFor(t, "the repair", func() bool {
		n, _ := s.Redis.Do(ctx, s.Redis.B().Xlen().Key(s.Keys.Journal(shard)).Build()).AsInt64()
		m, _ := s.Redis.Do(ctx, s.Redis.B().Xlen().Key(s.Keys.Journal(s.ShardOf(5))).Build()).AsInt64()
		return n+m == 0
	})
	drain(t, s)
	w.check(t, "repaired", false)
	if got := readAll(t, s, 1, 5); slices.Contains(got, bad.ID) {
		t.Errorf("the post taken down still shows: %v", got)
	}
	// A job run again appends nothing more.
	e := map[string]string{}
	for i := 0; i+1 < len(tfields); i += 2 {
		e[tfields[i]] = tfields[i+1]
	}
	if err := s.FinishTakedown(ctx, "x", e); err != nil {
		t.Fatal(err)
	}
	wantAudit(t, s, "suspend user:2 spam alice", fmt.Sprintf("takedown post:%d spam alice", bad.ID))
}

// TestSuspendSecondPass: a post and a session written after the job went
// by (requests admitted just before the commit) are marked by the second
// pass; a post the store holds for a suspended author is marked as it is
// stored.
func TestSuspendSecondPass(t *testing.T) {
	s := newService(t, storetest.New(t), Options{BigVThreshold: 2})
	stop := startWorkers(t, s, WorkerOptions{})
	w := newSuspendWorld(t, s)
	stop()
	ctx := context.Background()
	if _, err := s.Suspend(ctx, 2, op); err != nil {
		t.Fatal(err)
	}
	late := &content.Post{ID: 77, Author: 2, Text: "late", CreatedAt: time.Now()}
	if _, err := s.MaterializePosts(ctx, []*content.Post{late}); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Hour)
	lateLive := &LiveSession{ID: 78, Anchor: 2, Title: "late", ScheduledStartAt: &at}
	if err := s.StoreLive(ctx, lateLive); err != nil {
		t.Fatal(err)
	}
	w.posts, w.live = append(w.posts, late.ID), lateLive.ID
	if got := readAll(t, s, w.mergedReader(), 5); !slices.Contains(got, late.ID) {
		t.Fatalf("the late post is not there to be marked: %v", got)
	}
	startWorkers(t, s, WorkerOptions{RepairAfter: 50 * time.Millisecond})
	waitFor(t, "the second pass", func() bool {
		n, _ := s.Redis.Do(ctx, s.Redis.B().Zcard().Key(s.Keys.SuspendSweeps(s.ShardOf(2))).Build()).AsInt64()
		return n == 0
	})
	w.check(t, "after the second pass", false)
	stored := &content.Post{ID: 79, Author: 2, Text: "imported", CreatedAt: time.Now()}
	if err := s.PutPost(ctx, stored); err != nil {
		t.Fatal(err)
	}
	if ps, _ := s.Posts(ctx, []store.ID{stored.ID}); !ps[0].AuthorSuspended {
		t.Errorf("a post stored for a suspended author: %+v, want marked", ps[0])
	}
}

// TestSuspendResumesFromCheckpoint: a job resumed by the repair goes on
// after its checkpoint (what it did before is not walked again), and the
// checkpoint is dropped once it is done. 1,200 posts: three chunks.
func TestSuspendResumesFromCheckpoint(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1)
	const n = 1200
	ps := make([]*content.Post, n)
	base := time.Now().Add(-time.Hour)
	for i := range ps {
		ps[i] = &content.Post{ID: store.ID(1000 + i), Author: 1, Text: "p", CreatedAt: base.Add(time.Duration(i) * time.Second)}
	}
	if _, err := s.PutPosts(ctx, ps); err != nil {
		t.Fatal(err)
	}
	shard := s.ShardOf(1)
	if err := s.Do(ctx, s.Redis.B().Hset().Key(s.Keys.Suspended(shard, 1)).FieldValue().FieldValue("at", "1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	// The checkpoint says the newest 600 are done (walked newest first).
	mid := ps[n-600]
	ck := s.Keys.SuspendCheckpoint(shard, "1-1")
	pos := moderation.MarkPos{On: true, Last: &store.Item{TS: mid.CreatedAt.UnixMilli(), ID: mid.ID}}
	if err := s.Do(ctx, s.Redis.B().Set().Key(ck).Value(pos.String()).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	out, err := s.SettleSuspension(ctx, 1, ck)
	if err != nil {
		t.Fatal(err)
	}
	if out.Posts != n-600 {
		t.Errorf("resumed job walked %d posts, want %d", out.Posts, n-600)
	}
	got, _ := s.Posts(ctx, []store.ID{ps[0].ID, ps[n-1].ID})
	if !got[0].AuthorSuspended || got[1].AuthorSuspended {
		t.Errorf("oldest marked %v, newest marked %v; want the oldest only (the newest were done before)",
			got[0].AuthorSuspended, got[1].AuthorSuspended)
	}
	if n, _ := s.Redis.Do(ctx, s.Redis.B().Exists().Key(ck).Build()).AsInt64(); n != 0 {
		t.Error("the checkpoint outlived its job")
	}
	if out, err := s.SettleSuspension(ctx, 1, ""); err != nil || out.Posts != n {
		t.Errorf("a pass from the start walked %d posts (%v), want %d", out.Posts, err, n)
	}
}

// TestSuspendScale measures suspending and unsuspending an account with
// 10,000 posts (FEED_SCALE_POSTS to change it). Opt-in (FEED_SCALE=1):
//
//	FEED_SCALE=1 FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./feedcore -run TestSuspendScale -v
func TestSuspendScale(t *testing.T) {
	if os.Getenv(scaleEnv) == "" {
		t.Skipf("opt-in scale measurement: set %s=1", scaleEnv)
	}
	n := 10000
	if v, err := fmt.Sscan(os.Getenv("FEED_SCALE_POSTS"), &n); v != 1 || err != nil {
		n = 10000
	}
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	follow(t, s, 2, []store.ID{1})
	base := time.Now().Add(-24 * time.Hour)
	for i := 0; i < n; i += 1000 {
		ps := make([]*content.Post, min(1000, n-i))
		for j := range ps {
			ps[j] = &content.Post{ID: store.ID(10000 + i + j), Author: 1, Text: "post", CreatedAt: base.Add(time.Duration(i+j) * time.Millisecond)}
		}
		if _, err := s.PutPosts(ctx, ps); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	start := time.Now()
	out, err := s.Suspend(ctx, 1, op)
	d := time.Since(start)
	if err != nil || out.Posts != n {
		t.Fatalf("Suspend = %+v, %v", out, err)
	}
	if got := readAll(t, s, 2, 100); len(got) != 0 {
		t.Fatalf("2's feed after the suspension holds %d posts", len(got))
	}
	start = time.Now()
	if out, err = s.Unsuspend(ctx, 1, op); err != nil || out.Posts != n {
		t.Fatalf("Unsuspend = %+v, %v", out, err)
	}
	t.Logf("suspended an account with %d posts in %v, unsuspended it in %v", n, d.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
}

// TestModerationRebuild: a rebuild settles the marks of suspended
// accounts (here lost from a post and a session), finishes a takedown
// whose request died (its post is not rebuilt into any timeline), and
// rebuilds the reports' index, so a repeated report keeps its id.
func TestModerationRebuild(t *testing.T) {
	s := newService(t, storetest.New(t), Options{BigVThreshold: 2})
	stop := startWorkers(t, s, WorkerOptions{})
	w := newSuspendWorld(t, s)
	ctx := context.Background()
	if _, err := s.Suspend(ctx, 2, op); err != nil {
		t.Fatal(err)
	}
	req := ReportRequest{Reporter: 1, Subject: Target{Kind: TargetPost, ID: w.other}, Reason: "SPAM"}
	id, err := s.Report(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := s.Publish(ctx, 5, "bad")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	stop()
	for _, cmd := range []string{s.Keys.Post(w.posts[0]), s.Keys.Live(w.live)} {
		if err := s.Do(ctx, s.Redis.B().Hdel().Key(cmd).Field(timeline.FieldSuspended).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Do(ctx, s.Redis.B().Del().Key(s.Keys.ReportIndex()).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	shard := s.ShardOf(5)
	ev := core.Event{Type: core.EvDelete, User: 5, Item: store.Item{TS: bad.CreatedAt.UnixMilli(), ID: bad.ID}}.Fields()
	tfields := append([]string{"k", moderation.JTakedown, "p", store.FormatID(bad.ID), "u", "5"}, op.AuditFields(moderation.ActionTakedown, "post:"+store.FormatID(bad.ID), s.NowMS())...)
	if err := s.Do(ctx, moderation.TakedownCommit.Cmd(s.Redis.B(), []string{s.Keys.TakenDown(shard, bad.ID), s.Keys.Events(shard), s.Keys.Journal(shard)},
		append(append([]string{"1", "", store.Itoa(len(ev))}, ev...), tfields...))).Error(); err != nil {
		t.Fatal(err)
	}
	st, err := s.Rebuild(ctx, RebuildOptions{Restart: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Suspensions != 1 || st.Reports != 1 {
		t.Errorf("rebuild stats %+v, want 1 suspension settled, 1 report indexed", st)
	}
	startWorkers(t, s, WorkerOptions{})
	drain(t, s)
	w.check(t, "after the rebuild", false)
	if got := readAll(t, s, 1, 5); slices.Contains(got, bad.ID) {
		t.Errorf("the post taken down came back: %v", got)
	}
	if again, err := s.Report(ctx, req); err != nil || again != id {
		t.Errorf("a repeated report after the rebuild: %q, %v; want %q", again, err, id)
	}
}
