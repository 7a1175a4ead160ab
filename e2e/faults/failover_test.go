package faults

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/server"
)

// published is what a client learned of one post it tried to publish.
type published struct {
	author feedcore.ID
	key    string // idempotency key, the same on every retry
	text   string
	id     feedcore.ID // the post's id once acknowledged
	acked  bool
	tries  int
	sent   time.Time // when the attempt that got it acknowledged began
	at     time.Time // when it was acknowledged
}

// kill is one injected master failure and how the cluster got over it.
type kill struct {
	port                 int
	author               feedcore.ID // whose events shard the killed master served
	at, promoted, rejoin time.Time
}

// TestMasterFailover publishes 40 posts of two authors with 20,000
// followers each through the GraphQL API while two Redis Cluster masters
// are killed (SIGKILL) one after the other, each replaced by its replica
// and brought back as a replica. The client retries every failed publish
// with the same idempotency key until it is acknowledged. Once the fan-out
// has drained, every follower holds every acknowledged post of its author
// exactly once, the author's outbox holds exactly those, and no other post
// exists anywhere (no ghost, no duplicate).
//
// It reads the stored keys directly (outboxes o:{id}, inboxes i:{id}, post
// hashes p:{id}), as feedcore names them.
func TestMasterFailover(t *testing.T) {
	st, cl := faultCluster(t)
	began := time.Now()
	ctx := context.Background()
	const (
		followersEach = 20000
		postsEach     = 20
		afterFaults   = 4 // the last posts of each author wait for both failovers
		// gap paces each author's posts until the faults are over, so they
		// spread over both failovers (about 20 s); then they follow at once.
		gap = 900 * time.Millisecond
	)
	svc, err := feedcore.New(ctx, st.Client, feedcore.Options{Prefix: st.Prefix, BigVThreshold: 1 << 30,
		CursorKey: []byte("failover-test-cursor-key-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	authors := []feedcore.ID{1, 1_000_000}
	followers := map[feedcore.ID][]feedcore.ID{}
	for _, a := range authors {
		followers[a] = makeFollowers(t, svc, a, followersEach)
	}
	t.Logf("setup: 2 authors x %d followers in %.1fs", followersEach, time.Since(began).Seconds())

	var workerLog, serverLog, clientErrs kinds
	wctx, stopWorkers := context.WithCancel(ctx)
	workersDone := make(chan struct{})
	go func() {
		defer close(workersDone)
		_ = svc.RunWorkers(wctx, feedcore.WorkerOptions{Name: "failover", ReclaimIdle: 2 * time.Second,
			RepairAfter: 5 * time.Second, Block: 50 * time.Millisecond, Logger: countingLogger(&workerLog)})
	}()
	t.Cleanup(func() { stopWorkers(); <-workersDone })
	srv := httptest.NewServer(server.New(server.Config{Service: svc, DevAuth: true, Logger: countingLogger(&serverLog)}))
	t.Cleanup(srv.Close)
	clients := map[feedcore.ID]graphql.Client{}
	for _, a := range authors {
		clients[a] = client.New(srv.URL+"/query", client.Auth{ViewerID: feedcore.FormatID(a)},
			&http.Client{Timeout: 15 * time.Second})
	}

	var retries atomic.Int64
	// publish sends one post until it is acknowledged, retrying with the
	// same idempotency key and backing off, for at most a minute.
	publish := func(p *published) {
		deadline := time.Now().Add(time.Minute)
		backoff := 50 * time.Millisecond
		for {
			p.tries++
			sent := time.Now()
			actx, cancel := context.WithTimeout(ctx, 10*time.Second)
			r, err := client.PublishPost(actx, clients[p.author], client.PublishPostInput{Text: p.text, IdempotencyKey: &p.key})
			cancel()
			if err == nil {
				id, perr := feedcore.ParseID(r.PublishPost.Post.DatabaseId)
				if perr == nil {
					p.id, p.acked, p.sent, p.at = id, true, sent, time.Now()
					return
				}
				err = perr
			}
			clientErrs.add(errorKind(err))
			if time.Now().After(deadline) {
				return
			}
			retries.Add(1)
			time.Sleep(backoff) // backoff between retries
			backoff = min(2*backoff, time.Second)
		}
	}

	posts := map[feedcore.ID][]*published{}
	for _, a := range authors {
		for i := range postsEach {
			key := fmt.Sprintf("failover-%d-%d", a, i)
			posts[a] = append(posts[a], &published{author: a, key: key, text: "post " + key})
		}
	}
	var acked atomic.Int64
	started := make(chan struct{}) // a few posts are in before the first kill
	var startOnce sync.Once
	faultsDone := make(chan struct{})
	var wg sync.WaitGroup
	for _, a := range authors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, p := range posts[a] {
				if i == postsEach-afterFaults {
					select {
					case <-faultsDone:
					case <-time.After(3 * time.Minute):
					}
				}
				publish(p)
				if p.acked && acked.Add(1) == 4 {
					startOnce.Do(func() { close(started) })
				}
				select { // pacing, not synchronisation
				case <-faultsDone:
				case <-time.After(gap):
				}
			}
		}()
	}

	// The faults: kill the master serving author 1's events shard, wait for
	// its replica to take over, bring it back as a replica, then the same
	// for author 2's shard (maybe the same slots, now on the promoted node).
	var kills []*kill
	var faultErr error
	func() {
		defer close(faultsDone)
		select {
		case <-started:
		case <-time.After(time.Minute):
			faultErr = errors.New("no post acknowledged before the faults")
			return
		}
		for _, a := range authors {
			k := &kill{author: a}
			if k.port, faultErr = shardMaster(ctx, st, cl, a); faultErr != nil {
				return
			}
			kills = append(kills, k)
			k.at = time.Now()
			replica, err := cl.kill(k.port)
			if err != nil {
				faultErr = err
				return
			}
			if faultErr = cl.waitPromoted(k.port, replica, 30*time.Second); faultErr != nil {
				return
			}
			k.promoted = time.Now()
			if faultErr = cl.restart(k.port); faultErr != nil {
				return
			}
			k.rejoin = time.Now()
		}
	}()
	wg.Wait()
	if faultErr != nil {
		t.Fatalf("fault injection: %v", faultErr)
	}
	publishedAt := time.Now()

	// A retry after the faults still finds each acknowledged post's
	// idempotency record: the same post, nothing new.
	replayed, replayMismatch := 0, 0
	for _, a := range authors {
		for _, p := range posts[a] {
			if !p.acked {
				continue
			}
			r, err := client.PublishPost(ctx, clients[a], client.PublishPostInput{Text: p.text, IdempotencyKey: &p.key})
			if err != nil {
				t.Errorf("replay of %s: %v", p.key, err)
				continue
			}
			replayed++
			if r.PublishPost.Post.DatabaseId != feedcore.FormatID(p.id) {
				replayMismatch++
				t.Errorf("replay of %s after the failovers: post %s, want %d (idempotency record lost)",
					p.key, r.PublishPost.Post.DatabaseId, p.id)
			}
		}
	}

	dctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	if err := svc.Drain(dctx); err != nil {
		t.Fatalf("fan-out after the failovers: %v", err)
	}
	drained := time.Now()

	// What a client was told.
	ack := map[feedcore.ID]map[feedcore.ID]bool{} // author -> acknowledged post ids
	byKey := map[string]feedcore.ID{}
	nAcked, nUnacked := 0, 0
	for _, a := range authors {
		ack[a] = map[feedcore.ID]bool{}
		for _, p := range posts[a] {
			if p.acked {
				nAcked++
				ack[a][p.id] = true
				byKey[p.text] = p.id
			} else {
				nUnacked++
				t.Errorf("%s never acknowledged within a minute of retries", p.key)
			}
		}
	}

	// What is stored: outboxes and the authors' own inboxes, followers'
	// inboxes, post hashes.
	lostPosts := map[feedcore.ID]int{} // acknowledged post -> followers (or outbox) missing it
	ghosts := map[feedcore.ID]string{} // post id not acknowledged -> where seen
	missing, extra := 0, 0
	check := func(a feedcore.ID, where string, got []feedcore.ID) {
		have := map[feedcore.ID]bool{}
		for _, id := range got {
			have[id] = true
			if !ack[a][id] {
				extra++
				if _, ok := ghosts[id]; !ok {
					ghosts[id] = where
				}
			}
		}
		for id := range ack[a] {
			if !have[id] {
				missing++
				if lostPosts[id]++; lostPosts[id] <= 3 {
					t.Errorf("acknowledged post %d of author %d missing from %s", id, a, where)
				}
			}
		}
	}
	for _, a := range authors {
		tag := "{" + feedcore.FormatID(a) + "}"
		own, err := zsetIDs(ctx, st.Client, []string{st.Prefix + "o:" + tag, st.Prefix + "i:" + tag})
		if err != nil {
			t.Fatal(err)
		}
		check(a, "the outbox of "+feedcore.FormatID(a), own[0])
		check(a, "the own inbox of "+feedcore.FormatID(a), own[1])
		keys := make([]string, len(followers[a]))
		for i, f := range followers[a] {
			keys[i] = st.Prefix + "i:{" + feedcore.FormatID(f) + "}"
		}
		inboxes, err := zsetIDs(ctx, st.Client, keys)
		if err != nil {
			t.Fatal(err)
		}
		for i, got := range inboxes {
			check(a, "the inbox of follower "+feedcore.FormatID(followers[a][i]), got)
		}
	}
	stored, err := storedPosts(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	duplicated := 0
	seen := map[feedcore.ID]bool{}
	for id, p := range stored {
		seen[id] = true
		if !ack[p.Author][id] {
			if _, ok := ghosts[id]; !ok {
				ghosts[id] = "post hash only"
			}
			if want, ok := byKey[p.Text]; ok && want != id {
				duplicated++
				t.Errorf("post %d duplicates acknowledged post %d (%q)", id, want, p.Text)
			}
		}
		if p.Deleted {
			t.Errorf("post %d is a tombstone", id)
		}
	}
	for _, a := range authors {
		for id := range ack[a] {
			if !seen[id] {
				lostPosts[id]++
				t.Errorf("acknowledged post %d of author %d has no post hash", id, a)
			}
		}
	}
	for id, where := range ghosts {
		t.Errorf("ghost post %d (not acknowledged), first seen in %s", id, where)
	}
	dead, err := svc.DeadLetters(ctx)
	if err != nil || dead != 0 {
		t.Errorf("dead letters after the failovers: %d (err %v)", dead, err)
	}
	pending, err := svc.Pending(ctx)
	if err != nil {
		t.Error(err)
	}
	for _, p := range pending {
		if p.Count != 0 {
			t.Errorf("%s: %d entries still pending after the drain", p.Stream, p.Count)
		}
	}

	// The figures.
	t.Logf("posts: %d acknowledged, %d not; %d retries; replayed %d, %d returned another post",
		nAcked, nUnacked, retries.Load(), replayed, replayMismatch)
	t.Logf("posts lost %d (%d missing deliveries), duplicated %d, ghosts %d (%d ghost deliveries)",
		len(lostPosts), missing, duplicated, len(ghosts), extra)
	for i, k := range kills {
		first, firstOwn := firstAck(posts, k.at, 0), firstAck(posts, k.at, k.author)
		t.Logf("kill %d: master %d (events shard of author %d): replica promoted after %.1fs, node back as a synced replica after %.1fs; "+
			"first write after the kill acknowledged %s after it, of that author %s (publishes sent after the kill)",
			i+1, k.port, k.author, k.promoted.Sub(k.at).Seconds(), k.rejoin.Sub(k.at).Seconds(), secs(first), secs(firstOwn))
	}
	t.Logf("client errors (%d):\n%s", clientErrs.total(), clientErrs.String())
	t.Logf("server warnings and errors (%d):\n%s", serverLog.total(), serverLog.String())
	t.Logf("worker warnings and errors (%d):\n%s", workerLog.total(), workerLog.String())
	s := svc.Stats()
	t.Logf("fan-out: %d inbox writes for %d deliveries, %d tasks, %d events; published in %.1fs, drained %.1fs later; test %.1fs",
		s.InboxWrites, nAcked*followersEach, s.Tasks, s.Events, publishedAt.Sub(began).Seconds(),
		drained.Sub(publishedAt).Seconds(), time.Since(began).Seconds())
}

// shardMaster is the port of the master serving author's events shard,
// found from the idempotency records its publishes left there.
func shardMaster(ctx context.Context, st *storetest.Store, cl *cluster, author feedcore.ID) (int, error) {
	keys, err := storetest.Keys(ctx, st.Client, st.Prefix+"fo:{s")
	if err != nil {
		return 0, err
	}
	for _, k := range keys {
		if strings.Contains(k, ":idem:"+feedcore.FormatID(author)+":") {
			slot, err := cl.slotOf(k)
			if err != nil {
				return 0, err
			}
			for _, p := range cl.ports {
				if cl.up(p) {
					return cl.masterOfSlot(p, slot)
				}
			}
		}
	}
	return 0, fmt.Errorf("no idempotency record of author %d under %sfo:", author, st.Prefix)
}

// storedPosts reads every post hash under the test's prefix.
func storedPosts(ctx context.Context, st *storetest.Store) (map[feedcore.ID]*feedcore.Post, error) {
	keys, err := storetest.Keys(ctx, st.Client, st.Prefix+"p:{")
	if err != nil {
		return nil, err
	}
	out := map[feedcore.ID]*feedcore.Post{}
	for _, k := range keys {
		s := strings.TrimSuffix(strings.TrimPrefix(k, st.Prefix+"p:{"), "}")
		id, err := feedcore.ParseID(s)
		if err != nil {
			return nil, fmt.Errorf("post key %q: %w", k, err)
		}
		m, err := st.Client.Do(ctx, st.Client.B().Hgetall().Key(k).Build()).AsStrMap()
		if err != nil {
			return nil, err
		}
		author, _ := feedcore.ParseID(m["a"])
		out[id] = &feedcore.Post{ID: id, Author: author, Text: m["x"], Deleted: m["d"] == "1"}
	}
	return out, nil
}

// firstAck is how long after t the first publish sent after t (of author,
// or of anyone for 0) was acknowledged; negative when none was.
func firstAck(posts map[feedcore.ID][]*published, t time.Time, author feedcore.ID) time.Duration {
	best := time.Duration(-1)
	for a, ps := range posts {
		if author != 0 && a != author {
			continue
		}
		for _, p := range ps {
			if p.acked && p.sent.After(t) && (best < 0 || p.at.Sub(t) < best) {
				best = p.at.Sub(t)
			}
		}
	}
	return best
}

func secs(d time.Duration) string {
	if d < 0 {
		return "never"
	}
	return fmt.Sprintf("%.2fs", d.Seconds())
}

// errorKind names a failed request: its GraphQL code and message, or the
// transport error.
func errorKind(err error) string {
	if list := client.Errors(err); len(list) > 0 {
		return client.ErrorCode(err) + ": " + list[0].Message
	}
	return "transport: " + err.Error()
}
