package faults

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestWorkerKilledMidFanout runs `feedd worker` as a process under the
// test's key prefix, publishes a post of an author with 20,000 followers,
// and kills the worker with SIGKILL once some but not all followers have
// the post. A second worker reclaims what the dead one left pending and
// resumes from its checkpoints: every follower ends with the post exactly
// once, and no entry stays pending.
func TestWorkerKilledMidFanout(t *testing.T) {
	storetest.RequireReal(t)
	st := storetest.New(t)
	began := time.Now()
	ctx := context.Background()
	const n = 20000
	bin := buildFeedd(t)
	svc, err := feedcore.New(ctx, st.Client, feedcore.Options{Prefix: st.Prefix, BigVThreshold: 1 << 30,
		CursorKey: []byte("worker-kill-test-cursor-key-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	followers := makeFollowers(t, svc, 1, n)
	inboxes := make([]string, n)
	for i, f := range followers {
		inboxes[i] = st.Prefix + "i:{" + feedcore.FormatID(f) + "}"
	}

	var logs bytes.Buffer
	worker := exec.Command(bin, "worker", "--redis", os.Getenv(storetest.Env), "--key-prefix", st.Prefix,
		"--bigv-threshold", "1000000000", "--log-level", "warn")
	worker.Stdout, worker.Stderr = &logs, &logs
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{}) // closed when the process is gone
	var exitErr error
	go func() { exitErr = worker.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = worker.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("feedd worker output:\n%s", logs.String())
		}
	})

	post, err := svc.Publish(ctx, 1, "to everyone")
	if err != nil {
		t.Fatal(err)
	}
	m := make([]byte, 8)
	binary.BigEndian.PutUint64(m, post.ID)
	// Poll the first and the last follower: tasks cover followers in id
	// order, so the first has the post early and the last at the very end.
	deadline := time.Now().Add(time.Minute)
	for {
		rs := st.Client.DoMulti(ctx,
			st.Client.B().Zscore().Key(inboxes[0]).Member(string(m)).Build(),
			st.Client.B().Zscore().Key(inboxes[n-1]).Member(string(m)).Build())
		_, err0 := rs[0].AsFloat64()
		_, err1 := rs[1].AsFloat64()
		if err1 == nil {
			t.Fatal("the fan-out reached the last follower before the worker could be killed mid-way")
		}
		if err0 == nil {
			break
		}
		select {
		case <-exited:
			t.Fatalf("feedd worker exited: %v\n%s", exitErr, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not reach the first follower within a minute\n%s", logs.String())
		}
	}
	if err := worker.Process.Kill(); err != nil { // SIGKILL: no chance to hand anything back
		t.Fatal(err)
	}
	<-exited
	killed := time.Now()

	holders := func() int {
		got, err := zsetIDs(ctx, st.Client, inboxes)
		if err != nil {
			t.Fatal(err)
		}
		k := 0
		for _, ids := range got {
			if slices.Contains(ids, post.ID) {
				k++
			}
		}
		return k
	}
	atKill := holders()
	if atKill == 0 || atKill == n {
		t.Fatalf("%d of %d followers had the post when the worker was killed: want some but not all", atKill, n)
	}
	pending, err := svc.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("killed the worker with %d of %d followers served; pending %+v", atKill, n, pending)

	// A second worker takes over what the first left pending.
	wctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = svc.RunWorkers(wctx, feedcore.WorkerOptions{Name: "second", ReclaimIdle: 2 * time.Second, Block: 50 * time.Millisecond})
	}()
	t.Cleanup(func() { stop(); <-done })
	dctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	if err := svc.Drain(dctx); err != nil {
		t.Fatalf("after the kill: %v", err)
	}
	recovered := time.Since(killed)

	got, err := zsetIDs(ctx, st.Client, inboxes)
	if err != nil {
		t.Fatal(err)
	}
	bad := 0
	for i, ids := range got {
		if len(ids) != 1 || ids[0] != post.ID {
			if bad++; bad <= 5 {
				t.Errorf("follower %d inbox %v, want exactly post %d", followers[i], ids, post.ID)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d followers without the post exactly once", bad, n)
	}
	pending, err = svc.Pending(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pending {
		if p.Count != 0 {
			t.Errorf("%s: %d entries still pending after the drain", p.Stream, p.Count)
		}
	}
	if dead, err := svc.DeadLetters(ctx); err != nil || dead != 0 {
		t.Errorf("dead letters: %d (err %v)", dead, err)
	}
	s := svc.Stats()
	t.Logf("second worker: %d inbox writes for the %d followers left (%d redone), %d tasks; drained %.1fs after the kill; test %.1fs",
		s.InboxWrites, n-atKill, s.InboxWrites-int64(n-atKill), s.Tasks, recovered.Seconds(), time.Since(began).Seconds())
}
