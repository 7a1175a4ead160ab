package redisstore

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/redis/rueidis"
)

// Health is what Check learned of the store.
type Health struct {
	// Serving reports a store that can take reads and writes.
	Serving bool `json:"serving"`
	// Problem says why not, when not serving, in words safe to show
	// anyone; Detail adds what is for the logs (addresses, errors).
	Problem string `json:"problem,omitempty"`
	Detail  string `json:"-"`
	// Cluster reports a Redis Cluster; the counts below are its nodes
	// the client knows (the masters; replicas only when it reads from
	// them), those that answered CLUSTER INFO, and those that said
	// cluster_state:ok.
	Cluster  bool `json:"cluster"`
	Nodes    int  `json:"nodes,omitempty"`
	Answered int  `json:"answered,omitempty"`
	OK       int  `json:"ok,omitempty"`
}

// Check tells whether the store serves. A single Redis serves when it
// answers PING. A Redis Cluster serves when every node the client knows
// that answers CLUSTER INFO within ctx reports cluster_state:ok (all slots
// served by reachable masters) and at least one answers: one dead node,
// say a replica or a master already failed over, does not make the
// cluster unready, while uncovered slots do, since every live node then
// reports fail.
func Check(ctx context.Context, c rueidis.Client) Health {
	if c.Mode() != rueidis.ClientModeCluster {
		if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
			return Health{Problem: "store unavailable", Detail: err.Error()}
		}
		return Health{Serving: true}
	}
	nodes := c.Nodes()
	h := Health{Cluster: true, Nodes: len(nodes)}
	var (
		mu     sync.Mutex
		wg     sync.WaitGroup
		states = map[string]string{} // addr -> cluster_state of nodes not ok
	)
	for addr, n := range nodes {
		wg.Go(func() {
			info, err := n.Do(ctx, n.B().ClusterInfo().Build()).ToString()
			if err != nil {
				return // dead or loading: it does not speak for the cluster
			}
			state := clusterState(info)
			mu.Lock()
			defer mu.Unlock()
			h.Answered++
			if state == "ok" {
				h.OK++
			} else {
				states[addr] = state
			}
		})
	}
	wg.Wait()
	switch {
	case h.Answered == 0:
		h.Problem = fmt.Sprintf("store unavailable: none of the %d cluster nodes known answered", h.Nodes)
		h.Detail = h.Problem
	case h.OK < h.Answered:
		var bad []string
		for addr, state := range states {
			bad = append(bad, addr+" says cluster_state:"+state)
		}
		sort.Strings(bad)
		h.Problem = fmt.Sprintf("cluster not serving: %d of %d nodes that answered report a cluster_state other than ok", h.Answered-h.OK, h.Answered)
		h.Detail = strings.Join(bad, ", ")
	default:
		h.Serving = true
	}
	return h
}

// clusterState reads cluster_state from a CLUSTER INFO reply.
func clusterState(info string) string {
	// The reply may come as a RESP3 verbatim string ("txt:" first).
	for line := range strings.Lines(info) {
		if _, v, ok := strings.Cut(line, "cluster_state:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
