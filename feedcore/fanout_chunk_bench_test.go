package feedcore

import (
	"testing"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/redisstore/storetest"
)

// BenchmarkChunkCmds is the worker's CPU cost of building one chunk's
// commands, without Redis.
func BenchmarkChunkCmds(b *testing.B) {
	s := newService(b, storetest.New(b), Options{})
	targets := make([]string, timeline.ChunkSize)
	for i := range targets {
		targets[i] = store.Member(store.ID(1_000_000 + i))
	}
	t := timeline.Task{Type: core.EvPublish, Author: 1, Item: store.Item{TS: 1_700_000_000_123, ID: 117657342161455529}}
	b.ReportAllocs()
	for b.Loop() {
		cmds := s.ChunkCmds(t, targets, "ck", "x")
		_ = cmds
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*timeline.ChunkSize), "ns/target")
}
