package roundtrip_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/redisstore"
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
	h0, m0 := roundtrip.CacheStats(c)
	for range 3 {
		if err := c.DoCache(ctx, c.B().Get().Key(k).Cache(), time.Minute).Error(); err != nil {
			t.Fatal(err)
		}
		rs := c.DoMultiCache(ctx, rueidis.CT(c.B().Get().Key(k).Cache(), time.Minute))
		if err := rs[0].Error(); err != nil {
			t.Fatal(err)
		}
	}
	h1, m1 := roundtrip.CacheStats(c)
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

// unwrapping is a client that wraps another and says so, as feedcore's
// does.
type unwrapping struct{ rueidis.Client }

func (u unwrapping) Unwrap() rueidis.Client { return u.Client }

// Each wrapped client counts its own cacheable reads (two servers in one
// process report their own), and a client wrapping it reports them too.
func TestCacheStatsPerClient(t *testing.T) {
	st := storetest.New(t)
	open := func() rueidis.Client { // a replica's own store, wrapped by redisstore
		t.Helper()
		s, err := redisstore.Open(context.Background(), redisstore.Options{URL: os.Getenv(storetest.Env), ClientName: "feedd-test"})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		return s.Client
	}
	a, b := open(), open()
	ctx := context.Background()
	k := st.Prefix + "per-client"
	if err := a.Do(ctx, a.B().Set().Key(k).Value("v").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := a.DoCache(ctx, a.B().Get().Key(k).Cache(), time.Minute).Error(); err != nil {
			t.Fatal(err)
		}
	}
	if h, m := roundtrip.CacheStats(a); h+m != 3 {
		t.Errorf("client a: %d hits, %d misses, want 3 reads", h, m)
	}
	if h, m := roundtrip.CacheStats(unwrapping{a}); h+m != 3 {
		t.Errorf("a client wrapping a: %d hits, %d misses, want a's 3 reads", h, m)
	}
	if h, m := roundtrip.CacheStats(b); h+m != 0 {
		t.Errorf("client b counted %d hits, %d misses of a's reads", h, m)
	}
}
