package feedcore

import (
	"context"

	"github.com/redis/rueidis"
)

// Follow makes viewer follow target and backfills target's recent posts into
// viewer's inbox. Idempotent: following again repairs anything a failed
// earlier attempt left half done.
func (s *Service) Follow(ctx context.Context, viewer, target ID) error {
	if viewer == target {
		return errorf(CodeBadInput, "you cannot follow yourself")
	}
	if err := s.usersExist(ctx, viewer, target); err != nil {
		return err
	}
	added, err := s.do(ctx, followAdd.cmd(s.c.B(), []string{s.k.following(viewer)},
		[]string{member(target), itoa(s.o.FollowLimit)})).AsInt64()
	if err != nil {
		return err
	}
	if added < 0 {
		return errorf(CodeFollowLimit, "you follow %d accounts, the most allowed; unfollow someone first", s.o.FollowLimit)
	}
	rs := s.c.DoMulti(ctx,
		s.c.B().Zadd().Key(s.k.followers(target)).ScoreMember().ScoreMember(0, member(viewer)).Build(),
		s.c.B().Zcard().Key(s.k.followers(target)).Build(),
		s.c.B().Sismember().Key(s.k.bigV()).Member(member(target)).Build(),
		s.c.B().Zscore().Key(s.k.seen()).Member(member(viewer)).Build())
	if err := firstErr(rs); err != nil {
		return err
	}
	followers, _ := rs[1].AsInt64()
	bigV, _ := rs[2].AsBool()
	seen, seenErr := rs[3].AsFloat64()
	// An active reader of a big-V must be in its active set before the
	// backfill reads the outbox: a post published in between is then
	// either in the outbox we read or pushed to us.
	if bigV && seenErr == nil && s.isActive(int64(seen)) {
		if err := s.c.Do(ctx, s.c.B().Zadd().Key(s.k.active(target)).ScoreMember().ScoreMember(0, member(viewer)).Build()).Error(); err != nil {
			return err
		}
	}
	if !bigV && int(followers) > s.o.BigVThreshold {
		if err := s.emit(ctx, event{Type: evPromote, User: target}); err != nil {
			return err
		}
	}
	return s.backfill(ctx, viewer, target)
}

// Unfollow stops viewer following target and removes target's posts from
// viewer's inbox. Reads also filter by the following set, so a fan-out
// racing with this never shows an unfollowed author.
func (s *Service) Unfollow(ctx context.Context, viewer, target ID) error {
	if viewer == target {
		return errorf(CodeBadInput, "you cannot unfollow yourself")
	}
	if err := s.usersExist(ctx, target); err != nil {
		return err
	}
	rs := s.c.DoMulti(ctx,
		s.c.B().Zrem().Key(s.k.following(viewer)).Member(member(target)).Build(),
		s.c.B().Zrem().Key(s.k.followers(target)).Member(member(viewer)).Build(),
		s.c.B().Zrem().Key(s.k.active(target)).Member(member(viewer)).Build())
	if err := firstErr(rs); err != nil {
		return err
	}
	// Only the author's newest cap posts can be in an inbox of cap entries.
	recent, err := s.newest(ctx, s.k.outbox(target), s.o.InboxCap)
	if err != nil || len(recent) == 0 {
		return err
	}
	ids := make([]ID, len(recent))
	for i, it := range recent {
		ids[i] = it.ID
	}
	return s.c.Do(ctx, s.c.B().Zrem().Key(s.k.inbox(viewer)).Member(members(ids)...).Build()).Error()
}

// backfill copies author's newest posts, up to the inbox cap, into reader's
// inbox. When the author has more, the inbox horizon rises to the oldest
// copied one, so reads pull whatever lies below it.
func (s *Service) backfill(ctx context.Context, reader, author ID) error {
	recent, err := s.newest(ctx, s.k.outbox(author), s.o.InboxCap+1)
	if err != nil || len(recent) == 0 {
		return err
	}
	var floor *Item
	if len(recent) > s.o.InboxCap {
		recent = recent[:s.o.InboxCap]
		floor = &recent[len(recent)-1]
	}
	return s.addToInbox(ctx, reader, recent, floor)
}

// addToInbox writes items into reader's inbox, trimming it and keeping its
// horizon, in one script call.
func (s *Service) addToInbox(ctx context.Context, reader ID, items []Item, floor *Item) error {
	return s.do(ctx, s.inboxAddCmd(reader, items, floor)).Error()
}

func (s *Service) inboxAddCmd(reader ID, items []Item, floor *Item) rueidis.Completed {
	args := make([]string, 0, 3+2*len(items))
	args = append(args, itoa(s.o.InboxCap))
	if floor != nil {
		args = append(args, scoreArg(floor.TS), member(floor.ID))
	} else {
		args = append(args, "", "")
	}
	for _, it := range items {
		args = append(args, scoreArg(it.TS), member(it.ID))
	}
	return inboxAdd.cmd(s.c.B(), []string{s.k.inbox(reader), s.k.reader(reader)}, args)
}

// newest returns up to n newest entries of a timeline.
func (s *Service) newest(ctx context.Context, key string, n int) ([]Item, error) {
	return parseEntries(s.c.Do(ctx, s.c.B().Zrange().Key(key).Min("+inf").Max("-inf").Byscore().Rev().
		Limit(0, int64(n)).Withscores().Build()))
}

// following returns the ids viewer follows.
func (s *Service) followingIDs(ctx context.Context, viewer ID) ([]ID, error) {
	ms, err := s.c.Do(ctx, s.c.B().Zrange().Key(s.k.following(viewer)).Min("0").Max("-1").Build()).AsStrSlice()
	if err != nil {
		return nil, err
	}
	return idsOf(ms)
}

func idsOf(ms []string) ([]ID, error) {
	out := make([]ID, len(ms))
	for i, m := range ms {
		id, err := memberID(m)
		if err != nil {
			return nil, err
		}
		out[i] = id
	}
	return out, nil
}
