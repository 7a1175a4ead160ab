package core

import (
	"context"
	"fmt"
	"time"

	"github.com/feedd/feedd/feedcore/ratelimit"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// Commit runs a mutation's commit write: the one whose success makes the
// mutation happen (a publish or delete event, a journal entry). Redis
// replicates asynchronously, so a master that fails right after answering
// can take an acknowledged write with it; with Options.WaitReplicas set,
// the write is sent with WAIT on the same connection, and acknowledged only
// once that many replicas have it. Scripts go as EVAL there: a dedicated
// connection does not load them on NOSCRIPT.
func (s *Service) Commit(ctx context.Context, sc *store.Script, keys, args []string, cmd rueidis.Completed) rueidis.RedisResult {
	n := s.Opts.WaitReplicas
	if n <= 0 {
		return s.Do(ctx, cmd)
	}
	// A dedicated connection does not carry the operation's pending rate
	// charge (ratelimit.ChargedClient): spend it first, so a refused mutation writes nothing.
	if ch := ratelimit.ChargeOf(ctx); ch != nil {
		if v, err := ch.Settle(ctx); err == nil && v.Err != nil {
			return rueidis.NewErrorResult(v.Err)
		}
	}
	timeout := s.Opts.WaitTimeout
	var res rueidis.RedisResult
	err := s.Redis.Dedicated(func(d rueidis.DedicatedClient) error {
		write := cmd
		if sc != nil {
			write = d.B().Eval().Script(sc.Src).Numkeys(int64(len(keys))).Key(keys...).Arg(args...).Build()
		}
		rs := d.DoMulti(ctx, write, d.B().Wait().Numreplicas(int64(n)).Timeout(timeout.Milliseconds()).Build())
		res = rs[0]
		if rs[0].Error() != nil {
			return nil
		}
		got, err := rs[1].AsInt64()
		switch {
		case err != nil:
			res = rueidis.NewErrorResult(fmt.Errorf("wait for replicas: %w", err))
		case got < int64(n):
			res = rueidis.NewErrorResult(fmt.Errorf("%w: %d of %d replicas within %v", store.ErrNotReplicated, got, n, timeout))
		}
		return nil
	})
	if err != nil {
		return rueidis.NewErrorResult(err)
	}
	return res
}

// defaultWaitTimeout bounds a commit's wait for its replicas.
const defaultWaitTimeout = time.Second
