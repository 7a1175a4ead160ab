package feedcore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// BenchmarkFanout measures end-to-end fan-out: one post to 50,000 followers
// through the dispatcher and executors, reported as inbox writes a second.
// Compare with `redis-benchmark -q -n 1000000 -P 64 -r 100000 zadd k:__rand_int__ __rand_int__ __rand_int__`
// on the same machine: the fan-out must reach at least half of its rate,
// so that the worker, not Redis, is never the limit.
//
//	FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./feedcore -run '^$' -bench Fanout -benchtime 3x
//
// The scale tests (scale_test.go, FEED_SCALE=1) measure a million or more
// followers, push and big-V, with redis-benchmark run in the same minute.
func BenchmarkFanout(b *testing.B) {
	storetest.RequireReal(b)
	benchFanout(b, Options{BigVThreshold: 1 << 30}, nil)
}

// measure, when a fan-out benchmark is given one, is called with the
// service and every follower before the timer starts, and returns what
// the benchmark calls with the inbox writes made once it has its figures
// (realtime_bench_test.go marks followers present and reports the CPU a
// write costs so).
type measure func(s *Service, followers []store.ID) (report func(writes int))

// benchFanout is BenchmarkFanout's run on a service with options o.
func benchFanout(b *testing.B, o Options, m measure) {
	const followers = 50000
	s := newService(b, storetest.New(b), o)
	mustUsers(b, s, 1)
	fs := makeFollowers(b, s, 1, followers)
	startWorkers(b, s, WorkerOptions{Executors: 4})
	report := func(int) {}
	if m != nil {
		report = m(s, fs)
	}
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := s.Publish(ctx, 1, "hello"); err != nil {
			b.Fatal(err)
		}
		drain(b, s)
	}
	b.ReportMetric(float64(b.N*followers)/time.Since(start).Seconds(), "writes/s")
	report(b.N * followers)
}

// BenchmarkFanoutSmallPosts measures the fan-out of many small posts, where
// what a post costs (its event, dispatch, task and checkpoints, one stream
// entry at a time per consumer) counts as much as what an inbox write
// costs: b.N posts by 100 authors of 20 followers each, queued while no
// worker runs, then drained by 1 or 2 worker processes (4 executors each,
// one stream shard), reported as posts and inbox writes a second.
// docs/deploying.md sizes workers with it.
//
//	FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./feedcore -run '^$' -bench FanoutSmallPosts -benchtime 1000x
func BenchmarkFanoutSmallPosts(b *testing.B) {
	storetest.RequireReal(b)
	for _, workers := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			benchSmallPosts(b, workers, Options{BigVThreshold: 1 << 30}, nil)
		})
	}
}

// benchSmallPosts is BenchmarkFanoutSmallPosts' run with workers worker
// processes on a service with options o.
func benchSmallPosts(b *testing.B, workers int, o Options, m measure) {
	const authors, followers = 100, 20
	s := newService(b, storetest.New(b), o)
	var ids, all []store.ID
	for a := range authors {
		author := store.ID(1 + a*(followers+1))
		mustUsers(b, s, author)
		all = append(all, makeFollowers(b, s, author, followers)...)
		ids = append(ids, author)
	}
	stop := startWorkers(b, s, WorkerOptions{Executors: 4})
	drain(b, s) // the follows' own work
	stop()
	ctx := context.Background()
	for i := range b.N {
		if _, err := s.Publish(ctx, ids[i%authors], "hello"); err != nil {
			b.Fatal(err)
		}
	}
	report := func(int) {}
	if m != nil {
		report = m(s, all)
	}
	b.ResetTimer()
	start := time.Now()
	for range workers {
		startWorkers(b, s, WorkerOptions{Executors: 4})
	}
	drain(b, s)
	elapsed := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N)/elapsed, "posts/s")
	b.ReportMetric(float64(b.N*followers)/elapsed, "writes/s")
	report(b.N * followers)
}
