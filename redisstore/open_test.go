package redisstore_test

import (
	"context"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// deadAddr is a local address nothing listens on.
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// seeds returns the addresses of the test's Redis: those of FEED_TEST_REDIS,
// or a miniredis of this test's own; cache says whether client-side
// caching works there.
func seeds(t *testing.T) (addrs []string, cache bool) {
	if u := os.Getenv(storetest.Env); u != "" {
		opt, err := rueidis.ParseURL(u)
		if err != nil {
			t.Fatal(err)
		}
		return opt.InitAddress, true
	}
	return []string{miniredis.RunT(t).Addr()}, false
}

// seedURL is redis://first?addr=rest...
func seedURL(first string, rest []string) string {
	q := url.Values{"addr": rest}
	return "redis://" + first + "?" + q.Encode()
}

// TestOpenWithFirstSeedDown opens a URL whose first address refuses
// connections and whose others are the test's Redis (a single Redis, a
// Redis Cluster, or miniredis, which answers CLUSTER SLOTS as a cluster of
// one): the store opens and serves.
func TestOpenWithFirstSeedDown(t *testing.T) {
	addrs, cache := seeds(t)
	for _, single := range []bool{false, true} {
		u := seedURL(deadAddr(t), addrs)
		st, err := redisstore.Open(context.Background(), redisstore.Options{URL: u, DisableCache: !cache,
			SingleNode: single && len(addrs) == 1, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatalf("open %s (single node %v): %v", u, single, err)
		}
		ctx := context.Background()
		key := "seedtest:" + strings.ReplaceAll(t.Name(), "/", ":")
		if err := st.Client.Do(ctx, st.Client.B().Set().Key(key).Value("v").Ex(time.Minute).Build()).Error(); err != nil {
			t.Fatal(err)
		}
		if v, err := st.Client.Do(ctx, st.Client.B().Get().Key(key).Build()).ToString(); err != nil || v != "v" {
			t.Fatalf("GET = %q, %v", v, err)
		}
		st.Client.Do(ctx, st.Client.B().Del().Key(key).Build())
		st.Close()
	}
}

func TestOpenWithEverySeedDown(t *testing.T) {
	u := seedURL(deadAddr(t), []string{deadAddr(t)})
	_, err := redisstore.Open(context.Background(), redisstore.Options{URL: u, Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "is redis-server running?") {
		t.Fatalf("open with every seed down: %v", err)
	}
}
