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
	"time"

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
	// A generous command timeout: under -race on two busy cores, a bulk
	// pipeline of scripts on the embedded store (Lua in Go) can take
	// seconds. Tests of a silent Redis open stores of their own.
	st, err := redisstore.Open(context.Background(), redisstore.Options{URL: url, ClientName: "feedd-test", Timeout: 30 * time.Second})
	if err != nil {
		tb.Fatalf("open test store: %v", err)
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	s := &Store{Store: st, Prefix: "t" + hex.EncodeToString(b[:]) + ":", Real: url != ""}
	tb.Cleanup(func() {
		if s.Real {
			if err := DeletePrefix(context.Background(), st.Client, s.Prefix); err != nil {
				tb.Errorf("test store cleanup: %v", err)
			}
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

// Cluster reports a Redis Cluster (FEED_TEST_REDIS naming several nodes),
// for the few tests that must tell it apart, such as those putting a proxy in
// front of one server.
func (s *Store) Cluster() bool {
	return s.Client.Mode() == rueidis.ClientModeCluster
}

// DeletePrefix removes every key that starts with prefix (see
// redisstore.DeletePrefix).
func DeletePrefix(ctx context.Context, c rueidis.Client, prefix string) error {
	_, err := redisstore.DeletePrefix(ctx, c, prefix)
	return err
}

// Keys lists the keys that start with prefix, on every master.
func Keys(ctx context.Context, c rueidis.Client, prefix string) ([]string, error) {
	var all []string
	err := redisstore.ScanPrefix(ctx, c, prefix, func(keys []string) error {
		all = append(all, keys...)
		return nil
	})
	return all, err
}
