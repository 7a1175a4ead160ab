package timeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidislock"
)

// activityShards is how many zsets the activity index is split into. Every
// read writes its reader's last-read time to one of them, and the sweeper
// walks them all: split, no one key (and no one cluster node) takes every
// read's write. Changing it forgets who was active: readers look quiet until
// their next read, which is served by merge and upgrades them again.
const activityShards = 16

// ActivityShard is the activity shard of reader.
func ActivityShard(reader store.ID) int { return store.Spread(reader, activityShards) }

// SeenCmd reads reader's last read time (nil when never seen).
func (s *Service) SeenCmd(reader store.ID) rueidis.Completed {
	return s.Redis.B().Zscore().Key(s.Keys.Seen(ActivityShard(reader))).Member(store.Member(reader)).Build()
}

// seenManyCmds reads the last read times of readers, given as members:
// one ZMSCORE per activity shard they fall in, of the members in groups.
// Read the replies with seenScores.
func (s *Service) seenManyCmds(readers []string) (cmds []rueidis.Completed, groups [][]string) {
	var byShard [activityShards][]string
	for _, m := range readers {
		id, _ := store.MemberID(m)
		sh := ActivityShard(id)
		byShard[sh] = append(byShard[sh], m)
	}
	for sh, ms := range byShard {
		if len(ms) > 0 {
			cmds = append(cmds, s.Redis.B().Zmscore().Key(s.Keys.Seen(sh)).Member(ms...).Build())
			groups = append(groups, ms)
		}
	}
	return cmds, groups
}

// seenScores reads the replies rs of seenManyCmds: each reader's last read
// ms, absent for readers never seen.
func seenScores(rs []rueidis.RedisResult, groups [][]string) map[string]int64 {
	out := make(map[string]int64)
	for i, ms := range groups {
		scores, _ := rs[i].ToArray()
		for j, sc := range scores {
			if f, err := sc.AsFloat64(); err == nil && j < len(ms) {
				out[ms[j]] = int64(f)
			}
		}
	}
	return out
}

// IsActive reports whether a reader last seen at seenMS is active now.
func (s *Service) IsActive(seenMS int64) bool {
	return seenMS >= s.NowMS()-s.Opts.ActiveWindow.Milliseconds()
}

// TouchCmd records that viewer read now, unless this process did so within
// touchEvery; nil when no write is due.
func (s *Service) TouchCmd(viewer store.ID) *rueidis.Completed {
	now := s.NowMS()
	if !s.Touches.Due(viewer, now) {
		return nil
	}
	cmd := s.Redis.B().Zadd().Key(s.Keys.Seen(ActivityShard(viewer))).ScoreMember().ScoreMember(float64(now), store.Member(viewer)).Build()
	return &cmd
}

// Touch marks viewer as having read now, and queues its upgrade to a pushed
// inbox if it was not complete. Reads call it; tests and tools may too.
func (s *Service) Touch(ctx context.Context, viewer store.ID) (err error) {
	defer store.Wrap(&err, "record a read by user %d", viewer)
	s.Touches.Forget(viewer)
	cmd := s.TouchCmd(viewer)
	rs := s.DoMulti(ctx, *cmd, s.Redis.B().Hget().Key(s.Keys.Reader(viewer)).Field("c").Build())
	if err := store.FirstErr(rs); err != nil {
		return err
	}
	if c, _ := rs[1].ToString(); c != "1" {
		return s.Emit(ctx, core.Event{Type: core.EvActivate, User: viewer})
	}
	return nil
}

// WithLock runs fn holding user id's lock, with a context that ends if
// the lock is lost; false when another holds it. The lock is released
// only if it is still ours: one that outlived its TTL and was taken by
// another worker is left to that worker.
func (s *Service) WithLock(ctx context.Context, id store.ID, fn func(ctx context.Context) error) (bool, error) {
	lctx, release, err := s.Locks.TryWithContext(ctx, s.Keys.LockName(id))
	if errors.Is(err, rueidislock.ErrNotLocked) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("take lock of user %d: %w", id, err)
	}
	defer release()
	return true, fn(lctx)
}

// Upgrade turns a returning reader's inbox into a complete one: a dormant
// reader is woken first (pushes resume, its inboxes rebuilt); then it joins
// the active sets of its big-V followees, their recent posts are
// backfilled, and the inbox is marked complete so reads stop merging.
//
// It runs once a reader reads with an incomplete inbox (EvActivate, at
// most once per ActivationEvery a process), and only for a reader active
// when it runs; it costs one inbox's worth of writes, whatever the number
// of followees, and is not paid again until the reader is demoted.
func (s *Service) Upgrade(ctx context.Context, reader store.ID) error {
	_, err := s.WithLock(ctx, reader, func(ctx context.Context) error {
		rs := s.DoMulti(ctx,
			s.Redis.B().Hmget().Key(s.Keys.Reader(reader)).Field("c", "d").Build(),
			s.SeenCmd(reader))
		flags, _ := rs[0].AsStrSlice()
		if len(flags) == 2 && flags[0] == "1" {
			return nil
		}
		if seen, err := rs[1].AsFloat64(); err != nil || !s.IsActive(int64(seen)) {
			return nil // went quiet again before we got here
		}
		if len(flags) == 2 && flags[1] != "" {
			if err := s.wake(ctx, reader); err != nil {
				return err
			}
		}
		if err := s.Do(ctx, s.Redis.B().Zrem().Key(s.Keys.Quiet(ActivityShard(reader))).Member(store.Member(reader)).Build()).Error(); err != nil {
			return err
		}
		bigs, err := s.BigVFollowees(ctx, reader)
		if err != nil {
			return err
		}
		cmds := make([]rueidis.Completed, 0, len(bigs))
		for _, f := range bigs {
			cmds = append(cmds, s.Redis.B().Zadd().Key(s.Keys.Active(f)).ScoreMember().ScoreMember(0, store.Member(reader)).Build())
		}
		if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
			return err
		}
		edges := make([]core.Edge, len(bigs))
		for i, f := range bigs {
			edges[i] = core.Edge{Follower: reader, Followee: f}
		}
		if err := s.BackfillMany(ctx, edges); err != nil {
			return err
		}
		return s.Do(ctx, s.Redis.B().Hset().Key(s.Keys.Reader(reader)).FieldValue().FieldValue("c", "1").Build()).Error()
	})
	return err
}

// BigVFollowees lists the big-V authors reader follows: its own set, kept
// by follows, unfollows and promotions, never the network's.
func (s *Service) BigVFollowees(ctx context.Context, reader store.ID) ([]store.ID, error) {
	return idsOfReply(s.Do(ctx, s.Redis.B().Smembers().Key(s.Keys.BigFollowees(reader)).Build()))
}

// Sweep demotes up to limit readers not seen within the active window: their
// inbox stops being complete (reads merge again) and they leave the active
// sets of their big-V followees, so big-V fan-out skips them. Then it puts
// to sleep up to limit demoted readers not seen for DormantAfter
// (dormancy.go). It returns how many readers it demoted or put to sleep.
func (s *Service) Sweep(ctx context.Context, limit int) (_ int, err error) {
	defer store.Wrap(&err, "demote quiet readers")
	demoted, err := s.demoteQuiet(ctx, limit)
	if err != nil {
		return demoted, err
	}
	slept, err := s.sweepDormant(ctx, limit)
	return max(demoted, slept), err
}

func (s *Service) demoteQuiet(ctx context.Context, limit int) (int, error) {
	return s.sweepIndex(ctx, s.Keys.Seen, s.NowMS()-s.Opts.ActiveWindow.Milliseconds(), limit, s.demote)
}

// sweepIndex lists up to limit readers of the activity index shards index
// names whose last read is before cutoff, and applies step to each, holding
// its lock (a reader whose lock another holds is left to the next sweep). It
// returns how many it applied step to.
func (s *Service) sweepIndex(ctx context.Context, index func(shard int) string, cutoff int64, limit int,
	step func(ctx context.Context, reader store.ID, cutoff int64) error) (int, error) {
	var listed []string
	for sh := 0; sh < activityShards && len(listed) < limit; sh++ {
		ms, err := s.Redis.Do(ctx, s.Redis.B().Zrange().Key(index(sh)).Min("-inf").Max("("+store.ScoreArg(cutoff)).Byscore().
			Limit(0, int64(limit-len(listed))).Build()).AsStrSlice()
		if err != nil {
			return 0, err
		}
		listed = append(listed, ms...)
	}
	n := 0
	for _, m := range listed {
		reader, err := store.MemberID(m)
		if err != nil {
			return n, err
		}
		ok, err := s.WithLock(ctx, reader, func(ctx context.Context) error { return step(ctx, reader, cutoff) })
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	return n, nil
}

func (s *Service) demote(ctx context.Context, reader store.ID, cutoff int64) error {
	seen, seenErr := s.Redis.Do(ctx, s.SeenCmd(reader)).AsFloat64()
	if seenErr == nil && int64(seen) >= cutoff {
		return nil // read again since we listed it
	}
	// Incomplete first: from here reads merge, whatever the active sets say.
	if err := s.Do(ctx, s.Redis.B().Hdel().Key(s.Keys.Reader(reader)).Field("c").Build()).Error(); err != nil {
		return err
	}
	bigs, err := s.BigVFollowees(ctx, reader)
	if err != nil {
		return err
	}
	cmds := make([]rueidis.Completed, 0, len(bigs)+1)
	for _, f := range bigs {
		cmds = append(cmds, s.Redis.B().Zrem().Key(s.Keys.Active(f)).Member(store.Member(reader)).Build())
	}
	// Seen to Quiet, by its last read, for the dormancy sweep (one slot).
	last := cutoff
	if seenErr == nil {
		last = int64(seen)
	}
	sh := ActivityShard(reader)
	cmds = append(cmds, s.Redis.B().Zadd().Key(s.Keys.Quiet(sh)).ScoreMember().ScoreMember(float64(last), store.Member(reader)).Build(),
		s.Redis.B().Zrem().Key(s.Keys.Seen(sh)).Member(store.Member(reader)).Build())
	return store.FirstErr(s.DoMulti(ctx, cmds...))
}
