package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/feedd/feedd/redisstore"
)

// TestEmbeddedKeysExpireInRealTime: a TTL on the embedded store runs out
// on the wall clock, as on Redis, with nobody moving miniredis's clock.
func TestEmbeddedKeysExpireInRealTime(t *testing.T) {
	st, err := redisstore.Open(context.Background(), redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	c := st.Client
	if err := c.Do(ctx, c.B().Set().Key("k").Value("v").Ex(time.Second).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Do(ctx, c.B().Exists().Key("k").Build()).AsInt64(); err != nil || n != 1 {
		t.Fatalf("key gone at once: %d, %v", n, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := c.Do(ctx, c.B().Exists().Key("k").Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a 1s TTL on the embedded store did not run out within 5s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
