// Package storetest gives each test a Redis of its own: the embedded store by
// default, or the real Redis named by FEED_TEST_REDIS (redis://127.0.0.1:6379)
// under a fresh key prefix that is deleted when the test ends.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
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

// DeletePrefix removes every key that starts with prefix: on a single Redis,
// from its one node; on a Redis Cluster, from every master (replicas hold
// copies only). A node it cannot scan is an error, never skipped silently.
func DeletePrefix(ctx context.Context, c rueidis.Client, prefix string) error {
	return scanPrefix(ctx, c, prefix, func(keys []string) error {
		cmds := make(rueidis.Commands, 0, len(keys))
		for _, k := range keys {
			cmds = append(cmds, c.B().Unlink().Key(k).Build())
		}
		for _, r := range c.DoMulti(ctx, cmds...) {
			if err := r.Error(); err != nil {
				return err
			}
		}
		return nil
	})
}

// Keys lists the keys that start with prefix, on every master.
func Keys(ctx context.Context, c rueidis.Client, prefix string) ([]string, error) {
	var all []string
	err := scanPrefix(ctx, c, prefix, func(keys []string) error {
		all = append(all, keys...)
		return nil
	})
	return all, err
}

// scanPrefix calls fn with each batch of keys starting with prefix, from the
// one node of a single Redis or every master of a cluster.
func scanPrefix(ctx context.Context, c rueidis.Client, prefix string, fn func([]string) error) error {
	nodes := c.Nodes()
	if c.Mode() == rueidis.ClientModeCluster {
		masters, err := clusterMasters(ctx, nodes)
		if err != nil {
			return fmt.Errorf("scan keys %s*: %w", prefix, err)
		}
		var missing []string
		scan := make(map[string]rueidis.Client, len(masters))
		for _, addr := range masters {
			if n, ok := nodes[addr]; ok {
				scan[addr] = n
			} else {
				missing = append(missing, addr)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("scan keys %s*: the client has no connection to masters %v", prefix, missing)
		}
		nodes = scan
	}
	var errs []error
	for addr, node := range nodes {
		if err := scanNode(ctx, node, prefix, fn); err != nil {
			errs = append(errs, fmt.Errorf("keys %s* on %s: %w", prefix, addr, err))
		}
	}
	return errors.Join(errs...)
}

// clusterMasters asks the first node that answers CLUSTER SLOTS for the
// addresses of the masters serving the slots.
func clusterMasters(ctx context.Context, nodes map[string]rueidis.Client) ([]string, error) {
	var errs []error
	for addr, n := range nodes {
		slots, err := n.Do(ctx, n.B().ClusterSlots().Build()).ToArray()
		if err != nil {
			errs = append(errs, fmt.Errorf("CLUSTER SLOTS on %s: %w", addr, err))
			continue
		}
		seen := map[string]bool{}
		var masters []string
		for _, r := range slots {
			e, err := r.ToArray()
			if err != nil || len(e) < 3 {
				return nil, fmt.Errorf("CLUSTER SLOTS on %s: unexpected entry %v", addr, r)
			}
			m, err := e[2].ToArray()
			if err != nil || len(m) < 2 {
				return nil, fmt.Errorf("CLUSTER SLOTS on %s: unexpected master %v", addr, e[2])
			}
			host, _ := m[0].ToString()
			port, _ := m[1].AsInt64()
			if host == "" { // the node asked does not know its own endpoint
				host, _, _ = net.SplitHostPort(addr)
			}
			a := net.JoinHostPort(host, strconv.FormatInt(port, 10))
			if !seen[a] {
				seen[a] = true
				masters = append(masters, a)
			}
		}
		return masters, nil
	}
	if len(errs) == 0 {
		return nil, errors.New("the client knows no node")
	}
	return nil, errors.Join(errs...)
}

func scanNode(ctx context.Context, node rueidis.Client, prefix string, fn func([]string) error) error {
	var cursor uint64
	for {
		e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(prefix+"*").Count(1000).Build()).AsScanEntry()
		if err != nil {
			return err
		}
		if len(e.Elements) > 0 {
			if err := fn(e.Elements); err != nil {
				return err
			}
		}
		cursor = e.Cursor
		if cursor == 0 {
			return nil
		}
	}
}
