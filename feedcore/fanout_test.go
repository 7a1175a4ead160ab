package feedcore

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/redisstore/storetest"
)

// makeFollowers makes n users, author+1 on, following author, in bulk.
func makeFollowers(tb testing.TB, s *Service, author store.ID, n int) []store.ID {
	tb.Helper()
	ids := idRange(author+1, n)
	putUsers(tb, s, ids)
	followEdges(tb, s, followerEdges(ids, author))
	return ids
}

// TestFanoutResumesAfterCrash kills a worker in the middle of a large
// fan-out; another worker reclaims its pending tasks and resumes them from
// their checkpoints. Every follower ends with the post exactly once, and no
// more than one chunk per interrupted task is written twice.
func TestFanoutResumesAfterCrash(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 5000
	}
	st := storetest.New(t)
	ctx := context.Background()
	// No stop grace: a drops the tasks in hand at once, as a crash would.
	a, followers, post := stopMidFanout(t, st, n, int64(n/timeline.ChunkSize/4), -1) // a quarter of the way through
	// The crash: a stopped between chunks, its entries left pending.
	backlog, err := a.Backlog(ctx)
	if err != nil || backlog == 0 {
		t.Fatalf("want work left after the crash, backlog %d, err %v", backlog, err)
	}
	// The task a was running is delivered but unacknowledged.
	pending, err := a.Pending(ctx)
	if err != nil || len(pending) != 2 || pending[1].Stream != "tasks" || pending[1].Count == 0 {
		t.Fatalf("pending after the crash: %+v, %v; want tasks pending", pending, err)
	}

	b := newService(t, st, Options{BigVThreshold: 1 << 30})
	startWorkers(t, b, WorkerOptions{Name: "b", ReclaimIdle: 2 * time.Second})
	drain(t, b)

	// A chunk in flight at the crash may be written but not counted by a,
	// or written again by b (once per executor of either, under load);
	// nothing more is redone. Restarting tasks instead of resuming them
	// would redo thousands.
	written := a.Stats().InboxWrites + b.Stats().InboxWrites
	slack := int64((3 + 4) * timeline.ChunkSize) // a's executors and b's
	if lo, hi := int64(n)-slack, int64(n)+slack; written < lo || written > hi {
		t.Fatalf("%d inbox writes for %d followers: want between %d and %d", written, n, lo, hi)
	}
	cmds := make([]string, 0, len(followers))
	for _, f := range followers {
		cmds = append(cmds, a.Keys.Inbox(f))
	}
	for i, f := range followers {
		got, err := a.Newest(ctx, cmds[i], 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != post.ID {
			t.Fatalf("follower %d inbox %v, want exactly post %d", f, got, post.ID)
		}
	}
}

// TestFanoutStopFinishesTasksInHand: a worker stopped (SIGTERM) in the
// middle of a fan-out finishes the tasks its executors hold and
// acknowledges them, and leaves the rest queued: nothing is pending, so a
// second worker, which could reclaim nothing within the test (ReclaimIdle
// an hour), takes the rest from the stream and no chunk is written twice.
func TestFanoutStopFinishesTasksInHand(t *testing.T) {
	const n = 12 * timeline.TaskSize
	st := storetest.New(t)
	ctx := context.Background()
	// Stopped once the first chunk of a task is in: the task is in hand.
	a, followers, post := stopMidFanout(t, st, n, 1, 0)
	pending, err := a.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pending {
		if p.Count != 0 {
			t.Fatalf("pending after the stop: %+v; want none (the tasks in hand finished)", pending)
		}
	}
	tasksA := a.Stats().Tasks
	if tasksA == 0 || tasksA >= n/timeline.TaskSize {
		t.Fatalf("worker a finished %d tasks of %d: want the ones in hand, not all", tasksA, n/timeline.TaskSize)
	}

	b := newService(t, st, Options{BigVThreshold: 1 << 30})
	startWorkers(t, b, WorkerOptions{Name: "b", ReclaimIdle: time.Hour})
	drain(t, b)
	if written := a.Stats().InboxWrites + b.Stats().InboxWrites; written != n {
		t.Errorf("%d inbox writes for %d followers: want each once", written, n)
	}
	for _, f := range followers {
		got, err := a.Newest(ctx, a.Keys.Inbox(f), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != post.ID {
			t.Fatalf("follower %d inbox %v, want exactly post %d", f, got, post.ID)
		}
	}
	t.Logf("worker a finished %d tasks after its stop, worker b the other %d", tasksA, b.Stats().Tasks)
}

// stopMidFanout runs worker "a" (3 executors, stopGrace) over a new
// service on st, publishes a post of user 1 to n followers, and stops the
// worker once it has written chunks chunks of inbox writes. It returns the
// service, the followers and the post.
func stopMidFanout(t *testing.T, st *storetest.Store, n int, chunks int64, stopGrace time.Duration) (*Service, []store.ID, *Post) {
	t.Helper()
	a := newService(t, st, Options{BigVThreshold: 1 << 30})
	mustUsers(t, a, 1)
	followers := makeFollowers(t, a, 1, n)
	var written atomic.Int64
	enough := make(chan struct{})
	afterChunk := func() {
		if written.Add(1) == chunks {
			close(enough)
		}
	}
	stop := startWorkers(t, a, WorkerOptions{Name: "a", Executors: 3, AfterChunk: afterChunk, StopGrace: stopGrace})
	post, err := a.Publish(context.Background(), 1, "to everyone")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-enough:
	case <-time.After(60 * time.Second):
		t.Fatalf("worker a never wrote %d chunks", chunks)
	}
	stop()
	return a, followers, post
}

// TestFanoutChunkBudget holds the write budget: one command per target, a
// trim for about one in trimEvery, the checkpoint and the claim renewal, in
// one pipeline per chunk.
func TestFanoutChunkBudget(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	targets := make([]string, timeline.ChunkSize)
	for i := range targets {
		targets[i] = store.Member(store.ID(i + 1))
	}
	cmds := s.ChunkCmds(timeline.Task{Type: core.EvDelete, Author: 1, Item: store.Item{TS: 1, ID: 9}}, targets, "ck", "0")
	if len(cmds) != timeline.ChunkSize+2 {
		t.Fatalf("delete chunk of %d targets: %d commands, want %d", timeline.ChunkSize, len(cmds), timeline.ChunkSize+2)
	}
	// Publishing trims about one inbox in trimEvery.
	cmds = s.ChunkCmds(timeline.Task{Type: core.EvPublish, Author: 1, Item: store.Item{TS: 1, ID: 9}}, targets, "ck", "0")
	trims := len(cmds) - timeline.ChunkSize - 2
	if want := timeline.ChunkSize / timeline.TrimEvery; trims < want/2 || trims > 2*want {
		t.Fatalf("publish chunk of %d targets: %d trims, want about %d", timeline.ChunkSize, trims, want)
	}
}

// TestInboxKeys: the fan-out's batch of inbox names is each timeline's own.
func TestInboxKeys(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	readers := []store.ID{1, 9, 10, 4242, 117657342161455529, 1<<64 - 1}
	for _, tl := range s.Timelines() {
		got := timeline.InboxKeys(tl, readers)
		for i, r := range readers {
			if got[i] != tl.Inbox(r) {
				t.Fatalf("inbox key of %d: %q, want %q", r, got[i], tl.Inbox(r))
			}
		}
	}
}

// TestBigVPushesOnlyToActive: a big-V's post reaches active followers'
// inboxes and no inactive one's, yet every follower's feed shows it.
func TestBigVPushesOnlyToActive(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{BigVThreshold: 5, ActiveWindow: time.Hour, Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1)
	followers := makeFollowers(t, s, 1, 10)
	active := followers[:3]
	for _, f := range active {
		if err := s.Touch(ctx, f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Publish(ctx, 1, "first"); err != nil { // promotes the author
		t.Fatal(err)
	}
	drain(t, s)
	before := s.Stats().InboxWrites
	p, err := s.Publish(ctx, 1, "big news")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	if w := s.Stats().InboxWrites - before; w != int64(len(active)) {
		t.Fatalf("big-V post made %d inbox writes, want %d (active followers only)", w, len(active))
	}
	for _, f := range followers {
		got := readAll(t, s, f, 5)
		if len(got) == 0 || got[0] != p.ID {
			t.Fatalf("follower %d feed %v lacks the big-V post %d", f, got, p.ID)
		}
	}
}
