package safety

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/redis/rueidis"
)

// Settling a relation: the records (bk, mu with mue, hd) in each user's
// slot are the truth; settleRelations writes, for both directions of a
// pair, the block mirror bb and the hidden authors hx (with the read-time
// notes xn) in the viewer's slot, and the no-push set nx in the author's,
// removes the follows a block forbids, queues the inbox clean-up of an
// author newly hidden from a follower and backfills one shown again. It
// is idempotent and re-reads the records until they stop changing, as
// settleEdges does.

// pairState is what the records say of a pair (a, b), each direction
// [0] a toward b, [1] b toward a.
type pairState struct {
	blocked [2]int64 // when the block was made (ms); 0: none
	muted   [2]int64 // when the mute ends (ms); 0: none, or ended
	hides   [2]bool  // hides its posts from the other
	follows [2]bool
}

// hiddenUntil is until when direction d's viewer is kept from the other's
// posts (relationForever: no end), 0 when not.
func (p pairState) hiddenUntil(d int) int64 {
	o := 1 - d
	if p.blocked[0] != 0 || p.blocked[1] != 0 || p.hides[o] {
		return core.RelationForever
	}
	return p.muted[d]
}

// SettleRelations settles each pair of users (Follower: the user whose
// record changed, Followee: the other).
func (s *Service) SettleRelations(ctx context.Context, pairs []core.Edge) error {
	for _, p := range pairs {
		if err := s.settleRelation(ctx, p.Follower, p.Followee); err != nil {
			return fmt.Errorf("settle the relations of %d and %d: %w", p.Follower, p.Followee, err)
		}
	}
	return nil
}

func (s *Service) settleRelation(ctx context.Context, a, b store.ID) error {
	users := [2]store.ID{a, b}
	var applied *pairState
	var cleanups []CleanupJob
	var backfills []core.Edge
	for range core.MaxSettleRounds {
		now := s.NowMS()
		st, err := s.readPair(ctx, users, now)
		if err != nil {
			return err
		}
		if applied != nil && *applied == st {
			return s.finishRelation(ctx, cleanups, backfills)
		}
		if cleanups, backfills, err = s.applyPair(ctx, users, st, now); err != nil {
			return err
		}
		applied = &st
	}
	return errors.New("the relation records kept changing; the journal repair finishes it")
}

// readPair reads what the records of users' pair say now.
func (s *Service) readPair(ctx context.Context, users [2]store.ID, now int64) (pairState, error) {
	var cmds []rueidis.Completed
	for d := range 2 {
		u, o := users[d], store.Member(users[1-d])
		cmds = append(cmds,
			s.Redis.B().Zscore().Key(s.Keys.Blocks(u)).Member(o).Build(),
			s.Redis.B().Zscore().Key(s.Keys.MuteEnds(u)).Member(o).Build(),
			s.Redis.B().Zscore().Key(s.Keys.Hides(u)).Member(o).Build(),
			s.Redis.B().Zscore().Key(s.Keys.Following(u)).Member(o).Build())
	}
	rs := s.DoMulti(ctx, cmds...)
	var st pairState
	for d := range 2 {
		r := rs[4*d : 4*d+4]
		var err error
		if st.blocked[d], err = core.ScoreOrZero(r[0]); err != nil {
			return st, fmt.Errorf("read blocks: %w", err)
		}
		if st.muted[d], err = core.ScoreOrZero(r[1]); err != nil {
			return st, fmt.Errorf("read mutes: %w", err)
		}
		if st.muted[d] <= now {
			st.muted[d] = 0 // an ended mute is no mute
		}
		if st.hides[d], err = store.IsMember(r[2]); err != nil {
			return st, fmt.Errorf("read hides: %w", err)
		}
		if st.follows[d], err = store.IsMember(r[3]); err != nil {
			return st, fmt.Errorf("read following: %w", err)
		}
	}
	return st, nil
}

// applyPair writes what st says of users' pair: the no-push sets and the
// viewers' sets, then, across a block, removes the follows. It returns
// the directions (Follower: viewer, Followee: author) whose inbox clean-up
// is pending (with the note each wrote), and those owed a backfill.
func (s *Service) applyPair(ctx context.Context, users [2]store.ID, st pairState, now int64) (cleanups []CleanupJob, backfills []core.Edge, err error) {
	var cmds []rueidis.Completed
	for d := range 2 {
		v, u := users[d], users[1-d]
		if until := st.hiddenUntil(d); until != 0 && until < core.RelationForever {
			cmds = append(cmds, s.Redis.B().Zadd().Key(s.Keys.MuteTimers(s.ShardOf(v))).ScoreMember().
				ScoreMember(float64(until), core.EncodeEdges([]core.Edge{{Follower: v, Followee: u}})).Build())
		}
		if until := st.hiddenUntil(d); until != 0 {
			cmds = append(cmds, s.Redis.B().Zadd().Key(s.Keys.NoPush(u)).ScoreMember().ScoreMember(float64(until), store.Member(v)).Build())
		} else {
			cmds = append(cmds, s.Redis.B().Zrem().Key(s.Keys.NoPush(u)).Member(store.Member(v)).Build())
		}
	}
	for d := range 2 {
		v, u := users[d], users[1-d]
		mirror := ""
		if st.blocked[1-d] != 0 {
			mirror = store.ScoreArg(st.blocked[1-d])
		}
		cmds = append(cmds, relationViewer.Cmd(s.Redis.B(),
			[]string{s.Keys.HiddenAuthors(v), s.Keys.HideNotes(v), s.Keys.Following(v), s.Keys.BlockedBy(v)},
			[]string{store.Member(u), store.ScoreArg(st.hiddenUntil(d)), store.ScoreArg(now), mirror, store.ScoreArg(NotePendingFloor), store.ScoreArg(NoteToken(now))}))
	}
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs); err != nil {
		return nil, nil, fmt.Errorf("write the relation's sets: %w", err)
	}
	rs = rs[len(rs)-2:] // the viewers' scripts
	for d := range 2 {
		switch n, _ := rs[d].AsInt64(); n {
		case 1:
			cleanups = append(cleanups, CleanupJob{Viewer: users[d], Author: users[1-d], Note: NoteToken(now)})
		case 2:
			backfills = append(backfills, core.Edge{Follower: users[d], Followee: users[1-d]})
		}
	}
	if st.blocked[0] != 0 || st.blocked[1] != 0 {
		if err := s.unfollowPair(ctx, users, st, now); err != nil {
			return nil, nil, err
		}
	}
	return cleanups, backfills, nil
}

// unfollowPair removes the follows between users, both ways, as Unfollow
// does: the followers' following sets first (a follow script refuses a new
// one across the block, whose mirror is written by now), then the rest.
func (s *Service) unfollowPair(ctx context.Context, users [2]store.ID, st pairState, now int64) error {
	var cmds []rueidis.Completed
	edges := []core.Edge{{Follower: users[0], Followee: users[1]}, {Follower: users[1], Followee: users[0]}}
	for d, e := range edges {
		if st.follows[d] {
			keys := []string{s.Keys.Following(e.Follower), s.Keys.BigFollowees(e.Follower), s.Keys.Unfollowed(e.Follower)}
			args := []string{store.Member(e.Followee), store.ScoreArg(now), store.ScoreArg(now - timeline.UnfollowMemory.Milliseconds()), store.Itoa(timeline.MaxUnfollowNotes)}
			cmds = append(cmds, core.UnfollowCommit.Cmd(s.Redis.B(), keys, args))
		}
	}
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return fmt.Errorf("unfollow across a block: %w", err)
	}
	return s.SettleEdges(ctx, edges)
}

// finishRelation queues the inbox clean-ups still pending and backfills
// the directions shown again, then drops their owed marks.
func (s *Service) finishRelation(ctx context.Context, cleanups []CleanupJob, backfills []core.Edge) error {
	if err := store.FirstErr(s.DoMulti(ctx, store.CmdsFor(cleanups, s.cleanupJobCmd)...)); err != nil {
		return fmt.Errorf("queue the inbox clean-up: %w", err)
	}
	if len(backfills) == 0 {
		return nil
	}
	if err := s.BackfillMany(ctx, backfills); err != nil {
		return fmt.Errorf("backfill a user shown again: %w", err)
	}
	now := store.ScoreArg(s.NowMS())
	done := func(e core.Edge) rueidis.Completed {
		return zremIfDue.Cmd(s.Redis.B(), []string{s.Keys.HiddenAuthors(e.Follower)}, []string{store.Member(e.Followee), now})
	}
	return store.FirstErr(s.DoMulti(ctx, store.CmdsFor(backfills, done)...))
}

// cleanupJobCmd queues the removal of j.author's posts from j.viewer's
// inboxes on the viewer's shard's clean-up stream: fields v (viewer) and a
// (author) as decimal ids, t "hide", n the note's token (its score).
func (s *Service) cleanupJobCmd(j CleanupJob) rueidis.Completed {
	return s.Redis.B().Xadd().Key(s.Keys.Cleanup(s.ShardOf(j.Viewer))).Id("*").FieldValue().
		FieldValue("v", store.FormatID(j.Viewer)).FieldValue("a", store.FormatID(j.Author)).FieldValue("t", "hide").
		FieldValue("n", store.ScoreArg(j.Note)).Build()
}

// A hide note awaiting its clean-up ends at a token, relationForever less
// the ms of the settle that wrote it: far in the future, so reads skip the
// author's items, and distinct per hiding, so a clean-up shortens only the
// note its own settle wrote. A clean-up job that straddles an unmute and a
// mute again of the pair would otherwise cut the new mute's note to
// CleanupGrace while the new job may still wait longer in the queue.
func NoteToken(now int64) int64 { return core.RelationForever - now }

// NotePendingFloor: a note above it is still at its token, its clean-up
// pending (a shortened note ends at a clean-up's now plus CleanupGrace,
// ms since 1970, far below).
const NotePendingFloor = core.RelationForever / 2

// relationViewer writes one direction of a pair in the viewer's slot:
// KEYS hx, xn, fg, bb of the viewer; ARGV the author's member, until (ms;
// not after now ARGV[3]: shown), the block mirror's score ("" none),
// notePendingFloor, the note's token. Hidden: hx holds the author until
// then; if the viewer follows it and it was not hidden already (or its
// clean-up is still pending, the note above the floor), the note goes to
// the token and it replies 1: queue the clean-up. Shown: the notes go; an author that was hidden and
// is followed stays in hx at 0 (shown, backfill owed) and it replies 2;
// otherwise it leaves hx and replies 0.
var relationViewer = store.NewScript(false, `
local u, untl, now, floor = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[5])
if ARGV[4] == '' then redis.call('ZREM', KEYS[4], u) else redis.call('ZADD', KEYS[4], ARGV[4], u) end
local follows = redis.call('ZSCORE', KEYS[3], u)
local prev = redis.call('ZSCORE', KEYS[1], u)
if untl > now then
  redis.call('ZADD', KEYS[1], untl, u)
  if not follows then return 0 end
  local note = redis.call('ZSCORE', KEYS[2], u)
  local pending = note and tonumber(note) > floor
  if prev and tonumber(prev) > now and not pending then return 0 end
  redis.call('ZADD', KEYS[2], ARGV[6], u)
  return 1
end
redis.call('ZREM', KEYS[2], u)
if not prev then return 0 end
if follows then
  redis.call('ZADD', KEYS[1], 0, u)
  return 2
end
redis.call('ZREM', KEYS[1], u)
return 0
`)

// zremIfDue drops ARGV[1] from the sorted set KEYS[1] if its score is
// not after now ARGV[2]: a hidden author once its backfill paid what it
// was owed (a hide made meanwhile stays), a mute timer once settled (one
// set again to a later end stays).
var zremIfDue = store.NewScript(false, `
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) <= tonumber(ARGV[2]) then return redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`)

// RebuildRelations settles every pair users' relation records, block
// mirrors and derived sets name (Rebuild's relations phase): whatever is
// left of a relation whose records are gone is removed, and what the
// records say is written.
func (s *Service) RebuildRelations(ctx context.Context, users []store.ID, st *core.RebuildStats) error {
	kinds := []func(store.ID) string{s.Keys.Blocks, s.Keys.Mutes, s.Keys.Hides, s.Keys.BlockedBy, s.Keys.HiddenAuthors, s.Keys.NoPush, s.Keys.HideNotes}
	var pairs []core.Edge
	for _, keyOf := range kinds {
		sets, err := s.AllOf(ctx, keyOf, users)
		if err != nil {
			return err
		}
		for i, u := range users {
			others, err := timeline.IdsOf(sets[i])
			if err != nil {
				return err
			}
			for _, o := range others {
				pairs = append(pairs, core.Edge{Follower: u, Followee: o})
			}
		}
	}
	done := map[core.Edge]bool{}
	for _, p := range pairs {
		key := core.Edge{Follower: min(p.Follower, p.Followee), Followee: max(p.Follower, p.Followee)}
		if done[key] || p.Follower == p.Followee {
			continue
		}
		done[key] = true
		if err := s.settleRelation(ctx, p.Follower, p.Followee); err != nil {
			return fmt.Errorf("settle the relations of %d and %d: %w", p.Follower, p.Followee, err)
		}
		st.Relations++
	}
	return nil
}

// DropHidden takes out of each reader's followees (follows[i]) the
// authors hidden from it now, so a rebuild neither keeps nor brings back
// their posts in its inbox.
func (s *Service) DropHidden(ctx context.Context, readers []store.ID, follows [][]store.ID) error {
	now := store.ScoreArg(s.NowMS())
	hidden := func(r store.ID) rueidis.Completed {
		return s.Redis.B().Zrange().Key(s.Keys.HiddenAuthors(r)).Min("(" + now).Max("+inf").Byscore().Build()
	}
	for i, r := range s.DoMulti(ctx, store.CmdsFor(readers, hidden)...) {
		ms, err := r.AsStrSlice()
		if err != nil {
			return fmt.Errorf("read hidden authors: %w", err)
		}
		if len(ms) == 0 {
			continue
		}
		out := make(map[store.ID]bool, len(ms))
		for _, m := range ms {
			if id, err := store.MemberID(m); err == nil {
				out[id] = true
			}
		}
		follows[i] = slices.DeleteFunc(follows[i], func(f store.ID) bool { return out[f] })
	}
	return nil
}

// MuteEndLoop settles the pairs whose mute ended, on the service's clock:
// reads show the author again at once (they compare the end with now), and
// this takes it out of the derived sets and backfills the viewer, as an
// unmute does. A settle that ends a mute leaves a timer on the viewer's
// shard (muteTimers), removed once it is settled after its end.
func (s *Service) MuteEndLoop(ctx context.Context, o core.WorkerOptions) {
	for core.SleepCtx(ctx, o.RepairAfter/4) {
		for sh := 0; sh < s.Opts.StreamShards; sh++ {
			if err := s.EndMutes(ctx, sh); err != nil && ctx.Err() == nil {
				o.Logger.Warn("relations: settle ended mutes", "shard", sh, "err", err)
			}
		}
	}
}

// EndMutes settles the ended mutes of shard's timers, up to a batch.
func (s *Service) EndMutes(ctx context.Context, shard int) error {
	key, now := s.Keys.MuteTimers(shard), store.ScoreArg(s.NowMS())
	due, err := s.Do(ctx, s.Redis.B().Zrange().Key(key).Min("-inf").Max(now).Byscore().Limit(0, 64).Build()).AsStrSlice()
	if err != nil {
		return fmt.Errorf("read mute timers: %w", err)
	}
	for _, m := range due {
		pairs, err := core.DecodeEdges(m)
		if err != nil {
			s.Do(ctx, s.Redis.B().Zrem().Key(key).Member(m).Build())
			continue
		}
		if err := s.SettleRelations(ctx, pairs); err != nil {
			return err
		}
		// Only if not set again meanwhile, to a later end.
		if err := s.Do(ctx, zremIfDue.Cmd(s.Redis.B(), []string{key}, []string{m, now})).Error(); err != nil {
			return fmt.Errorf("drop a mute timer: %w", err)
		}
	}
	return nil
}

// JRel is the journal kind of relation changes: field p, the user:other
// pairs whose relations changed.
const JRel = "rel"
