package redisstore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestMastersAndDeletePrefix: Masters are the nodes that answer ROLE with
// master (on a cluster with replicas, fewer than the client's Nodes), and
// DeletePrefix removes exactly the keys under its prefix, counting them.
func TestMastersAndDeletePrefix(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	masters, err := redisstore.Masters(ctx, st.Client)
	if err != nil {
		t.Fatal(err)
	}
	if len(masters) == 0 || len(masters) > len(st.Client.Nodes()) {
		t.Fatalf("%d masters of %d nodes", len(masters), len(st.Client.Nodes()))
	}
	t.Logf("%d masters of the client's %d nodes", len(masters), len(st.Client.Nodes()))
	if st.Real {
		for addr, n := range masters {
			role, err := n.Do(ctx, n.B().Role().Build()).ToArray()
			if err != nil {
				t.Fatal(err)
			}
			if r, _ := role[0].ToString(); r != "master" {
				t.Fatalf("node %s of Masters has role %q", addr, r)
			}
		}
	}

	doomed, kept := st.Prefix+"del:", st.Prefix+"keep:"
	for i, k := range []string{"a", "{b}", "c*", "d"} {
		p := doomed
		if i == 3 {
			p = kept
		}
		if err := st.Client.Do(ctx, st.Client.B().Set().Key(p+k).Value("1").Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	n, err := redisstore.DeletePrefix(ctx, st.Client, doomed)
	if err != nil || n != 3 {
		t.Fatalf("DeletePrefix removed %d keys (%v), want 3", n, err)
	}
	left, err := storetest.Keys(ctx, st.Client, st.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || !strings.HasPrefix(left[0], kept) {
		t.Fatalf("left %v, want only the key under %q", left, kept)
	}
}
