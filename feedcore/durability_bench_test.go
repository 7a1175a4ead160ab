package feedcore

import (
	"context"
	"testing"

	"github.com/feedd/feedd/redisstore/storetest"
)

// BenchmarkPublishWait measures what --wait-replicas costs a publish: the
// same publish with and without waiting for one replica (needs a Redis
// with replicas, i.e. the cluster lane):
//
//	FEED_TEST_REDIS=$(.ci/cluster.sh url) go test -run '^$' -bench PublishWait ./feedcore
func BenchmarkPublishWait(b *testing.B) {
	st := storetest.New(b)
	if !st.Cluster() {
		b.Skip("needs replicas: run against the cluster lane")
	}
	for _, c := range []struct {
		name string
		wait int
	}{{"async", 0}, {"wait1", 1}} {
		b.Run(c.name, func(b *testing.B) {
			s := newService(b, st, Options{WaitReplicas: c.wait})
			mustUsers(b, s, 1)
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := s.Publish(ctx, 1, "bench"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
