package roundtrip_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

// TestCacheStats: cacheable reads are counted as hits or misses (every
// read is a miss on the embedded store, which has no client-side cache).
// Other tests may run in parallel, so only growth is asserted.
func TestCacheStats(t *testing.T) {
	st := storetest.New(t)
	c := st.Client
	ctx := context.Background()
	k := st.Prefix + "cs"
	if err := c.Do(ctx, c.B().Set().Key(k).Value("v").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	h0, m0 := roundtrip.CacheStats()
	for range 3 {
		if err := c.DoCache(ctx, c.B().Get().Key(k).Cache(), time.Minute).Error(); err != nil {
			t.Fatal(err)
		}
		rs := c.DoMultiCache(ctx, rueidis.CT(c.B().Get().Key(k).Cache(), time.Minute))
		if err := rs[0].Error(); err != nil {
			t.Fatal(err)
		}
	}
	h1, m1 := roundtrip.CacheStats()
	if got := (h1 - h0) + (m1 - m0); got < 6 {
		t.Errorf("%d cacheable reads counted, want at least 6", got)
	}
	if st.Real && h1-h0 < 4 {
		t.Errorf("%d cache hits on a real Redis, want at least 4 of 6 reads", h1-h0)
	}
	if !st.Real && h1 != h0 {
		t.Errorf("%d cache hits on the embedded store", h1-h0)
	}
}
