package moderation

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/lists"
	"github.com/feedd/feedd/feedcore/ratelimit"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
)

// Account deletion. The commit is one script on the user's stream shard:
// it sets the gone marker (keys.gone) and journals the deletion job (kind
// jAccount), so nothing is written before it and either both exist or
// neither. From then on the user's requests are refused: every signed-in
// operation carries a charge whose script, in the marker's own slot,
// checks it (ratelimit.go NewCharge; a publish's log script checks it
// too), so the check rides the operation's first pipeline at no round
// trip of its own, with the rate limit on or off.
//
// The job then runs in the request, and again, from where it stopped, by
// the journal's repair if the request died (journal.go): its phases are
// idempotent, and the marker's field ph records the next one, so a resumed
// job skips what is done. Each phase that walks a set removes what it
// handled from that set last, so the set itself is its checkpoint.

// JAccount journals an account deletion: field u, the user.
const JAccount = "acct"

// accountGone commits a deletion: unless the marker KEYS[1] exists, it
// sets it (at ARGV[1] ms, handle ARGV[2], next phase 0), journals the job
// on KEYS[2] (fields k ARGV[3], u ARGV[4]) and owes it a second pass in
// KEYS[3] (accountSweeps, at the server's time). Replies {1, entry id},
// or {0, handle} when the account was deleted already.
var accountGone = store.NewScript(false, `
if redis.call('EXISTS', KEYS[1]) == 1 then return {0, redis.call('HGET', KEYS[1], 'h') or ''} end
redis.call('HSET', KEYS[1], 'at', ARGV[1], 'h', ARGV[2], 'ph', '0')
local t = redis.call('TIME')
redis.call('ZADD', KEYS[3], t[1] * 1000 + math.floor(t[2] / 1000), ARGV[4])
return {1, redis.call('XADD', KEYS[2], '*', 'k', ARGV[3], 'u', ARGV[4])}
`)

// DeleteAccount deletes viewer's account once confirmHandle equals its
// handle (else BAD_USER_INPUT): its posts and live sessions leave every
// feed, its follows both ways, likes, favorites, relations and keys are removed, and
// its handle is held for Options.HandleHold, then free. A retry after
// success succeeds again and finishes whatever is left.
func (s *Service) DeleteAccount(ctx context.Context, viewer store.ID, confirmHandle string) (err error) {
	defer store.Wrap(&err, "delete the account of user %d", viewer)
	ratelimit.ChargeOf(ctx).AllowGone() // a retry comes from a deleted account
	shard := s.ShardOf(viewer)
	rs := s.DoMulti(ctx, s.Redis.B().Hget().Key(s.Keys.Gone(shard, viewer)).Field("h").Build(),
		s.Redis.B().Hget().Key(s.Keys.User(viewer)).Field("h").Build())
	if err := store.FirstErr(rs); err != nil {
		return fmt.Errorf("read the account: %w", err)
	}
	goneHandle, _ := rs[0].ToString()
	handle, _ := rs[1].ToString()
	if goneHandle != "" {
		handle = goneHandle // a retry: the profile may be gone already
	}
	switch {
	case handle == "":
		return apierr.Errorf(apierr.Unauthenticated, "not signed in: no user has id %d", viewer)
	case handle != confirmHandle:
		return apierr.Errorf(apierr.BadInput, "confirmHandle %q is not your handle; send your own handle to confirm", confirmHandle)
	}
	jid := ""
	if goneHandle == "" {
		if jid, err = s.CommitGone(ctx, viewer, handle); err != nil {
			return err
		}
	}
	if err := s.finishAccount(ctx, viewer); err != nil {
		return fmt.Errorf("deleted, a worker finishes the clean-up: %w", err)
	}
	if jid != "" {
		s.End(ctx, shard, jid)
	}
	return nil
}

// CommitGone runs the deletion's commit and returns its journal entry
// ("" when a racing request committed it first).
func (s *Service) CommitGone(ctx context.Context, u store.ID, handle string) (string, error) {
	shard := s.ShardOf(u)
	keys := []string{s.Keys.Gone(shard, u), s.Keys.Journal(shard), s.Keys.AccountSweeps(shard)}
	args := []string{store.ScoreArg(s.NowMS()), handle, JAccount, store.FormatID(u)}
	arr, err := s.Commit(ctx, accountGone, keys, args, accountGone.Cmd(s.Redis.B(), keys, args)).ToArray()
	if err == nil && len(arr) != 2 {
		err = fmt.Errorf("reply of %d values", len(arr))
	}
	if err != nil {
		return "", fmt.Errorf("commit the deletion: %w", err)
	}
	if fresh, _ := arr[0].AsInt64(); fresh != 1 {
		return "", nil
	}
	return arr[1].ToString()
}

// GoneAccount is a deleted account's marker.
type GoneAccount struct {
	User      store.ID
	Handle    string
	DeletedAt int64 // ms
	phase     int   // the job's next phase
}

// AccountPhases are the deletion job's steps, in order. The followers go
// before the posts: taking the account's posts out of their inboxes reads
// its outboxes.
var AccountPhases = []struct {
	name string
	run  func(s *Service, ctx context.Context, g GoneAccount) error
}{
	{"profile", (*Service).DropProfile},
	{"followers", (*Service).dropFollowers},
	{"following", (*Service).dropFollowing},
	{"lives", (*Service).dropLives},
	{"posts", (*Service).dropPosts},
	{"likes", (*Service).dropLikes},
	{"favorites", (*Service).dropFavorites},
	{"relations", (*Service).dropRelations},
	{"keys", (*Service).dropKeys},
}

// finishAccount runs u's deletion job from its checkpoint to the end.
// Idempotent: a finished job does nothing.
func (s *Service) finishAccount(ctx context.Context, u store.ID) error {
	g, err := s.goneAccount(ctx, store.FormatID(u))
	if err != nil {
		return err
	}
	marker := s.Keys.Gone(s.ShardOf(u), u)
	done := g.phase >= len(AccountPhases)
	for ; g.phase < len(AccountPhases); g.phase++ {
		p := AccountPhases[g.phase]
		if err := p.run(s, ctx, g); err != nil {
			return fmt.Errorf("%s phase: %w", p.name, err)
		}
		if err := s.Do(ctx, s.Redis.B().Hset().Key(marker).FieldValue().FieldValue("ph", store.Itoa(g.phase+1)).Build()).Error(); err != nil {
			return fmt.Errorf("write the checkpoint: %w", err)
		}
	}
	if !done {
		// Its posts left every feed without a fan-out of their removal,
		// as a suspension's do: the subscriptions recount.
		s.Notify(ctx, core.Notice{Kind: core.NoticeSuspension, Author: u})
	}
	return nil
}

// goneAccount reads the marker of the deleted user id (decimal).
func (s *Service) goneAccount(ctx context.Context, id string) (GoneAccount, error) {
	u, err := store.ParseID(id)
	if err != nil {
		return GoneAccount{}, fmt.Errorf("%w: deleted user %q", core.ErrMalformed, id)
	}
	m, err := s.Do(ctx, s.Redis.B().Hgetall().Key(s.Keys.Gone(s.ShardOf(u), u)).Build()).AsStrMap()
	if err != nil {
		return GoneAccount{}, fmt.Errorf("read the gone marker: %w", err)
	}
	if len(m) == 0 {
		return GoneAccount{}, fmt.Errorf("%w: no deletion of user %d is recorded", core.ErrMalformed, u)
	}
	g := GoneAccount{User: u, Handle: m["h"]}
	g.DeletedAt, _ = core.ParseInt(m["at"])
	g.phase, _ = strconv.Atoi(m["ph"])
	return g, nil
}

// holdHandle keeps the handle KEYS[1], if it still names user ARGV[1] or
// nobody (an import), taken until ARGV[2] ms: its value becomes "id until"
// (claimHandle frees it after that by the service's clock) and Redis drops
// it then by its own.
var holdHandle = store.NewScript(false, `
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1] .. ' ' .. ARGV[2], 'PXAT', ARGV[2])
return 1
`)

// DropProfile deletes the profile (so the viewer's own reads answer
// UNAUTHENTICATED as for any id without a user) and holds the handle.
func (s *Service) DropProfile(ctx context.Context, g GoneAccount) error {
	until := g.DeletedAt + s.Opts.HandleHold.Milliseconds()
	return store.FirstErr(s.DoMulti(ctx, s.Redis.B().Del().Key(s.Keys.User(g.User)).Build(),
		holdHandle.Cmd(s.Redis.B(), []string{s.Keys.Handle(g.Handle)}, []string{store.FormatID(g.User), store.ScoreArg(until)})))
}

// chunkOf reads up to accountChunk members of the set key.
func (s *Service) chunkOf(ctx context.Context, key string) ([]store.ID, error) {
	ms, err := s.Do(ctx, s.Redis.B().Zrange().Key(key).Min("0").Max(store.Itoa(lists.AccountChunk-1)).Build()).AsStrSlice()
	if err != nil {
		return nil, err
	}
	return timeline.IdsOf(ms)
}

// drainSet calls step with chunks of the set key's members until the set
// is empty, removing each chunk from it once step succeeded: the set is
// the phase's checkpoint.
func (s *Service) drainSet(ctx context.Context, key string, step func(ids []store.ID) []rueidis.Completed) error {
	return s.drainSetReading(ctx, key, func(ids []store.ID) ([]rueidis.Completed, error) { return step(ids), nil })
}

// drainSetReading is drainSet with a step that may read (and fail)
// before it says what to write.
func (s *Service) drainSetReading(ctx context.Context, key string, step func(ids []store.ID) ([]rueidis.Completed, error)) error {
	for {
		ids, err := s.chunkOf(ctx, key)
		if err != nil || len(ids) == 0 {
			return err
		}
		cmds, err := step(ids)
		if err != nil {
			return err
		}
		if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
			return err
		}
		if err := s.Do(ctx, s.Redis.B().Zrem().Key(key).Member(store.Members(ids)...).Build()).Error(); err != nil {
			return err
		}
	}
}

// dropFollowers unfollows the account for each of its followers, as an
// unfollow does (the following set, big-V followees, the unfollow note
// that hides its posts at once), and takes its newest posts and replays
// out of their inboxes.
func (s *Service) dropFollowers(ctx context.Context, g GoneAccount) error {
	tls := s.Timelines()
	recent := make([][]store.ID, len(tls))
	for i, tl := range tls {
		items, err := s.Newest(ctx, tl.Outbox(g.User), s.Opts.InboxCap)
		if err != nil {
			return fmt.Errorf("read outbox: %w", err)
		}
		for _, it := range items {
			recent[i] = append(recent[i], it.ID)
		}
	}
	now := s.NowMS()
	args := []string{store.Member(g.User), store.ScoreArg(now), store.ScoreArg(now - timeline.UnfollowMemory.Milliseconds()), store.Itoa(timeline.MaxUnfollowNotes)}
	return s.drainSet(ctx, s.Keys.Followers(g.User), func(fs []store.ID) []rueidis.Completed {
		cmds := make([]rueidis.Completed, 0, 3*len(fs)+1)
		for _, f := range fs {
			cmds = append(cmds, core.UnfollowCommit.Cmd(s.Redis.B(),
				[]string{s.Keys.Following(f), s.Keys.BigFollowees(f), s.Keys.Unfollowed(f)}, args),
				s.Redis.B().Zrem().Key(s.Keys.FollowingTimes(f)).Member(store.Member(g.User)).Build())
			for i, tl := range tls {
				if len(recent[i]) > 0 {
					cmds = append(cmds, s.InboxRemoveCmd(tl, f, recent[i]...))
				}
			}
		}
		return append(cmds, s.Redis.B().Zrem().Key(s.Keys.Active(g.User)).Member(store.Members(fs)...).Build())
	})
}

// dropFollowing takes the account out of its followees' followers and
// active sets.
func (s *Service) dropFollowing(ctx context.Context, g GoneAccount) error {
	m := store.Member(g.User)
	return s.drainSet(ctx, s.Keys.Following(g.User), func(gs []store.ID) []rueidis.Completed {
		cmds := make([]rueidis.Completed, 0, 2*len(gs))
		for _, id := range gs {
			cmds = append(cmds, s.Redis.B().Zrem().Key(s.Keys.Followers(id)).Member(m).Build(),
				s.Redis.B().Zrem().Key(s.Keys.FollowerTimes(id)).Member(m).Build(),
				s.Redis.B().Zrem().Key(s.Keys.Active(id)).Member(m).Build())
		}
		return cmds
	})
}

// dropLives deletes the account's queued sessions and replays: a reader
// skips a session whose hash is gone, wherever it is still listed.
func (s *Service) dropLives(ctx context.Context, g GoneAccount) error {
	for _, key := range []string{s.Keys.LiveQueue(g.User), s.Keys.ReplayOutbox(g.User)} {
		if err := s.drainSet(ctx, key, func(ids []store.ID) []rueidis.Completed {
			return store.CmdsFor(ids, func(id store.ID) rueidis.Completed { return s.Redis.B().Del().Key(s.Keys.Live(id)).Build() })
		}); err != nil {
			return err
		}
	}
	return nil
}

// dropPosts tombstones the account's posts and reposts, as a delete and
// undoRepost do (reads skip a tombstone wherever it is still listed), and
// erases their text: its replies and reposts leave their parents' and
// originals' counters, and the reposts of its posts are taken back
// (dropRepostsOf).
func (s *Service) dropPosts(ctx context.Context, g GoneAccount) error {
	return s.drainSetReading(ctx, s.Keys.Outbox(g.User), func(ids []store.ID) ([]rueidis.Completed, error) {
		ps, err := s.Posts(ctx, ids)
		if err != nil {
			return nil, err
		}
		cmds := make([]rueidis.Completed, 0, 3*len(ids)+1)
		for i, id := range ids {
			cmds = append(cmds, s.Redis.B().Hset().Key(s.Keys.Post(id)).FieldValue().FieldValue("d", "1").Build(),
				s.Redis.B().Hdel().Key(s.Keys.Post(id)).Field("x").Build())
			switch p := ps[i]; {
			case p == nil:
			case p.IsRepost():
				cmds = append(cmds, lists.RepostDrop.Cmd(s.Redis.B(), []string{s.Keys.Reposts(p.RepostOf), s.Keys.PostCounts(p.RepostOf)},
					[]string{store.Member(p.Author), store.Member(p.ID)}))
			default:
				if p.ReplyTo != 0 {
					cmds = append(cmds, s.ReplyDropCmd(p))
				}
				if err := s.DropRepostsOf(ctx, p); err != nil {
					return nil, err
				}
			}
		}
		return append(cmds, s.InboxRemoveCmd(s.PostsTL(), g.User, ids...)), nil
	})
}

// uncountGone takes a deleted account's like or favorite, ARGV[1], off a
// post: out of its likers or favoriters set KEYS[1] and, when it was
// there, one off the counter field ARGV[2] (l or f) of KEYS[2], never
// below 0, as an unlike or an unfavorite does (deleted posts too: the
// like and favorite scripts leave those alone).
var uncountGone = store.NewScript(false, `
if redis.call('SREM', KEYS[1], ARGV[1]) == 1 and redis.call('HINCRBY', KEYS[2], ARGV[2], -1) < 0 then
  redis.call('HSET', KEYS[2], ARGV[2], 0)
end
return 0
`)

// dropLikes takes the account's likes back, counters updated. Likes are
// kept per post only (the like path writes one slot), so this walks every
// post's likers set: a deletion's cost grows with the number of liked
// posts in the store, once.
func (s *Service) dropLikes(ctx context.Context, g GoneAccount) error {
	m := store.Member(g.User)
	return s.ScanIDs(ctx, s.Keys.Likers, func(ids []store.ID) error {
		return store.FirstErr(s.DoMulti(ctx, store.CmdsFor(ids, func(p store.ID) rueidis.Completed {
			return uncountGone.Cmd(s.Redis.B(), []string{s.Keys.Likers(p), s.Keys.PostCounts(p)}, []string{m, "l"})
		})...))
	})
}

// dropRelations removes the account's blocks, mutes and hides, and
// everyone else's naming it, and settles each pair (safety_settle.go), so
// the mirrors and derived sets in the others' slots (bb, hx, xn, nx) lose
// it. The others are found in the account's own records, mirror and
// derived sets, which name everyone it relates to either way; each chunk
// is taken out of them once settled, so they are the phase's checkpoint.
// (A mute of the account that has ended already is named by none of them
// and stays in its maker's records.)
func (s *Service) dropRelations(ctx context.Context, g GoneAccount) error {
	u := g.User
	mine := []string{s.Keys.Blocks(u), s.Keys.Mutes(u), s.Keys.MuteEnds(u), s.Keys.Hides(u),
		s.Keys.BlockedBy(u), s.Keys.HiddenAuthors(u), s.Keys.NoPush(u), s.Keys.HideNotes(u)}
	for {
		others, err := s.relatedChunk(ctx, mine)
		if err != nil || len(others) == 0 {
			return err
		}
		var cmds []rueidis.Completed
		pairs := make([]core.Edge, len(others))
		for i, x := range others {
			pairs[i] = core.Edge{Follower: u, Followee: x}
			for _, key := range []func(store.ID) string{s.Keys.Blocks, s.Keys.Mutes, s.Keys.MuteEnds, s.Keys.Hides} {
				cmds = append(cmds, s.Redis.B().Zrem().Key(key(x)).Member(store.Member(u)).Build(),
					s.Redis.B().Zrem().Key(key(u)).Member(store.Member(x)).Build())
			}
		}
		if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
			return err
		}
		if err := s.SettleRelations(ctx, pairs); err != nil {
			return err
		}
		cmds = store.CmdsFor(mine, func(key string) rueidis.Completed {
			return s.Redis.B().Zrem().Key(key).Member(store.Members(others)...).Build()
		})
		if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
			return err
		}
	}
}

// relatedChunk reads up to accountChunk members of each of the sets keys
// (one slot's), and returns them once each.
func (s *Service) relatedChunk(ctx context.Context, keys []string) ([]store.ID, error) {
	rs := s.DoMulti(ctx, store.CmdsFor(keys, func(key string) rueidis.Completed {
		return s.Redis.B().Zrange().Key(key).Min("0").Max(store.Itoa(lists.AccountChunk - 1)).Build()
	})...)
	seen := map[store.ID]bool{}
	var out []store.ID
	for _, r := range rs {
		ms, err := r.AsStrSlice()
		if err != nil {
			return nil, err
		}
		ids, err := timeline.IdsOf(ms)
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if !seen[id] {
				seen[id] = true
				out = append(out, id)
			}
		}
	}
	return out, nil
}

// dropKeys deletes every key of the account that is left, and its entry
// in the activity index.
func (s *Service) dropKeys(ctx context.Context, g GoneAccount) error {
	u := g.User
	names := []func(store.ID) string{s.Keys.Inbox, s.Keys.Outbox, s.Keys.Reader, s.Keys.Following, s.Keys.Followers, s.Keys.Active,
		s.Keys.PushMode, s.Keys.BigFollowees, s.Keys.Unfollowed, s.Keys.ReplayInbox, s.Keys.ReplayOutbox, s.Keys.ReplayReader,
		s.Keys.LiveQueue, s.Keys.LiveDevices, s.Keys.Blocks, s.Keys.Mutes, s.Keys.MuteEnds, s.Keys.Hides, s.Keys.BlockedBy,
		s.Keys.HiddenAuthors, s.Keys.NoPush, s.Keys.HideNotes, s.Keys.KeywordFilters, s.Keys.KeywordVersion,
		s.Keys.FollowingTimes, s.Keys.FollowerTimes, s.Keys.Favorites, s.Keys.Dormant, s.Keys.FollowedAnchors, s.Keys.AnchorMark, s.Keys.PendingFollows}
	cmds := make([]rueidis.Completed, 0, len(names)+2)
	for _, name := range names {
		cmds = append(cmds, s.Redis.B().Del().Key(name(u)).Build())
	}
	cmds = append(cmds, s.Redis.B().Zrem().Key(s.Keys.Seen(timeline.ActivityShard(u))).Member(store.Member(u)).Build(),
		s.Redis.B().Zrem().Key(s.Keys.Quiet(timeline.ActivityShard(u))).Member(store.Member(u)).Build(),
		s.Redis.B().Del().Key(s.Keys.RateLimitIn(s.ShardOf(u), u, "")).Build())
	return store.FirstErr(s.DoMulti(ctx, cmds...))
}

// SecondPassLoop gives each deletion, suspension and unsuspension its
// second pass once RepairAfter has passed since its commit: a request that
// was in flight then (a follow of the account, its like, publish or
// scheduled session admitted just before the marker) has written by that
// time (RepairAfter is above the longest a mutation's writes may take),
// and the pass takes away, or marks, what it wrote.
func (s *Service) SecondPassLoop(ctx context.Context, o core.WorkerOptions) {
	for core.SleepCtx(ctx, o.RepairAfter/4) {
		cutoff := time.Now().Add(-o.RepairAfter)
		for sh := 0; sh < s.Opts.StreamShards; sh++ {
			if err := s.sweepAccounts(ctx, sh, cutoff); err != nil && ctx.Err() == nil {
				o.Logger.Warn("account deletion: second pass", "shard", sh, "err", err)
			}
			if err := s.sweepSuspensions(ctx, sh, cutoff); err != nil && ctx.Err() == nil {
				o.Logger.Warn("suspension: second pass", "shard", sh, "err", err)
			}
		}
	}
}

// sweepAccounts runs the second pass of shard's deletions committed before
// cutoff: every phase again, without the checkpoint (the first pass may
// still be running; both are idempotent).
func (s *Service) sweepAccounts(ctx context.Context, shard int, cutoff time.Time) error {
	return s.secondPasses(ctx, s.Keys.AccountSweeps(shard), cutoff, func(m string) error {
		g, err := s.goneAccount(ctx, m)
		if err != nil {
			return err
		}
		for _, p := range AccountPhases {
			if err := p.run(s, ctx, g); err != nil {
				return fmt.Errorf("user %d, %s phase: %w", g.User, p.name, err)
			}
		}
		return nil
	})
}

// secondPasses runs pass for each member of the zset key (commit ms by
// the server's clock, user id) committed before cutoff, 16 a call, and
// drops its timer once the pass succeeded, or can never run
// (errMalformed: nothing to sweep, ever).
func (s *Service) secondPasses(ctx context.Context, key string, cutoff time.Time, pass func(m string) error) error {
	due, err := s.Do(ctx, s.Redis.B().Zrange().Key(key).Min("-inf").Max(core.Itoa64(cutoff.UnixMilli())).Byscore().
		Limit(0, 16).Build()).AsStrSlice()
	if err != nil {
		return fmt.Errorf("read the second passes due: %w", err)
	}
	for _, m := range due {
		if err := pass(m); err != nil && !errors.Is(err, core.ErrMalformed) {
			return err
		}
		if err := s.Do(ctx, s.Redis.B().Zrem().Key(key).Member(m).Build()).Error(); err != nil {
			return fmt.Errorf("drop a second pass: %w", err)
		}
	}
	return nil
}

// repairAccount finishes the deletion a journal entry records.
func (s *Service) repairAccount(ctx context.Context, _ int, e rueidis.XRangeEntry) error {
	fv := e.FieldValues
	u, err := store.ParseID(fv["u"])
	if err != nil {
		return fmt.Errorf("%w: journal field u %q", core.ErrMalformed, fv["u"])
	}
	return s.finishAccount(ctx, u)
}

// DeletedAccounts calls fn with the deleted accounts, a batch at a time.
func (s *Service) DeletedAccounts(ctx context.Context, fn func([]core.DeletedAccount) error) (err error) {
	defer store.Wrap(&err, "list deleted accounts")
	return s.shardHashes(ctx, s.Keys.Gone, []string{"h", "at"}, func(ids []store.ID, fs [][]string) error {
		out := make([]core.DeletedAccount, len(ids))
		for i, f := range fs {
			ms, _ := core.ParseInt(f[1])
			out[i] = core.DeletedAccount{User: ids[i], Handle: f[0], DeletedAt: time.UnixMilli(ms).UTC()}
		}
		return fn(out)
	})
}

// PutDeletedAccount records a deleted account (import): its marker, as
// the deletion's commit writes it, and the job, run at once.
func (s *Service) PutDeletedAccount(ctx context.Context, d core.DeletedAccount) (err error) {
	defer store.Wrap(&err, "record the deletion of user %d", d.User)
	if d.User == 0 {
		return apierr.Errorf(apierr.BadInput, "a deleted account needs a positive user id")
	}
	shard := s.ShardOf(d.User)
	keys := []string{s.Keys.Gone(shard, d.User), s.Keys.Journal(shard), s.Keys.AccountSweeps(shard)}
	args := []string{store.ScoreArg(d.DeletedAt.UnixMilli()), d.Handle, JAccount, store.FormatID(d.User)}
	arr, err := s.Do(ctx, accountGone.Cmd(s.Redis.B(), keys, args)).ToArray()
	if err != nil {
		return err
	}
	if err := s.finishAccount(ctx, d.User); err != nil {
		return err
	}
	if fresh, _ := arr[0].AsInt64(); fresh == 1 {
		jid, _ := arr[1].ToString()
		s.End(ctx, shard, jid)
	}
	return nil
}

// dropFavorites takes a deleted account's favorites back, counters
// updated: its record names the posts, so this costs its own favorites,
// not the store's. The record is the phase's checkpoint.
func (s *Service) dropFavorites(ctx context.Context, g GoneAccount) error {
	m := store.Member(g.User)
	return s.drainSet(ctx, s.Keys.Favorites(g.User), func(posts []store.ID) []rueidis.Completed {
		return store.CmdsFor(posts, func(p store.ID) rueidis.Completed {
			return uncountGone.Cmd(s.Redis.B(), []string{s.Keys.Favoriters(p), s.Keys.PostCounts(p)}, []string{m, "f"})
		})
	})
}
