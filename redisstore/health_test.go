package redisstore_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

func check(t *testing.T, c rueidis.Client) redisstore.Health {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return redisstore.Check(ctx, c)
}

func TestCheckSingle(t *testing.T) {
	st := storetest.New(t) // embedded, or FEED_TEST_REDIS
	h := check(t, st.Client)
	if st.Client.Mode() == rueidis.ClientModeCluster {
		if !h.Serving || !h.Cluster || h.OK == 0 || h.OK != h.Answered {
			t.Fatalf("cluster check = %+v", h)
		}
		return
	}
	if !h.Serving || h.Cluster {
		t.Fatalf("check = %+v", h)
	}
	// A client of its own to close: the test store's cleanup needs its own.
	closed, err := redisstore.Open(context.Background(), redisstore.Options{URL: os.Getenv(storetest.Env)})
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	if h := check(t, closed.Client); h.Serving || h.Problem != "store unavailable" {
		t.Fatalf("check of a closed client = %+v", h)
	}
}

// fakeCluster is a master and its replica, fakes answering CLUSTER SLOTS
// (the master serves every slot) and CLUSTER INFO with the state each is
// told to report.
type fakeCluster struct {
	master, replica *storetest.Fake
	masterState     atomic.Value
	replicaState    atomic.Value
}

func newFakeCluster(t *testing.T) *fakeCluster {
	fc := &fakeCluster{}
	fc.masterState.Store("ok")
	fc.replicaState.Store("ok")
	answer := func(state *atomic.Value) func([]string) string {
		return func(cmd []string) string {
			if !strings.EqualFold(cmd[0], "CLUSTER") || len(cmd) < 2 {
				return "-ERR unexpected\r\n"
			}
			switch strings.ToUpper(cmd[1]) {
			case "SLOTS":
				return "*1\r\n*4\r\n:0\r\n:16383\r\n" + nodeRESP(fc.master.Addr) + nodeRESP(fc.replica.Addr)
			case "INFO":
				info := fmt.Sprintf("cluster_enabled:1\r\ncluster_state:%s\r\ncluster_slots_assigned:16384\r\n", state.Load())
				return fmt.Sprintf("$%d\r\n%s\r\n", len(info), info)
			}
			return "-ERR unexpected\r\n"
		}
	}
	fc.master = storetest.NewFake(t, answer(&fc.masterState))
	fc.replica = storetest.NewFake(t, answer(&fc.replicaState))
	return fc
}

func nodeRESP(addr string) string {
	host, port, _ := strings.Cut(addr, ":")
	return fmt.Sprintf("*2\r\n$%d\r\n%s\r\n:%s\r\n", len(host), host, port)
}

func TestCheckClusterNotHostageToOneNode(t *testing.T) {
	fc := newFakeCluster(t)
	st, err := redisstore.Open(context.Background(), redisstore.Options{
		URL: "redis://" + fc.master.Addr, DisableCache: true, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if st.Client.Mode() != rueidis.ClientModeCluster {
		t.Fatalf("client mode %s, want cluster", st.Client.Mode())
	}
	if h := check(t, st.Client); !h.Serving || !h.Cluster || h.Nodes != 2 || h.OK != 2 {
		t.Fatalf("healthy cluster: %+v", h)
	}
	fc.replica.Close() // a dead node: the others still speak for the cluster
	for range 5 {      // whichever node a PING would have picked
		if h := check(t, st.Client); !h.Serving || h.Answered != 1 {
			t.Fatalf("cluster with a dead replica: %+v", h)
		}
	}
	fc.masterState.Store("fail") // slots uncovered: the live nodes say so
	if h := check(t, st.Client); h.Serving || !strings.Contains(h.Problem, "cluster not serving") || strings.Contains(h.Problem, "127.0.0.1") {
		t.Fatalf("failed cluster: %+v", h)
	}
	fc.master.Close()
	if h := check(t, st.Client); h.Serving || !strings.Contains(h.Problem, "none of the 2") {
		t.Fatalf("cluster with no node answering: %+v", h)
	}
}

// TestCheckRealCluster runs when FEED_TEST_REDIS names a Redis Cluster.
func TestCheckRealCluster(t *testing.T) {
	storetest.RequireReal(t)
	st, err := redisstore.Open(context.Background(), redisstore.Options{URL: os.Getenv(storetest.Env)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	if st.Client.Mode() != rueidis.ClientModeCluster {
		t.Skip("FEED_TEST_REDIS is not a Redis Cluster")
	}
	h := check(t, st.Client)
	if !h.Serving || h.Nodes < 3 || h.OK != h.Nodes {
		t.Fatalf("cluster check = %+v", h)
	}
}
