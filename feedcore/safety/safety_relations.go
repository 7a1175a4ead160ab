package safety

import (
	"context"
	"fmt"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
)

// Block makes viewer block target: nothing of either reaches the other,
// and the follows between them are removed. Idempotent.
func (s *Service) Block(ctx context.Context, viewer, target store.ID) (err error) {
	defer store.Wrap(&err, "user %d blocks %d", viewer, target)
	return s.setRelation(ctx, core.RelationBlock, viewer, target, true, 0)
}

// Unblock takes viewer's block of target back; no follow comes back.
func (s *Service) Unblock(ctx context.Context, viewer, target store.ID) (err error) {
	defer store.Wrap(&err, "user %d unblocks %d", viewer, target)
	return s.setRelation(ctx, core.RelationBlock, viewer, target, false, 0)
}

// Mute hides target's posts and live sessions from viewer's feeds, for d
// (0: until unmuted). Muting again sets the new end.
func (s *Service) Mute(ctx context.Context, viewer, target store.ID, d time.Duration) (err error) {
	defer store.Wrap(&err, "user %d mutes %d", viewer, target)
	if d < 0 {
		return apierr.Errorf(apierr.BadInput, "a mute's duration cannot be negative")
	}
	until := core.RelationForever
	if d > 0 {
		until = min(s.NowMS()+d.Milliseconds(), core.RelationForever)
	}
	return s.setRelation(ctx, core.RelationMute, viewer, target, true, until)
}

// Unmute ends viewer's mute of target.
func (s *Service) Unmute(ctx context.Context, viewer, target store.ID) (err error) {
	defer store.Wrap(&err, "user %d unmutes %d", viewer, target)
	return s.setRelation(ctx, core.RelationMute, viewer, target, false, 0)
}

// HidePostsFrom keeps viewer's posts and live sessions out of target's
// feeds; target still follows viewer and is not told.
func (s *Service) HidePostsFrom(ctx context.Context, viewer, target store.ID) (err error) {
	defer store.Wrap(&err, "user %d hides its posts from %d", viewer, target)
	return s.setRelation(ctx, core.RelationHide, viewer, target, true, 0)
}

// UnhidePostsFrom shows viewer's posts to target again.
func (s *Service) UnhidePostsFrom(ctx context.Context, viewer, target store.ID) (err error) {
	defer store.Wrap(&err, "user %d unhides its posts from %d", viewer, target)
	return s.setRelation(ctx, core.RelationHide, viewer, target, false, 0)
}

// setRelation adds (on) or removes a relation of viewer to target,
// journaled (journal.go): the record in viewer's slot is the truth, the
// mirrors and derived sets in both slots are settled from it.
func (s *Service) setRelation(ctx context.Context, kind core.RelationKind, viewer, target store.ID, on bool, until int64) error {
	if viewer == 0 {
		return apierr.Errorf(apierr.Unauthenticated, "sign in to block, mute or hide")
	}
	if viewer == target {
		return apierr.Errorf(apierr.BadInput, "you cannot %s yourself", kind)
	}
	// Read afresh, as a follow does, not from this process's memory of
	// users (usersExist): a target deleted since must get NOT_FOUND, not
	// a relation naming it written after its deletion swept them.
	pair := []core.Edge{{Follower: viewer, Followee: target}}
	if _, err := s.ExistingPairs(ctx, pair); err != nil {
		return err
	}
	shard := s.ShardOf(viewer)
	jid, err := s.Begin(ctx, shard, "k", JRel, "p", core.EncodeEdges(pair))
	if err != nil {
		return err
	}
	keys, args := s.RelationCommitArgs(kind, viewer, target, on, s.NowMS(), until)
	n, err := s.Commit(ctx, RelationCommit, keys, args, RelationCommit.Cmd(s.Redis.B(), keys, args)).AsInt64()
	if err != nil {
		return fmt.Errorf("record the %s: %w", kind, err)
	}
	if n < 0 {
		s.End(ctx, shard, jid) // refused: nothing changed
		return apierr.Errorf(apierr.BadInput, "you have %d blocks, mutes and hides, the most allowed (--max-blocks); remove one first", s.Opts.MaxRelations)
	}
	if err := s.SettleRelations(ctx, pair); err != nil {
		return fmt.Errorf("recorded, a worker finishes it: %w", err)
	}
	// Both may see less (a block, a hide) or more (an unmute) now.
	s.EndTelling(ctx, shard, jid, core.Notice{Kind: core.NoticeViews, Readers: []store.ID{viewer, target}})
	return nil
}

// RelationCommit changes one relation record of a user, in the user's
// slot: KEYS bk, mu, mue, hd, fg, uf, bf of the user; ARGV kind ("block",
// "mute", "hide"), on ("1" add, "0" remove), the other user's member, now
// ms, until ms (mutes), the limit, unfollowCommit's note arguments, and
// the time the relation was made (ms; now but for an import).
// Adding one already there succeeds, even at the limit (a mute takes the
// new end); a new one past the limit (blocks, mutes and hides together,
// ended mutes pruned first) replies -1. A block also drops the user's
// follow of the other, as unfollowCommit does: the block and that unfollow
// are one step, so no follow survives a block that was acknowledged.
var RelationCommit = store.NewScript(false, `
local rec = {block = KEYS[1], mute = KEYS[2], hide = KEYS[4]}
local key, m, now = rec[ARGV[1]], ARGV[3], tonumber(ARGV[4])
if ARGV[2] == '0' then
  local gone = redis.call('ZREM', key, m)
  if ARGV[1] == 'mute' then redis.call('ZREM', KEYS[3], m) end
  return gone
end
local had = redis.call('ZSCORE', key, m)
if ARGV[1] == 'mute' and had then
  local u = tonumber(redis.call('ZSCORE', KEYS[3], m) or '0')
  if u <= now then had = false end
end
if not had then
  local ended = redis.call('ZRANGE', KEYS[3], '-inf', now, 'BYSCORE')
  for i = 1, #ended do
    redis.call('ZREM', KEYS[2], ended[i])
    redis.call('ZREM', KEYS[3], ended[i])
  end
  local n = redis.call('ZCARD', KEYS[1]) + redis.call('ZCARD', KEYS[2]) + redis.call('ZCARD', KEYS[4])
  if n >= tonumber(ARGV[6]) then return -1 end
  redis.call('ZADD', key, ARGV[10], m)
end
if ARGV[1] == 'mute' then redis.call('ZADD', KEYS[3], ARGV[5], m) end
if ARGV[1] == 'block' and redis.call('ZREM', KEYS[5], m) == 1 then
  redis.call('SREM', KEYS[7], m)
  redis.call('ZADD', KEYS[6], ARGV[7], m)
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', '(' .. ARGV[8])
  redis.call('ZREMRANGEBYRANK', KEYS[6], 0, -tonumber(ARGV[9]) - 1)
end
if had then return 0 end
return 1
`)

// RelationCommitArgs are relationCommit's keys and arguments.
func (s *Service) RelationCommitArgs(kind core.RelationKind, user, other store.ID, on bool, now, until int64) (keys, args []string) {
	flag := "0"
	if on {
		flag = "1"
	}
	keys = []string{s.Keys.Blocks(user), s.Keys.Mutes(user), s.Keys.MuteEnds(user), s.Keys.Hides(user),
		s.Keys.Following(user), s.Keys.Unfollowed(user), s.Keys.BigFollowees(user)}
	args = []string{string(kind), flag, store.Member(other), store.ScoreArg(now), store.ScoreArg(until), store.Itoa(s.Opts.MaxRelations),
		store.ScoreArg(now), store.ScoreArg(now - timeline.UnfollowMemory.Milliseconds()), store.Itoa(timeline.MaxUnfollowNotes), store.ScoreArg(now)}
	return keys, args
}

// LikeAcrossBlock refuses viewer's like of post when a block stands
// between viewer and the post's author. The author is read through the
// client-side cache while, in the same round trip, the viewer's slot says
// whether the viewer is in any block at all; only a viewer who is pays a
// second read, of the pair. (The like itself runs in the post's slot, so
// it cannot check the users' slots atomically: a block made while the like
// is under way orders after it.)
func (s *Service) LikeAcrossBlock(ctx context.Context, viewer, post store.ID) error {
	_, err := s.ReadUnblocked(ctx, viewer, post, false)
	return err
}
