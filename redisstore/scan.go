package redisstore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
)

// ScanCount is the COUNT hint of each SCAN call: about how many keys a node
// looks at per call (Redis may return fewer or, with a small hash table
// or the embedded store, more).
const ScanCount = 1000

// ScanKeys calls fn with each batch of keys matching the glob pattern match,
// from the one node of a single Redis or from every master of a Redis
// Cluster (replicas hold copies only), one node after the other. A node it
// cannot scan is an error, never skipped silently. SCAN guarantees that a
// key present for the whole scan is returned, at least once (fn may see a
// key twice when the node rehashes); a key created or deleted meanwhile may
// or may not be. fn's slice is its own.
func ScanKeys(ctx context.Context, c rueidis.Client, match string, fn func(keys []string) error) error {
	nodes, err := Masters(ctx, c)
	if err != nil {
		return fmt.Errorf("scan keys %s: %w", match, err)
	}
	var errs []error
	for addr, node := range nodes {
		if err := scanNode(ctx, node, match, fn); err != nil {
			errs = append(errs, fmt.Errorf("scan keys %s on %s: %w", match, addr, err))
			if ctx.Err() != nil {
				break
			}
		}
	}
	return errors.Join(errs...)
}

// Masters are the nodes that hold the data, by address: the one node of a
// single Redis, or every master of a Redis Cluster (the client's Nodes
// include the replicas, which hold copies only).
func Masters(ctx context.Context, c rueidis.Client) (map[string]rueidis.Client, error) {
	nodes := c.Nodes()
	if c.Mode() != rueidis.ClientModeCluster {
		return nodes, nil
	}
	masters, err := clusterMasters(ctx, nodes)
	if err != nil {
		return nil, err
	}
	var missing []string
	out := make(map[string]rueidis.Client, len(masters))
	for _, addr := range masters {
		if n, ok := nodes[addr]; ok {
			out[addr] = n
		} else {
			missing = append(missing, addr)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the client has no connection to masters %v", missing)
	}
	return out, nil
}

// DeletePrefix unlinks every key that starts with prefix (on a cluster,
// every master's), scanning until a full pass finds none (keys made while
// it scans are caught by the next pass), and returns how many it removed.
// Keys may be binary: they never go through a shell.
func DeletePrefix(ctx context.Context, c rueidis.Client, prefix string) (int64, error) {
	var total int64
	for {
		var pass int64
		err := ScanPrefix(ctx, c, prefix, func(keys []string) error {
			cmds := make(rueidis.Commands, 0, len(keys))
			for _, k := range keys {
				cmds = append(cmds, c.B().Unlink().Key(k).Build())
			}
			for _, r := range c.DoMulti(ctx, cmds...) {
				n, err := r.AsInt64()
				if err != nil {
					return err
				}
				pass += n
			}
			return nil
		})
		if err != nil {
			return total, err
		}
		total += pass
		if pass == 0 {
			return total, nil
		}
	}
}

// ScanPrefix is ScanKeys for the keys that start with prefix, taken
// literally.
func ScanPrefix(ctx context.Context, c rueidis.Client, prefix string, fn func(keys []string) error) error {
	return ScanKeys(ctx, c, GlobEscape(prefix)+"*", fn)
}

// GlobEscape escapes s for a SCAN MATCH pattern, so that a key prefix with
// glob characters in it (* ? [ ] \) matches itself only.
func GlobEscape(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[]\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
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

func scanNode(ctx context.Context, node rueidis.Client, match string, fn func([]string) error) error {
	var cursor uint64
	for {
		e, err := node.Do(ctx, node.B().Scan().Cursor(cursor).Match(match).Count(ScanCount).Build()).AsScanEntry()
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
