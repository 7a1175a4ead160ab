package feedcore

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/redisstore/storetest"
)

// Fan-out at scale: opt-in measurements on a real Redis. They build one
// author with a million followers (FEED_SCALE_FOLLOWERS to change it),
// publish, and print how long after Publish returned the last follower's
// inbox held the post and the fan-out had drained, the inbox writes a
// second, redis-benchmark's pipelined ZADD rate measured just before, and
// Redis memory. They assert only what can be counted (every follower got
// the post exactly once, writes and tasks done, nothing dead-lettered),
// never wall-clock.
//
//	FEED_SCALE=1 FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./feedcore -run '^TestScale' -v -timeout 60m
//
// FEED_SCALE_RUNS publishes that many posts one after another (default 3),
// each measured; FEED_SCALE_BUILD=api builds the graph through PutUsers and
// FollowMany (journal, checks, profiles) instead of pipelined ZADDs to the
// graph's keys. Check `redis-cli info memory` first: 10M followers take
// about 3 GB.
const scaleEnv = "FEED_SCALE"

func requireScale(tb testing.TB) {
	tb.Helper()
	if os.Getenv(scaleEnv) == "" {
		tb.Skipf("opt-in scale measurement: set %s=1 (and %s)", scaleEnv, storetest.Env)
	}
	storetest.RequireReal(tb)
}

func envInt(tb testing.TB, name string, def int) int {
	tb.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
	if err != nil || n <= 0 {
		tb.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}

// scaleFollowers is the network's size: FEED_SCALE_FOLLOWERS, else def.
func scaleFollowers(tb testing.TB, def int) int { return envInt(tb, "FEED_SCALE_FOLLOWERS", def) }

// buildFollowers makes users author+1 .. author+n follow author. By default
// it writes both sides of the graph (following sets, the record of truth,
// and the author's followers set) with pipelined ZADDs, two workers, 10,000
// edges a round trip; with FEED_SCALE_BUILD=api it goes through PutUsers
// and FollowMany in batches of 1,000, as the importer does.
func buildFollowers(tb testing.TB, s *Service, author store.ID, n int) {
	tb.Helper()
	ctx := context.Background()
	start := time.Now()
	const batch = 10000
	api := os.Getenv("FEED_SCALE_BUILD") == "api"
	var (
		mu   sync.Mutex
		next int
		wg   sync.WaitGroup
		errs []error
	)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				lo := next
				next += batch
				mu.Unlock()
				if lo >= n {
					return
				}
				hi := min(lo+batch, n)
				var err error
				if api {
					err = followAPI(ctx, s, author, lo, hi)
				} else {
					err = followBulk(ctx, s, author, lo, hi)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					next = n
					mu.Unlock()
					return
				}
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		tb.Fatal(errs[0])
	}
	card, err := s.Redis.Do(ctx, s.Redis.B().Zcard().Key(s.Keys.Followers(author)).Build()).AsInt64()
	if err != nil || card != int64(n) {
		tb.Fatalf("author %d has %d followers (%v), want %d", author, card, err, n)
	}
	d := time.Since(start)
	tb.Logf("built %d followers in %.1f s (%.0f edges/s, api=%v)", n, d.Seconds(), float64(n)/d.Seconds(), api)
}

func followBulk(ctx context.Context, s *Service, author store.ID, lo, hi int) error {
	cmds := make([]rueidis.Completed, 0, hi-lo+1)
	fr := s.Redis.B().Zadd().Key(s.Keys.Followers(author)).ScoreMember()
	for i := lo; i < hi; i++ {
		f := author + 1 + store.ID(i)
		cmds = append(cmds, s.Redis.B().Zadd().Key(s.Keys.Following(f)).ScoreMember().ScoreMember(0, store.Member(author)).Build())
		fr = fr.ScoreMember(0, store.Member(f))
	}
	cmds = append(cmds, fr.Build())
	return store.FirstErr(s.Redis.DoMulti(ctx, cmds...))
}

func followAPI(ctx context.Context, s *Service, author store.ID, lo, hi int) error {
	ids := idRange(author+1+store.ID(lo), hi-lo)
	if err := addUsers(ctx, s, ids); err != nil {
		return err
	}
	return addFollows(ctx, s, followerEdges(ids, author))
}

// touchFollowers records a read now by users author+1 .. author+n through
// the service's own activity write (touchCmd), pipelined 10,000 a round
// trip. Service.Touch would also queue an upgrade event per reader (the
// dispatcher handles those one at a time, minutes for a million); the
// upgrade's work (joining active sets) is what promotion does in bulk.
func touchFollowers(tb testing.TB, s *Service, author store.ID, n int) {
	tb.Helper()
	ctx := context.Background()
	start := time.Now()
	for lo := 0; lo < n; lo += 10000 {
		cmds := make([]rueidis.Completed, 0, 10000)
		for i := lo; i < min(lo+10000, n); i++ {
			f := author + 1 + store.ID(i)
			s.Touches.Forget(f)
			if c := s.TouchCmd(f); c != nil {
				cmds = append(cmds, *c)
			}
		}
		if err := store.FirstErr(s.Redis.DoMulti(ctx, cmds...)); err != nil {
			tb.Fatal(err)
		}
	}
	tb.Logf("%d readers seen now in %.1f s", n, time.Since(start).Seconds())
}

// usedMemory is the server's used_memory once no lazy free is pending
// (keys unlinked by an earlier test are still being freed a while). The
// Redis is shared: other users' writes show in it too.
func usedMemory(tb testing.TB, s *Service) int64 {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		info, err := s.Redis.Do(context.Background(), s.Redis.B().Info().Section("memory").Build()).ToString()
		if err != nil {
			tb.Fatal(err)
		}
		used, pending := int64(-1), int64(0)
		for _, l := range strings.Split(info, "\n") {
			l = strings.TrimSpace(l)
			if v, ok := strings.CutPrefix(l, "used_memory:"); ok {
				used, _ = strconv.ParseInt(v, 10, 64)
			} else if v, ok := strings.CutPrefix(l, "lazyfree_pending_objects:"); ok {
				pending, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		if used < 0 {
			tb.Fatal("INFO memory without used_memory")
		}
		if pending == 0 || time.Now().After(deadline) {
			return used
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sampleInboxBytes averages MEMORY USAGE over up to 1,000 followers'
// inboxes spread over the network.
func sampleInboxBytes(tb testing.TB, s *Service, author store.ID, n int) float64 {
	tb.Helper()
	step := max(1, n/1000)
	var cmds []rueidis.Completed
	for i := 0; i < n; i += step {
		cmds = append(cmds, s.Redis.B().MemoryUsage().Key(s.Keys.Inbox(author+1+store.ID(i))).Samples(0).Build())
	}
	var sum int64
	for _, r := range s.Redis.DoMulti(context.Background(), cmds...) {
		v, err := r.AsInt64()
		if err != nil {
			tb.Fatal(err)
		}
		sum += v
	}
	return float64(sum) / float64(len(cmds))
}

var rbRate = regexp.MustCompile(`([0-9.]+) requests per second`)

// redisBenchmark runs the reference of the fan-out budget (feedd must
// reach half of its rate), `redis-benchmark -q -n 1000000
// -P 64 -r 100000 zadd k:__rand_int__ __rand_int__ __rand_int__`, against
// the test's Redis with the keys under the test's prefix (cleaned up with
// the rest), and returns its ZADDs a second; 0 without redis-benchmark.
func redisBenchmark(tb testing.TB, prefix string) float64 {
	tb.Helper()
	bin, err := exec.LookPath("redis-benchmark")
	if err != nil {
		tb.Log("redis-benchmark not found: no reference rate")
		return 0
	}
	u, err := url.Parse(os.Getenv(storetest.Env))
	if err != nil || u.Hostname() == "" {
		tb.Logf("no host in %s: no reference rate", storetest.Env)
		return 0
	}
	port := u.Port()
	if port == "" {
		port = "6379"
	}
	out, err := exec.Command(bin, "-h", u.Hostname(), "-p", port, "-q", "-n", "1000000", "-P", "64", "-r", "100000",
		"zadd", prefix+"k:__rand_int__", "__rand_int__", "__rand_int__").CombinedOutput()
	if err != nil {
		tb.Fatalf("redis-benchmark: %v\n%s", err, out)
	}
	m := rbRate.FindAllSubmatch(out, -1)
	if len(m) == 0 {
		tb.Fatalf("redis-benchmark said %q", out)
	}
	r, _ := strconv.ParseFloat(string(m[len(m)-1][1]), 64)
	return r
}

// delivery is one measured publish.
type delivery struct {
	last, drained time.Duration // publish return to the last follower's inbox holding it, to no backlog
	writes        float64       // inbox writes a second, publish return to drained
	// CPU time per inbox write, of the Redis server and of this process
	// (workers and the waiting loop): on a shared machine they say where
	// the time goes better than the wall clock does.
	redisCPU, goCPU time.Duration
}

// redisCPU is the server's used CPU time, user and system.
func redisCPU(tb testing.TB, s *Service) time.Duration {
	tb.Helper()
	info, err := s.Redis.Do(context.Background(), s.Redis.B().Info().Section("cpu").Build()).ToString()
	if err != nil {
		tb.Fatal(err)
	}
	var sum float64
	for _, l := range strings.Split(info, "\n") {
		l = strings.TrimSpace(l)
		for _, f := range []string{"used_cpu_sys:", "used_cpu_user:"} {
			if v, ok := strings.CutPrefix(l, f); ok {
				x, _ := strconv.ParseFloat(v, 64)
				sum += x
			}
		}
	}
	return time.Duration(sum * float64(time.Second))
}

// processCPU is this process's CPU time, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// publishAndWait publishes a post by author and waits, polling every
// millisecond up to a deadline, until the last follower's inbox holds it
// and the fan-out has drained (every task acknowledged, so every write
// confirmed). It then counts the inboxes holding the post and the work the
// workers report.
func publishAndWait(tb testing.TB, s *Service, author store.ID, n int) delivery {
	tb.Helper()
	ctx := context.Background()
	before := s.Stats()
	rcpu, gcpu := redisCPU(tb, s), processCPU()
	p, err := s.Publish(ctx, author, "scale")
	if err != nil {
		tb.Fatal(err)
	}
	t0 := time.Now()
	lastInbox, m := s.Keys.Inbox(author+store.ID(n)), store.Member(p.ID)
	deadline := t0.Add(10 * time.Minute)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	var d delivery
	for d.drained == 0 {
		if time.Now().After(deadline) {
			tb.Fatalf("fan-out to %d followers not done after %s", n, deadline.Sub(t0))
		}
		<-tick.C
		if d.last == 0 {
			_, err := s.Redis.Do(ctx, s.Redis.B().Zscore().Key(lastInbox).Member(m).Build()).AsFloat64()
			if rueidis.IsRedisNil(err) {
				continue
			}
			if err != nil {
				tb.Fatal(err)
			}
			d.last = time.Since(t0)
		}
		backlog, err := s.Backlog(ctx)
		if err != nil {
			tb.Fatal(err)
		}
		if backlog == 0 {
			d.drained = time.Since(t0)
		}
	}
	d.writes = float64(n) / d.drained.Seconds()
	d.redisCPU, d.goCPU = (redisCPU(tb, s)-rcpu)/time.Duration(n), (processCPU()-gcpu)/time.Duration(n)

	// What can be counted: every follower's inbox holds the post, the
	// workers wrote each inbox once, in n/taskSize+1 tasks (the dispatcher
	// closes a task at every taskSize-th target and queues the rest, maybe
	// none, as the last).
	if got := countHolding(tb, s, author, n, p.ID); got != n {
		tb.Fatalf("%d of %d followers' inboxes hold post %d", got, n, p.ID)
	}
	after := s.Stats()
	if w := after.InboxWrites - before.InboxWrites; w != int64(n) {
		tb.Fatalf("%d inbox writes for %d followers", w, n)
	}
	if k, want := after.Tasks-before.Tasks, int64(n/timeline.TaskSize+1); k != want {
		tb.Fatalf("%d tasks for %d followers, want %d", k, n, want)
	}
	if dl := after.DeadLetters - before.DeadLetters; dl != 0 {
		tb.Fatalf("%d entries dead-lettered", dl)
	}
	return d
}

// countHolding counts followers author+1 .. author+n whose inbox holds post.
func countHolding(tb testing.TB, s *Service, author store.ID, n int, post store.ID) int {
	tb.Helper()
	got := 0
	m := store.Member(post)
	for lo := 0; lo < n; lo += 10000 {
		cmds := make([]rueidis.Completed, 0, 10000)
		for i := lo; i < min(lo+10000, n); i++ {
			cmds = append(cmds, s.Redis.B().Zscore().Key(s.Keys.Inbox(author+1+store.ID(i))).Member(m).Build())
		}
		for _, r := range s.Redis.DoMulti(context.Background(), cmds...) {
			if _, err := r.AsFloat64(); err == nil {
				got++
			} else if !rueidis.IsRedisNil(err) {
				tb.Fatal(err)
			}
		}
	}
	return got
}

// runScale starts the workers (warmed up by a post to nobody), then
// measures FEED_SCALE_RUNS publishes by author to its n targets, with
// redis-benchmark's rate and Redis memory around them. With inboxesExist,
// an earlier post by the author is delivered first, and logged apart: it
// creates the n inbox keys, as the posts a reader has read did in the
// past, so that the measured posts land in inboxes that exist.
func runScale(t *testing.T, st *storetest.Store, s *Service, author store.ID, n int, built int64, inboxesExist bool) {
	ctx := context.Background()
	wo := WorkerOptions{Executors: envInt(t, "FEED_SCALE_EXECUTORS", 0)}
	startWorkers(t, s, wo)
	mustUsers(t, s, author+store.ID(n)+1)
	if _, err := s.Publish(ctx, author+store.ID(n)+1, "warm-up"); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	if inboxesExist {
		d := publishAndWait(t, s, author, n)
		t.Logf("earlier post, creating every inbox: last follower's inbox %d ms, drained %d ms after publish returned; CPU a write: Redis %d ns, workers %d ns",
			d.last.Milliseconds(), d.drained.Milliseconds(), d.redisCPU.Nanoseconds(), d.goCPU.Nanoseconds())
	}

	rb := redisBenchmark(t, st.Prefix+"rb:")
	if err := storetest.DeletePrefix(ctx, st.Client, st.Prefix+"rb:"); err != nil {
		t.Fatal(err)
	}
	runs := envInt(t, "FEED_SCALE_RUNS", 3)
	var ds []delivery
	mem := []int64{usedMemory(t, s)}
	for i := range runs {
		d := publishAndWait(t, s, author, n)
		ds = append(ds, d)
		mem = append(mem, usedMemory(t, s))
		ratio := ""
		if rb > 0 {
			ratio = fmt.Sprintf(" = %.0f%% of redis-benchmark", 100*d.writes/rb)
		}
		t.Logf("run %d: last follower's inbox %d ms, drained %d ms after publish returned; %.0f inbox writes/s%s; CPU a write: Redis %d ns, workers %d ns; used_memory %+.1f MB (%.1f B a follower)",
			i+1, d.last.Milliseconds(), d.drained.Milliseconds(), d.writes, ratio, d.redisCPU.Nanoseconds(), d.goCPU.Nanoseconds(),
			float64(mem[i+1]-mem[i])/1e6, float64(mem[i+1]-mem[i])/float64(n))
	}
	// The last follower's feed, read through the service, leads with it.
	pg, err := s.FollowingFeed(ctx, FeedRequest{Viewer: author + store.ID(n), First: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Edges) != 1 || pg.Edges[0].Post.Author != author {
		t.Fatalf("last follower's feed does not lead with the author's post: %+v", pg.Edges)
	}
	rbAfter := redisBenchmark(t, st.Prefix+"rb:")
	if err := storetest.DeletePrefix(ctx, st.Client, st.Prefix+"rb:"); err != nil {
		t.Fatal(err)
	}
	drained := make([]float64, len(ds))
	for i, d := range ds {
		drained[i] = d.drained.Seconds()
	}
	t.Logf("SUMMARY %d targets, %d executors/shard, %d runs: drained in %.2f s min, %.2f s max; %.0f-%.0f inbox writes/s; redis-benchmark zadd -P 64 %.0f before, %.0f after",
		n, wo.WithDefaults().Executors, runs, slices.Min(drained), slices.Max(drained),
		float64(n)/slices.Max(drained), float64(n)/slices.Min(drained), rb, rbAfter)
	t.Logf("MEMORY used_memory %.1f MB before the graph, %.1f MB with it (%.1f B an edge), %.1f MB after %d posts to every follower; inboxes average %.1f B each by MEMORY USAGE (%d entries)",
		float64(built)/1e6, float64(mem[0])/1e6, float64(mem[0]-built)/float64(n), float64(mem[len(mem)-1])/1e6,
		runs, sampleInboxBytes(t, s, author, n), runs)
}

// TestScalePushFanout: one post by an ordinary author (big-V threshold
// above its follower count) pushed to all of its followers, a million by
// default.
func TestScalePushFanout(t *testing.T) {
	requireScale(t)
	n := scaleFollowers(t, 1_000_000)
	st := storetest.New(t)
	s := newService(t, st, Options{BigVThreshold: 2*n + 1})
	const author = 1
	mustUsers(t, s, author)
	empty := usedMemory(t, s)
	buildFollowers(t, s, author, n)
	runScale(t, st, s, author, n, empty, false)
}

// TestScaleBigVFanout: one post by a big-V author to its active followers,
// a million of them, all seen within the active window, whose inboxes
// exist (an earlier post by the author, delivered and logged before the
// measured ones, creates them; TestScalePushFanout's first run measures
// posts that create inboxes). The readers are
// made active through the service's activity write and the author promoted
// through pushTargets, as a publish over the threshold does, so the active
// set is the one promotion builds.
func TestScaleBigVFanout(t *testing.T) {
	requireScale(t)
	n := scaleFollowers(t, 1_000_000)
	st := storetest.New(t)
	var bigV atomic.Int64 // above n while the followers are built
	bigV.Store(int64(2*n + 1))
	s := newService(t, st, Options{BigVThresholdFunc: func() int { return int(bigV.Load()) }})
	ctx := context.Background()
	const author = 1
	mustUsers(t, s, author)
	empty := usedMemory(t, s)
	buildFollowers(t, s, author, n)
	touchFollowers(t, s, author, n)

	bigV.Store(int64(n - 1))
	start := time.Now()
	set, err := s.PushTargets(ctx, author)
	if err != nil {
		t.Fatal(err)
	}
	if set != s.Keys.Active(author) {
		t.Fatalf("author with %d followers over a threshold of %d pushes to %s, want its active set", n, n-1, set)
	}
	active, err := s.Redis.Do(ctx, s.Redis.B().Zcard().Key(set).Build()).AsInt64()
	if err != nil || active != int64(n) {
		t.Fatalf("active set of %d (%v), want %d", active, err, n)
	}
	t.Logf("promoted: active set of %d built in %.1f s", active, time.Since(start).Seconds())
	// Active readers read their feeds, so their inboxes exist.
	runScale(t, st, s, author, n, empty, true)
}
