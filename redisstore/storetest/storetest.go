// Package storetest gives each test a Redis of its own: the embedded store by
// default, or the real Redis named by FEED_TEST_REDIS (redis://127.0.0.1:6379)
// under a fresh key prefix that is deleted when the test ends.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/feedd/feedd/redisstore"
	"github.com/redis/rueidis"
)

// Env is the variable that points the tests at a real Redis.
const Env = "FEED_TEST_REDIS"

// Store is one test's Redis.
type Store struct {
	*redisstore.Store
	// Prefix is prepended to every key the test writes.
	Prefix string
	// Real reports a real Redis rather than the embedded one.
	Real bool
}

// New opens the test's store and registers its cleanup.
func New(tb testing.TB) *Store {
	tb.Helper()
	url := os.Getenv(Env)
	st, err := redisstore.Open(context.Background(), redisstore.Options{URL: url, ClientName: "feedd-test"})
	if err != nil {
		tb.Fatalf("open test store: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	s := &Store{Store: st, Prefix: "t" + hex.EncodeToString(b[:]) + ":", Real: url != ""}
	tb.Cleanup(func() {
		if s.Real {
			DeletePrefix(context.Background(), st.Client, s.Prefix)
		}
		st.Close()
	})
	return s
}

// RequireReal skips the test unless a real Redis is configured, saying why.
func RequireReal(tb testing.TB) {
	tb.Helper()
	if os.Getenv(Env) == "" {
		tb.Skipf("needs a real Redis: set %s=redis://127.0.0.1:6379", Env)
	}
}

// DeletePrefix removes every key that starts with prefix.
func DeletePrefix(ctx context.Context, c rueidis.Client, prefix string) {
	for _, node := range c.Nodes() {
		var cursor uint64
		for {
			e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(prefix+"*").Count(1000).Build()).AsScanEntry()
			if err != nil {
				break
			}
			if len(e.Elements) > 0 {
				cmds := make(rueidis.Commands, 0, len(e.Elements))
				for _, k := range e.Elements {
					cmds = append(cmds, c.B().Unlink().Key(k).Build())
				}
				c.DoMulti(ctx, cmds...)
			}
			cursor = e.Cursor
			if cursor == 0 {
				break
			}
		}
	}
}
