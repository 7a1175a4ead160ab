package feedcore

import (
	"context"
	"testing"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/redis/rueidis"
)

// memoryBudget is the most Redis memory one inbox entry may cost, in
// bytes: 8-byte members in a listpack-encoded set cost about 21.
const memoryBudget = 24

// TestInboxMemoryPerEntry measures MEMORY USAGE of an inbox filled through
// the fan-out write path to its cap, with the server setting the README
// recommends (zset-max-listpack-entries at or above the cap).
func TestInboxMemoryPerEntry(t *testing.T) {
	storetest.RequireReal(t)
	st := storetest.New(t)
	ctx := context.Background()
	s := newService(t, st, Options{})
	c := st.Client
	cfg, err := c.Do(ctx, c.B().ConfigGet().Parameter("zset-max-listpack-entries").Build()).AsStrMap()
	if err != nil {
		t.Fatal(err)
	}
	prev := cfg["zset-max-listpack-entries"]
	if err := c.Do(ctx, c.B().ConfigSet().ParameterValue().ParameterValue("zset-max-listpack-entries", "1024").Build()).Error(); err != nil {
		t.Skipf("cannot set zset-max-listpack-entries here: %v", err)
	}
	t.Cleanup(func() {
		c.Do(context.Background(), c.B().ConfigSet().ParameterValue().ParameterValue("zset-max-listpack-entries", prev).Build())
	})
	reader := store.ID(4242)
	ts := int64(1_700_000_000_000)
	var cmds []rueidis.Completed
	for i := range 2 * s.Opts.InboxCap { // overfill: trims bring it back to the cap
		it := store.Item{TS: ts + int64(i)*1000, ID: 117657342161455529 + store.ID(i)*7919}
		cmds = s.AppendPush(cmds, s.PostsTL(), reader, it, timeline.TrimDue(reader, it.ID))
	}
	cmds = append(cmds, c.B().Zremrangebyrank().Key(s.Keys.Inbox(reader)).Start(0).Stop(int64(-s.Opts.InboxCap-1)).Build())
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		t.Fatal(err)
	}
	n, _ := c.Do(ctx, c.B().Zcard().Key(s.Keys.Inbox(reader)).Build()).AsInt64()
	bytes, err := c.Do(ctx, c.B().MemoryUsage().Key(s.Keys.Inbox(reader)).Samples(0).Build()).AsInt64()
	if err != nil {
		t.Fatal(err)
	}
	per := float64(bytes) / float64(n)
	t.Logf("inbox of %d entries: %d bytes, %.1f B/entry (budget %d)", n, bytes, per, memoryBudget)
	if n != int64(s.Opts.InboxCap) || per > memoryBudget {
		t.Fatalf("inbox of %d entries costs %.1f B/entry; budget %d B at cap %d", n, per, memoryBudget, s.Opts.InboxCap)
	}
}
