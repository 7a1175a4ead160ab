package timeline

import (
	"context"
	"errors"
	"math"
	"slices"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// Dormancy: a reader not seen for Options.DormantAfter costs nothing to
// keep and nothing to push to. A reader goes through three states:
//
//   - active (read within ActiveWindow): its inbox is complete, pushed by
//     every followee, big-V ones through their active sets;
//   - quiet (demoted by Sweep): pushed by ordinary followees only, big-V
//     ones merged on read; listed in the Quiet index by its last read;
//   - dormant (quiet for DormantAfter since its last read): its inboxes
//     are dropped, their horizons at the top (core.Top) so reads pull every
//     followee's outbox, and it is in every followee's Dormant set, which
//     the fan-out skips. The reader hash's "d" holds when it went dormant.
//
// A dormant reader's next read is merged from the outboxes, and queues its
// upgrade (EvActivate), which wakes it: pushes resume first, then its
// inboxes are rebuilt from its followees' newest entries (one inbox's worth,
// merged), the horizon falling to the rebuild's floor in a new generation.

// sweepDormant puts to sleep up to limit quiet readers whose last read is
// older than DormantAfter, and returns how many.
func (s *Service) sweepDormant(ctx context.Context, limit int) (int, error) {
	return s.sweepIndex(ctx, s.Keys.Quiet, s.NowMS()-s.Opts.DormantAfter.Milliseconds(), limit, s.sleep)
}

// sleep makes reader dormant, unless it read since cutoff. Its inboxes go
// first (from then on reads pull), then its followees' Dormant sets learn of
// it; a push that read its targets before that lands in a dropped inbox,
// which no read trusts and the return empties.
func (s *Service) sleep(ctx context.Context, reader store.ID, cutoff int64) error {
	m := store.Member(reader)
	quiet := s.Redis.B().Zrem().Key(s.Keys.Quiet(ActivityShard(reader))).Member(m).Build()
	seen, err := s.Redis.Do(ctx, s.SeenCmd(reader)).AsFloat64()
	if err == nil && int64(seen) >= cutoff {
		return s.Do(ctx, quiet).Error() // read again since it was listed
	}
	cmds := []rueidis.Completed{
		s.Redis.B().Hset().Key(s.Keys.Reader(reader)).FieldValue().FieldValue("d", store.ScoreArg(s.NowMS())).Build(),
		s.Redis.B().Hdel().Key(s.Keys.Reader(reader)).Field("c").Build(),
	}
	top := []string{store.ScoreArg(core.Top.TS), store.Member(core.Top.ID)}
	for _, tl := range s.Timelines() {
		cmds = append(cmds, core.InboxDrop.Cmd(s.Redis.B(), []string{tl.Inbox(reader), tl.Horizon(reader)}, top))
	}
	// The followees and big-V followees ride with the drop, which changes
	// neither: one round trip for both.
	cmds = append(cmds, s.Redis.B().Zrange().Key(s.Keys.Following(reader)).Min("0").Max("-1").Build(),
		s.Redis.B().Smembers().Key(s.Keys.BigFollowees(reader)).Build())
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs); err != nil {
		return err
	}
	followees, err := idsOfReply(rs[len(rs)-2])
	if err != nil {
		return err
	}
	// A big-V pushes only to its active set, which a quiet reader has
	// left: noting the sleeper there too would only cost memory (a third
	// of the dormant sets' on a 100,000-user network).
	bigs, err := idsOfReply(rs[len(rs)-1])
	if err != nil {
		return err
	}
	cmds = cmds[:0]
	for _, f := range followees {
		if !slices.Contains(bigs, f) {
			cmds = append(cmds, s.Redis.B().Zadd().Key(s.Keys.Dormant(f)).ScoreMember().ScoreMember(0, m).Build())
		}
	}
	cmds = append(cmds, quiet)
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return err
	}
	s.Counters.Slept.Add(1)
	return nil
}

// wake brings a dormant reader back, holding its lock, before the upgrade
// makes its inbox complete: what pushes may have left in its dropped
// inboxes goes (no read trusts it: the horizon is at the top), then every
// followee pushes to it again, then each inbox is rebuilt from the
// followees' newest entries (and the reader's own), so a post published
// meanwhile is pushed or in an outbox read after the pushes resumed.
func (s *Service) wake(ctx context.Context, reader store.ID) error {
	var cmds []rueidis.Completed
	for _, tl := range s.Timelines() {
		cmds = append(cmds, s.Redis.B().Del().Key(tl.Inbox(reader)).Build())
	}
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return err
	}
	followees, err := s.FollowingIDs(ctx, reader)
	if err != nil {
		return err
	}
	m := store.Member(reader)
	cmds = cmds[:0]
	for _, f := range followees {
		cmds = append(cmds, s.Redis.B().Zrem().Key(s.Keys.Dormant(f)).Member(m).Build())
	}
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return err
	}
	if err := s.refillInboxes(ctx, reader, followees); err != nil {
		return err
	}
	if err := s.Do(ctx, s.Redis.B().Hdel().Key(s.Keys.Reader(reader)).Field("d").Build()).Error(); err != nil {
		return err
	}
	s.Counters.Woken.Add(1)
	return nil
}

// refillInboxes rebuilds a waking reader's inboxes from its followees'
// newest entries (and, for posts, its own), merged: at most one inbox's
// worth written, and at most wakePer(n) entries read of each of its n
// followees, so a reader following 2,000 accounts costs a bounded read.
// Where a followee had more, its oldest entry read is a floor the horizon
// rises to, and reads pull below it as they do below any horizon.
func (s *Service) refillInboxes(ctx context.Context, reader store.ID, followees []store.ID) error {
	per := wakePer(s.Opts.InboxCap, len(followees)+1)
	posts := []core.Edge{{Follower: reader, Followee: reader}} // read-your-writes
	var replays []core.Edge
	for _, f := range followees {
		posts = append(posts, core.Edge{Follower: reader, Followee: f})
		replays = append(replays, core.Edge{Follower: reader, Followee: f})
	}
	if _, err := s.backfill(ctx, []core.Timeline{s.PostsTL()}, posts, per, true); err != nil {
		return err
	}
	if len(replays) == 0 { // nothing to read: the inbox is reset empty
		return s.Do(ctx, s.inboxAddCmd(s.ReplaysTL(), reader, &inboxFill{}, true)).Error()
	}
	_, err := s.backfill(ctx, []core.Timeline{s.ReplaysTL()}, replays, per, true)
	return err
}

// wakePer is how many of each of n sources' newest entries a rebuild
// reads for an inbox of cap: enough that the merge could fill the inbox
// four times over if the sources posted alike, at least minWakePer (a few
// prolific followees should not raise the horizon to the last hour), at
// most the cap.
func wakePer(cap, n int) int {
	return min(cap, max(minWakePer, (4*cap+n-1)/n))
}

const minWakePer = 16

// Awake returns readers less the dormant ones, whose inboxes stay dropped
// (a rebuild leaves them so: their return rebuilds them).
func (s *Service) Awake(ctx context.Context, readers []store.ID) ([]store.ID, error) {
	hget := func(id store.ID) rueidis.Completed {
		return s.Redis.B().Hget().Key(s.Keys.Reader(id)).Field("d").Build()
	}
	rs := s.DoMulti(ctx, store.CmdsFor(readers, hget)...)
	out := readers[:0:0]
	for i, r := range rs {
		d, err := r.ToString()
		if err != nil && !rueidis.IsRedisNil(err) {
			return nil, err
		}
		if d == "" {
			out = append(out, readers[i])
		}
	}
	return out, nil
}

// Sleep makes reader dormant now, whenever it last read: demoted if it was
// active, then put to sleep. For tools (the load tool's dormant share) and
// tests; the sweeper is what does it in service.
func (s *Service) Sleep(ctx context.Context, reader store.ID) (err error) {
	defer store.Wrap(&err, "put user %d to sleep", reader)
	const always = math.MaxInt64 // a cutoff no last read reaches
	ok, err := s.WithLock(ctx, reader, func(ctx context.Context) error {
		if err := s.demote(ctx, reader, always); err != nil {
			return err
		}
		return s.sleep(ctx, reader, always)
	})
	if err == nil && !ok {
		err = errors.New("its lock is held (an upgrade or a sweep): try again")
	}
	return err
}
