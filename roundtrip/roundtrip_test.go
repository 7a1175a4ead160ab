package roundtrip_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

func TestCountsCalls(t *testing.T) {
	st := storetest.New(t)
	c := st.Client // redisstore wraps its clients
	ctx, trips := roundtrip.NewContext(context.Background())
	k, k2 := st.Prefix+"k", st.Prefix+"k2"
	c.Do(ctx, c.B().Set().Key(k).Value("v").Build())
	c.DoMulti(ctx, c.B().Get().Key(k).Build(), c.B().Get().Key(k).Build())
	c.DoMulti(ctx)                                         // nothing sent
	c.Do(context.Background(), c.B().Get().Key(k).Build()) // another request's
	if n := trips.Trips(); n != 2 {
		t.Errorf("%d round trips, want 2", n)
	}
	c.Do(context.Background(), c.B().Set().Key(k2).Value("v").Build())
	if roundtrip.Wrap(c) != c {
		t.Error("wrapping twice")
	}

	// Cached reads: the first reaches Redis, the second is local (with a
	// real Redis; the embedded store has no client-side cache).
	get := func() int {
		before := trips.Trips()
		rs := c.DoMultiCache(ctx, rueidis.CT(c.B().Get().Key(k).Cache(), time.Minute))
		if v, err := rs[0].ToString(); err != nil || v != "v" {
			t.Fatalf("cached read: %q, %v", v, err)
		}
		if v, err := c.DoCache(ctx, c.B().Get().Key(k2).Cache(), time.Minute).ToString(); err != nil || v != "v" {
			t.Fatalf("cached read: %q, %v", v, err)
		}
		return trips.Trips() - before
	}
	if n := get(); n != 2 {
		t.Errorf("cold cached reads cost %d round trips, want 2", n)
	}
	want := 0
	if !st.Real {
		want = 2
	}
	if n := get(); n != want {
		t.Errorf("warm cached reads cost %d round trips, want %d", n, want)
	}
}

// Parallel branches overlap: the request is charged the longest one.
func TestParallel(t *testing.T) {
	st := storetest.New(t)
	c := st.Client
	ctx, trips := roundtrip.NewContext(context.Background())
	ping := func(n int) func(context.Context) error {
		return func(ctx context.Context) error {
			for range n {
				if err := c.Do(ctx, c.B().Ping().Build()).Error(); err != nil {
					return err
				}
			}
			return nil
		}
	}
	if err := roundtrip.Parallel(ctx, ping(1), ping(3), ping(2)); err != nil {
		t.Fatal(err)
	}
	if n := trips.Trips(); n != 3 {
		t.Errorf("%d round trips, want 3", n)
	}
	// Commands add up over the branches: 1 + 3 + 2 pings.
	if n := trips.Commands(); n != 6 {
		t.Errorf("%d commands, want 6", n)
	}
	boom := errors.New("boom")
	err := roundtrip.Parallel(ctx, ping(1), func(context.Context) error { return boom })
	if !errors.Is(err, boom) {
		t.Errorf("err = %v", err)
	}
	if n := trips.Trips(); n != 4 {
		t.Errorf("%d round trips, want 4", n)
	}
	// Without a counter it still runs everything.
	ran := 0
	_ = roundtrip.Parallel(context.Background(), func(context.Context) error { ran++; return nil })
	if ran != 1 {
		t.Error("branch did not run")
	}
}

// Dedicated connections and per-node clients are counted like the client.
func TestCountsDedicatedAndNodes(t *testing.T) {
	st := storetest.New(t)
	c := st.Client
	ctx, trips := roundtrip.NewContext(context.Background())
	k := st.Prefix + "d"
	err := c.Dedicated(func(d rueidis.DedicatedClient) error {
		d.Do(ctx, d.B().Set().Key(k).Value("v").Build())
		d.DoMulti(ctx, d.B().Get().Key(k).Build(), d.B().Get().Key(k).Build())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n, cmds := trips.Trips(), trips.Commands(); n != 2 || cmds != 3 {
		t.Fatalf("Dedicated: %d round trips of %d commands, want 2 of 3", n, cmds)
	}
	d, cancel := c.Dedicate()
	d.Do(ctx, d.B().Get().Key(k).Build())
	cancel()
	if n := trips.Trips(); n != 3 {
		t.Fatalf("Dedicate: %d round trips, want 3", n)
	}
	for _, n := range c.Nodes() {
		n.Do(ctx, n.B().Ping().Build())
		break
	}
	if n := trips.Trips(); n != 4 {
		t.Fatalf("Nodes: %d round trips, want 4", n)
	}
}
