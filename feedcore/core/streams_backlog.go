package core

import (
	"context"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// StreamLen is the length of one fan-out stream of one shard: the entries
// in it not yet handled.
type StreamLen struct {
	Kind  string // "events", "tasks" or "journal"
	Shard int
	Key   string // the stream's key, prefix included (XLEN, XRANGE it)
	Len   int64
}

// BacklogByStream reads the length of every shard's events, tasks and
// journal stream (the streams whose total is Backlog), in one round trip,
// shard by shard.
func (s *Service) BacklogByStream(ctx context.Context) (_ []StreamLen, err error) {
	defer store.Wrap(&err, "read fan-out backlog by stream")
	kinds := []struct {
		name string
		key  func(shard int) string
	}{{"events", s.Keys.Events}, {"tasks", s.Keys.Tasks}, {"journal", s.Keys.Journal}}
	out := make([]StreamLen, 0, len(kinds)*s.Opts.StreamShards)
	cmds := make([]rueidis.Completed, 0, cap(out))
	for sh := 0; sh < s.Opts.StreamShards; sh++ {
		for _, k := range kinds {
			key := k.key(sh)
			out = append(out, StreamLen{Kind: k.name, Shard: sh, Key: key})
			cmds = append(cmds, s.Redis.B().Xlen().Key(key).Build())
		}
	}
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs); err != nil {
		return nil, err
	}
	for i, r := range rs {
		out[i].Len, _ = r.AsInt64()
	}
	return out, nil
}
