package feedcore

import (
	"context"
	"testing"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/safety"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// BenchmarkCleanup800: the time one safety clean-up job takes to take a
// blocked author's 800 posts out of a full inbox (cap 800), with its
// outbox read, the horizon kept, the live snapshots checked and the note
// shortened. Each op refills the inbox first, off the clock.
//
//	FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./feedcore -run '^$' -bench Cleanup800
func BenchmarkCleanup800(b *testing.B) {
	s := newService(b, storetest.New(b), Options{})
	ctx := context.Background()
	const viewer, author = store.ID(1), store.ID(2)
	items := make([]store.Item, 800)
	for i := range items {
		items[i] = store.Item{TS: testEpoch.UnixMilli() + int64(i), ID: store.ID(1_000_000 + i)}
	}
	fill := func(key string) {
		add := s.Redis.B().Zadd().Key(key).ScoreMember()
		for _, it := range items {
			add = add.ScoreMember(float64(it.TS), store.Member(it.ID))
		}
		if err := s.Do(ctx, add.Build()).Error(); err != nil {
			b.Fatal(err)
		}
	}
	fill(s.Keys.Outbox(author))
	hideForTest(b, s, viewer, author, core.RelationForever)
	for b.Loop() {
		b.StopTimer()
		fill(s.Keys.Inbox(viewer))
		b.StartTimer()
		if err := s.CleanUp(ctx, safety.CleanupJob{Viewer: viewer, Author: author}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if n, _ := s.Do(ctx, s.Redis.B().Zcard().Key(s.Keys.Inbox(viewer)).Build()).AsInt64(); n != 0 {
		b.Fatalf("the clean-up left %d entries", n)
	}
}
