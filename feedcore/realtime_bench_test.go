package feedcore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// rtBenchModes are the fan-out's realtime settings measured: off (no
// notifier: the fan-out asks no presence), on with no follower
// subscribed (each chunk asks its readers' presence, one ZMSCORE per
// presence set touched), and on with 1% of followers subscribed (each chunk
// also publishes to the buckets of those present; nobody listens to the
// channels here, so the serving replicas' recounts are not in it).
var rtBenchModes = []struct {
	name    string
	notices core.NoticeMode
	present int // one follower in present is subscribed; 0: none
}{{"off", core.NoticesOff, 0}, {"on", core.NoticesAuto, 0}, {"on-1pct-present", core.NoticesAuto, 100}}

// markPresent marks one follower in every n present, as a replica with
// their subscriptions open would, for an hour.
func markPresent(tb testing.TB, s *Service, followers []store.ID, n int) {
	tb.Helper()
	if n == 0 {
		return
	}
	lapse := float64(time.Now().Add(time.Hour).UnixMilli())
	for i := 0; i < len(followers); i += n {
		f := followers[i]
		if err := s.Do(context.Background(), s.Redis.B().Zadd().Key(s.Keys.Presence(store.PresenceBucket(f))).ScoreMember().
			ScoreMember(lapse, store.Member(f)).Build()).Error(); err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkFanoutRealtime is BenchmarkFanout (one post to 50,000
// followers) and BenchmarkFanoutSmallPosts (1 worker) with realtime off,
// on, and on with 1% of the followers subscribed: issue 29 allows the
// fan-out 10% less throughput with realtime on.
//
//	FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./feedcore -run '^$' -bench FanoutRealtime -benchtime 3x -count 3
//
// (the small posts with -benchtime 1000x: BenchmarkFanoutRealtime/small).
func BenchmarkFanoutRealtime(b *testing.B) {
	storetest.RequireReal(b)
	for _, m := range rtBenchModes {
		b.Run("big/realtime="+m.name, func(b *testing.B) {
			const followers = 50000
			s := newService(b, storetest.New(b), Options{BigVThreshold: 1 << 30, Notices: m.notices})
			mustUsers(b, s, 1)
			markPresent(b, s, makeFollowers(b, s, 1, followers), m.present)
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
			b.ReportMetric(float64(s.RealtimeStats().NoticesPublished)/float64(b.N), "notices/post")
		})
	}
	for _, m := range rtBenchModes {
		b.Run(fmt.Sprintf("small/realtime=%s", m.name), func(b *testing.B) {
			const authors, followers = 100, 20
			s := newService(b, storetest.New(b), Options{BigVThreshold: 1 << 30, Notices: m.notices})
			var ids []store.ID
			for a := range authors {
				author := store.ID(1 + a*(followers+1))
				mustUsers(b, s, author)
				fs := makeFollowers(b, s, author, followers)
				if m.present > 0 && a%5 == 0 { // one follower in 100: one in 20 of a fifth of the authors
					markPresent(b, s, fs[:1], 1)
				}
				ids = append(ids, author)
			}
			stop := startWorkers(b, s, WorkerOptions{Executors: 4})
			drain(b, s)
			stop()
			ctx := context.Background()
			for i := range b.N {
				if _, err := s.Publish(ctx, ids[i%authors], "hello"); err != nil {
					b.Fatal(err)
				}
			}
			b.ResetTimer()
			start := time.Now()
			startWorkers(b, s, WorkerOptions{Executors: 4})
			drain(b, s)
			elapsed := time.Since(start).Seconds()
			b.ReportMetric(float64(b.N)/elapsed, "posts/s")
			b.ReportMetric(float64(b.N*followers)/elapsed, "writes/s")
		})
	}
}
