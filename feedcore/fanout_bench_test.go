package feedcore

import (
	"context"
	"testing"
	"time"

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
	const followers = 50000
	s := newService(b, storetest.New(b), Options{BigVThreshold: 1 << 30})
	mustUsers(b, s, 1)
	makeFollowers(b, s, 1, followers)
	startWorkers(b, s, WorkerOptions{Executors: 4})
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
}
