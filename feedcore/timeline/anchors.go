package timeline

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// The followed anchors of a reader (Keys.FollowedAnchors) are the replay
// timeline's followees: a first live page reads their queues, and a read
// below the replay inbox's horizon their replay outboxes, so both cost
// what the anchors a reader follows cost, not what all its follows cost.
//
// The set never misses an anchor the reader follows, by the order of two
// steps in the anchor's slot: a follow adds the follower to the followers
// set, then reads the mark (AddFollows); marking an anchor sets the mark,
// then scans the followers (MarkAnchor). Whichever comes second sees the
// other. Each addition checks, in the reader's slot, that the reader
// still follows the anchor (followedAnchorAdd), and a settled unfollow
// takes it out (removeFollows), so the set holds no other account either.

// followedAnchorAdd adds ARGV[1] to the followed anchors KEYS[2] when it is
// in the following set KEYS[1].
var followedAnchorAdd = store.NewScript(false, `
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return redis.call('ZADD', KEYS[2], 0, ARGV[1]) end
return 0
`)

// followedAnchorAddCmd notes anchor among follower's followed anchors, if
// follower still follows it.
func (s *Service) followedAnchorAddCmd(follower, anchor store.ID) rueidis.Completed {
	return followedAnchorAdd.Cmd(s.Redis.B(), []string{s.Keys.Following(follower), s.Keys.FollowedAnchors(follower)}, []string{store.Member(anchor)})
}

// AnchorMarkCmd reads user's anchor mark: "1" once every follower has
// the anchor noted, "0" while they are being noted, nil for an account
// that never had a live session. A follow notes an account with either.
func (s *Service) AnchorMarkCmd(user store.ID) rueidis.Completed {
	return s.Redis.B().Get().Key(s.Keys.AnchorMark(user)).Build()
}

// markedAnchor reads an AnchorMarkCmd's reply: whether the account is
// marked at all, and whether its followers are all noted.
func markedAnchor(r rueidis.RedisResult) (marked, done bool, err error) {
	v, err := r.ToString()
	if rueidis.IsRedisNil(err) {
		return false, false, nil
	}
	return err == nil, v == "1", err
}

// EnsureAnchor makes anchor an anchor unless mark, the reply of its
// AnchorMarkCmd, says it is one with every follower noted: once, in
// effect, at an account's first live session (its settle reads the mark
// with the session, and a repair settles again). An anchor with at most
// TaskSize followers is noted among them here, so they see its session
// at once; for more, a worker finishes (MarkAnchor), and they see it a
// moment later, as a big-V promotion's followers do.
func (s *Service) EnsureAnchor(ctx context.Context, anchor store.ID, mark rueidis.RedisResult) error {
	if _, done, err := markedAnchor(mark); err != nil || done {
		return err
	}
	done, err := s.noteAnchor(ctx, anchor, 1)
	if err != nil || done {
		return err
	}
	return s.Emit(ctx, core.Event{Type: core.EvAnchor, User: anchor})
}

// MarkAnchor makes anchor an anchor, noting it among the followed
// anchors of every follower. Idempotent: an event processed twice scans
// again.
func (s *Service) MarkAnchor(ctx context.Context, anchor store.ID) error {
	_, err := s.noteAnchor(ctx, anchor, 0)
	return err
}

// noteAnchor marks anchor ("0": its followers being noted), then notes it
// among the followed anchors of its followers, TaskSize at a time, and
// marks it "1" once they all are. With pages > 0 it stops after that many
// pages, and reports whether it got through.
func (s *Service) noteAnchor(ctx context.Context, anchor store.ID, pages int) (done bool, err error) {
	defer store.Wrap(&err, "mark user %d an anchor", anchor)
	mark := s.Keys.AnchorMark(anchor)
	// NX: "1" stays; the mark comes first, the scan of the followers
	// after it, in the followers set's slot (see above).
	if err := s.Do(ctx, s.Redis.B().Set().Key(mark).Value("0").Nx().Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
		return false, err
	}
	lo := "-"
	for n := 0; pages == 0 || n < pages; n++ {
		page, err := s.Do(ctx, s.Redis.B().Zrange().Key(s.Keys.Followers(anchor)).Min(lo).Max("+").Bylex().
			Limit(0, TaskSize).Build()).AsStrSlice()
		if err != nil {
			return false, fmt.Errorf("read followers: %w", err)
		}
		cmds := make([]rueidis.Completed, len(page))
		for i, m := range page {
			id, err := store.MemberID(m)
			if err != nil {
				return false, err
			}
			cmds[i] = s.followedAnchorAddCmd(id, anchor)
		}
		if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
			return false, fmt.Errorf("note it among followers' anchors: %w", err)
		}
		// Their live subscriptions follow the anchor's channel from now
		// on: once in an account's life, so not asked whether present.
		if ids, err := IdsOf(page); err == nil && len(ids) > 0 {
			s.Notify(ctx, core.Notice{Kind: core.NoticeAnchors, Author: anchor, Readers: ids})
		}
		if len(page) < TaskSize {
			return true, s.Do(ctx, s.Redis.B().Set().Key(mark).Value("1").Build()).Error()
		}
		lo = "(" + page[len(page)-1]
	}
	return false, nil
}
