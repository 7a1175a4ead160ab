package timeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/ratelimit"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/roundtrip"
)

// Follow makes viewer follow target. It answers once the follow is
// recorded: one commit in viewer's slot puts target in the following set
// (the record of truth) and marks the follow pending, and target's
// followers side is written (one small write, so counts and lists show
// the follow at once). The rest (promotions, active sets, and the
// backfill of target's recent posts into viewer's inbox: up to ten round
// trips and tens of kilobytes for an author with many posts) settles
// after the answer (settleLater); until it has, viewer's pages merge
// target's outbox (pushedSources), so viewer's own next page shows
// target's posts. Idempotent: following again settles anything a failed
// earlier attempt left half done. Imports (FollowMany) settle before they
// answer.
func (s *Service) Follow(ctx context.Context, viewer, target store.ID) (err error) {
	defer store.Wrap(&err, "follow")
	if viewer == target {
		return apierr.Errorf(apierr.BadInput, "you cannot follow yourself")
	}
	edges := []core.Edge{{Follower: viewer, Followee: target}}
	at := s.NowMS()
	shard := s.ShardOf(viewer)
	jid, err := s.beginFollow(ctx, shard, edges, at)
	if err != nil {
		return err
	}
	applied, err := s.addFollowing(ctx, edges, []time.Time{time.UnixMilli(at)}, true)
	if len(applied) == 0 {
		if refused := (*apierr.Error)(nil); errors.As(err, &refused) {
			s.End(ctx, shard, jid) // refused by the commit (a block, the limit): nothing changed
		}
		return err // or the journal settles whatever went through
	}
	if err := s.addFollower(ctx, edges[0], at); err != nil {
		return fmt.Errorf("recorded, a worker finishes it: %w", err)
	}
	s.settleLater(ctx, func(ctx context.Context) error {
		if err := s.settleFollows(ctx, edges, at); err != nil {
			return err
		}
		s.End(ctx, shard, jid)
		return nil
	})
	return nil
}

// beginFollow records the follow of edges in shard's journal while it
// checks that both users exist, in one round trip: the journal's entry
// must be in before the commit, and the check before it too. A follow of
// a missing user ends its entry at once and answers NOT_FOUND; had the
// process died first, the entry's repair would find no follow in the
// following set, the record of truth, and settle nothing.
func (s *Service) beginFollow(ctx context.Context, shard int, edges []core.Edge, at int64) (string, error) {
	var jid string
	err := roundtrip.Parallel(ctx,
		func(ctx context.Context) error {
			_, err := s.ExistingPairs(ctx, edges) // NOT_FOUND names the missing user
			return err
		},
		func(ctx context.Context) (err error) {
			jid, err = s.Begin(ctx, shard, "k", JFollow, "e", core.EncodeEdges(edges), "t", core.Itoa64(at))
			return err
		})
	if err != nil && jid != "" {
		s.End(ctx, shard, jid)
	}
	return jid, err
}

// addFollower writes e's followers side, timed at ms only if it has no
// time yet: a follow again keeps its time, which the settle writes from
// the follower's side, the truth. The follower's pages merge the
// followee from now on (pending) and its live feed shows the followee's
// sessions: its realtime subscriptions are told in the same round trip,
// to recount and follow the followee's channels.
func (s *Service) addFollower(ctx context.Context, e core.Edge, ms int64) error {
	m := store.Member(e.Follower)
	notice, told := s.NoticeCmds(core.Notice{Kind: core.NoticeViews, Readers: []store.ID{e.Follower}})
	rs := s.DoMulti(ctx, append([]rueidis.Completed{
		s.Redis.B().Zadd().Key(s.Keys.Followers(e.Followee)).ScoreMember().ScoreMember(0, m).Build(),
		s.Redis.B().Zadd().Key(s.Keys.FollowerTimes(e.Followee)).Nx().ScoreMember().ScoreMember(float64(ms), m).Build()},
		notice...)...)
	told(rs[2:])
	return store.FirstErr(rs[:2])
}

// JFollow is the journal kind of a follow from the API (Follow): field e,
// its edge (as JEdges), and t, the ms its pending mark was made at.
const JFollow = "follow"

// settleTimeout bounds a settle run after its follow answered; past it
// (or if the process dies first) the journal's repair settles the follow.
const settleTimeout = 30 * time.Second

// settleLater runs settle after the follow answers: handed to
// Options.SettleFollow when set, else on a goroutine of its own, apart
// from the request (its deadline and its rate-limit charge). A settle
// that fails is logged; the journal's repair finishes it.
func (s *Service) settleLater(ctx context.Context, settle func(context.Context) error) {
	if s.Opts.SettleFollow != nil {
		s.Opts.SettleFollow(settle)
		return
	}
	ctx = ratelimit.WithoutCharge(context.WithoutCancel(ctx))
	s.settling.Add(1)
	go func() {
		defer s.settling.Done()
		ctx, cancel := context.WithTimeout(ctx, settleTimeout)
		defer cancel()
		if err := settle(ctx); err != nil {
			slog.Warn("follow: its settle after the answer failed; the journal's repair finishes it", "err", err)
		}
	}()
}

// WaitForFollows waits until the settles of the follows this process has
// answered have run (those handed to Options.SettleFollow aside): the
// followees' posts are in the followers' inboxes, and nothing of the
// follows is left for the journal's repair. For a graceful stop, and
// tests.
func (s *Service) WaitForFollows() { s.settling.Wait() }

// settleFollows settles edges (SettleEdges), then clears their pending
// marks made at or before at ms: the inbox holds the followees' recent
// posts now, and pages stop merging their outboxes. A mark made since, by
// a later follow of the same account, waits for that follow's settle.
func (s *Service) settleFollows(ctx context.Context, edges []core.Edge, at int64) error {
	if err := s.SettleEdges(ctx, edges); err != nil {
		return err
	}
	cmds := make([]rueidis.Completed, len(edges))
	for i, e := range edges {
		keys, args := []string{s.Keys.PendingFollows(e.Follower)}, []string{store.Member(e.Followee), core.Itoa64(at)}
		cmds[i] = core.PendingClear.Cmd(s.Redis.B(), keys, args)
	}
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return fmt.Errorf("clear pending follows: %w", err)
	}
	return nil
}

// repairFollow is JFollow's repair: the follow settles as it would have
// after answering.
func (s *Service) repairFollow(ctx context.Context, _ int, e rueidis.XRangeEntry) error {
	edges, err := core.DecodeEdges(e.FieldValues["e"])
	if err != nil {
		return err
	}
	at, err := strconv.ParseInt(e.FieldValues["t"], 10, 64)
	if err != nil {
		return fmt.Errorf("%w: journal follow time %q", core.ErrMalformed, e.FieldValues["t"])
	}
	return s.settleFollows(ctx, edges, at)
}

// FollowMany applies follows in order, pipelined: a handful of round trips
// for the whole batch. It stops at the first edge that fails and returns how
// many were applied before it; that edge and those after it change nothing.
// The batch is journaled (see journal.go): the following sets are the
// record of truth, and everything else is settled from them.
func (s *Service) FollowMany(ctx context.Context, edges []core.Edge) (_ int, err error) {
	return s.FollowManyAt(ctx, edges, nil)
}

// FollowManyAt is FollowMany with the time each follow was made (import):
// at[i] for edges[i], the service's clock where at is nil or at[i] zero.
// A follow already there keeps its time.
func (s *Service) FollowManyAt(ctx context.Context, edges []core.Edge, at []time.Time) (_ int, err error) {
	defer store.Wrap(&err, "follow")
	edges, stop := s.checkEdges(ctx, edges)
	if len(edges) == 0 {
		return 0, stop
	}
	shard := s.ShardOf(edges[0].Follower)
	jid, err := s.Begin(ctx, shard, "k", JEdges, "e", core.EncodeEdges(edges))
	if err != nil {
		return 0, err
	}
	applied, limitErr := s.AddFollowing(ctx, edges, at)
	if applied == nil && limitErr != nil && store.CodeOf(limitErr) != apierr.FollowLimit {
		return 0, limitErr // the journal settles whatever went through
	}
	if err := s.SettleEdges(ctx, edges); err != nil {
		return 0, fmt.Errorf("recorded, a worker finishes it: %w", err)
	}
	s.End(ctx, shard, jid)
	if limitErr != nil {
		return len(applied), limitErr
	}
	return len(edges), stop
}

// checkEdges returns the prefix of edges that can be applied, and the
// error of the first that cannot: a self-follow or a missing user.
func (s *Service) checkEdges(ctx context.Context, edges []core.Edge) ([]core.Edge, error) {
	var stop error
	for i, e := range edges {
		if e.Follower == e.Followee {
			edges, stop = edges[:i], apierr.Errorf(apierr.BadInput, "you cannot follow yourself")
			break
		}
	}
	n, err := s.ExistingPairs(ctx, edges)
	switch {
	case store.CodeOf(err) == apierr.NotFound:
		edges, stop = edges[:n], err
	case err != nil:
		return nil, err
	}
	return edges, stop
}

// ExistingPairs returns how many of pairs, from the first, name two
// existing users, with NOT_FOUND naming the first missing one (or the
// store's error, and 0).
func (s *Service) ExistingPairs(ctx context.Context, pairs []core.Edge) (int, error) {
	users := make([]store.ID, 0, 2*len(pairs))
	for _, e := range pairs {
		users = append(users, e.Follower, e.Followee)
	}
	n, err := s.Existing(ctx, users)
	if err != nil {
		return 0, err
	}
	if n < len(users) {
		return n / 2, apierr.Errorf(apierr.NotFound, "no user with id %d", users[n])
	}
	return len(pairs), nil
}

// AddFollowing adds edges to their followers' following sets, atomically
// against the follow limit and blocks, each timed at at[i] (now where at
// is nil or at[i] zero), and returns the prefix that went in. At the
// first edge over the limit or across a block it takes the later edges of
// the batch back out and returns FOLLOW_LIMIT or FORBIDDEN.
func (s *Service) AddFollowing(ctx context.Context, edges []core.Edge, at []time.Time) ([]core.Edge, error) {
	return s.addFollowing(ctx, edges, at, false)
}

// addFollowing is AddFollowing, marking each new follow pending (at its
// time) when pending: its settle runs after the follow answers.
func (s *Service) addFollowing(ctx context.Context, edges []core.Edge, at []time.Time, pending bool) ([]core.Edge, error) {
	now := s.NowMS()
	keysArgs := func(i int) (keys, args []string) {
		e, ms := edges[i], now
		if i < len(at) && !at[i].IsZero() {
			ms = at[i].UnixMilli()
		}
		keys = []string{s.Keys.Following(e.Follower), s.Keys.Unfollowed(e.Follower), s.Keys.Blocks(e.Follower), s.Keys.BlockedBy(e.Follower),
			s.Keys.FollowingTimes(e.Follower)}
		if pending {
			keys = append(keys, s.Keys.PendingFollows(e.Follower))
		}
		return keys, []string{store.Member(e.Followee), store.Itoa(s.Opts.FollowLimit), store.ScoreArg(ms)}
	}
	var rs []rueidis.RedisResult
	if len(edges) == 1 { // a follow from the API: its commit
		keys, args := keysArgs(0)
		rs = []rueidis.RedisResult{s.Commit(ctx, core.FollowAdd, keys, args, core.FollowAdd.Cmd(s.Redis.B(), keys, args))}
	} else {
		cmds := make([]rueidis.Completed, len(edges))
		for i := range edges {
			keys, args := keysArgs(i)
			cmds[i] = core.FollowAdd.Cmd(s.Redis.B(), keys, args)
		}
		rs = s.DoMulti(ctx, cmds...)
	}
	for i, r := range rs {
		added, err := r.AsInt64()
		if err != nil {
			return nil, fmt.Errorf("add to following: %w", err)
		}
		if added < 0 {
			// Undo the later edges of this batch so it stops cleanly here.
			s.undoFollows(ctx, edges[i+1:], rs[i+1:])
			if added == -2 {
				return edges[:i], ErrBlocked()
			}
			return edges[:i], apierr.Errorf(apierr.FollowLimit, "user %d follows %d accounts, the most allowed; unfollow someone first", edges[i].Follower, s.Opts.FollowLimit)
		}
	}
	return edges, nil
}

func (s *Service) undoFollows(ctx context.Context, edges []core.Edge, rs []rueidis.RedisResult) {
	var cmds []rueidis.Completed
	for i, e := range edges {
		if n, _ := rs[i].AsInt64(); n == 1 {
			cmds = append(cmds, s.Redis.B().Zrem().Key(s.Keys.Following(e.Follower)).Member(store.Member(e.Followee)).Build(),
				s.Redis.B().Zrem().Key(s.Keys.FollowingTimes(e.Follower)).Member(store.Member(e.Followee)).Build())
		}
	}
	s.DoMulti(ctx, cmds...)
}

// AddFollows writes the followers side (with each follow's time: at[i],
// read from the following times by the settle's read of the record; the
// service's clock where it is 0 or at is nil), active sets, promotions
// and backfills of edges already in their following sets.
func (s *Service) AddFollows(ctx context.Context, edges []core.Edge, at []int64) error {
	const reads, per = 6, 8 // an edge's reads, and all its commands
	cmds := make([]rueidis.Completed, 0, per*len(edges))
	now := s.NowMS()
	for i, e := range edges {
		cmds = append(cmds,
			s.Redis.B().Zadd().Key(s.Keys.Followers(e.Followee)).ScoreMember().ScoreMember(0, store.Member(e.Follower)).Build(),
			s.Redis.B().Zcard().Key(s.Keys.Followers(e.Followee)).Build(),
			s.Redis.B().Get().Key(s.Keys.PushMode(e.Followee)).Build(),
			s.SeenCmd(e.Follower),
			s.Redis.B().Hget().Key(s.Keys.Reader(e.Follower)).Field("c").Build(),
			// After adding the follower, in its slot: an anchor marked
			// later lists this follower (anchors.go).
			s.AnchorMarkCmd(e.Followee))
		var ms int64
		if i < len(at) {
			ms = at[i]
		}
		cmds = append(cmds, s.FollowTimeCmds(e, ms, now)...)
	}
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs); err != nil {
		return err
	}
	// A reader with a complete inbox, or an active one about to get it, must
	// be in a big-V's active set before the backfill reads the outbox: a
	// post published in between is then either in the outbox we read or
	// pushed to us.
	var writes []rueidis.Completed
	promoted := map[store.ID]bool{}
	for i, e := range edges {
		r := rs[per*i : per*i+reads]
		followers, _ := r[1].AsInt64()
		// Read after adding the follower, in its slot: a promotion that
		// set the mode later lists this follower.
		mode, _ := r[2].ToString()
		bigV := mode != PushAll
		seen, seenErr := r[3].AsFloat64()
		complete, _ := r[4].ToString()
		// Pushes reach the follower from now on, even one dormant (its
		// dropped inbox is not read): a note left from an earlier follow,
		// by a sleep that raced its unfollow, must not keep them away
		// once it is back.
		writes = append(writes, s.Redis.B().Zrem().Key(s.Keys.Dormant(e.Followee)).Member(store.Member(e.Follower)).Build())
		if bigV {
			writes = append(writes, s.bigFolloweeAddCmd(e.Follower, e.Followee))
		}
		if anchor, _, _ := markedAnchor(r[5]); anchor {
			writes = append(writes, s.followedAnchorAddCmd(e.Follower, e.Followee))
		}
		if bigV && (complete == "1" || seenErr == nil && s.IsActive(int64(seen))) {
			writes = append(writes, s.Redis.B().Zadd().Key(s.Keys.Active(e.Followee)).ScoreMember().ScoreMember(0, store.Member(e.Follower)).Build())
		}
		if !bigV && followers > s.Opts.BigVThresholdNow() && !promoted[e.Followee] {
			promoted[e.Followee] = true
			writes = append(writes, s.EmitCmd(core.Event{Type: core.EvPromote, User: e.Followee}))
		}
	}
	if err := store.FirstErr(s.DoMulti(ctx, writes...)); err != nil {
		return err
	}
	return s.BackfillMany(ctx, edges)
}

// Existing returns how many of ids, from the first, name users.
func (s *Service) Existing(ctx context.Context, ids []store.ID) (int, error) {
	exists := func(id store.ID) rueidis.Completed { return s.Redis.B().Exists().Key(s.Keys.User(id)).Build() }
	for i, r := range s.DoMulti(ctx, store.CmdsFor(ids, exists)...) {
		n, err := r.AsInt64()
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return i, nil
		}
	}
	return len(ids), nil
}

// Recent unfollows a reader's pages hide: for unfollowMemory, the newest
// maxUnfollowNotes of them. The unfollow itself takes the author's posts out
// of the inbox within seconds; the note covers a fan-out that read the
// follower list just before and writes just after. Past a day such a
// straggler would show, which no fan-out takes that long to do.
const (
	UnfollowMemory   = 24 * time.Hour
	MaxUnfollowNotes = 1000
)

// Unfollow stops viewer following target and removes target's posts from
// viewer's inbox. Reads also hide the posts of accounts the viewer
// unfollowed within unfollowMemory (see unfollowCommit), so a fan-out
// racing with this never shows an unfollowed author. Journaled like
// FollowMany.
func (s *Service) Unfollow(ctx context.Context, viewer, target store.ID) (err error) {
	defer store.Wrap(&err, "user %d unfollows %d", viewer, target)
	if viewer == target {
		return apierr.Errorf(apierr.BadInput, "you cannot unfollow yourself")
	}
	if err := s.UsersExist(ctx, target); err != nil {
		return err
	}
	edges := []core.Edge{{Follower: viewer, Followee: target}}
	shard := s.ShardOf(viewer)
	jid, err := s.Begin(ctx, shard, "k", JEdges, "e", core.EncodeEdges(edges))
	if err != nil {
		return err
	}
	keys := []string{s.Keys.Following(viewer), s.Keys.BigFollowees(viewer), s.Keys.Unfollowed(viewer)}
	now := s.NowMS()
	args := []string{store.Member(target), store.ScoreArg(now), store.ScoreArg(now - UnfollowMemory.Milliseconds()), store.Itoa(MaxUnfollowNotes)}
	if err := s.Commit(ctx, core.UnfollowCommit, keys, args, core.UnfollowCommit.Cmd(s.Redis.B(), keys, args)).Error(); err != nil {
		return fmt.Errorf("remove from following: %w", err)
	}
	if err := s.SettleEdges(ctx, edges); err != nil {
		return fmt.Errorf("recorded, a worker finishes it: %w", err)
	}
	s.EndTelling(ctx, shard, jid, core.Notice{Kind: core.NoticeViews, Readers: []store.ID{viewer}})
	return nil
}

// removeFollows takes edges no longer in their following sets out of the
// followers and active sets, and the followees' posts out of the
// followers' inboxes.
func (s *Service) removeFollows(ctx context.Context, edges []core.Edge) error {
	cmds := make([]rueidis.Completed, 0, 7*len(edges))
	for _, e := range edges {
		cmds = append(cmds,
			s.Redis.B().Zrem().Key(s.Keys.Followers(e.Followee)).Member(store.Member(e.Follower)).Build(),
			s.Redis.B().Zrem().Key(s.Keys.Active(e.Followee)).Member(store.Member(e.Follower)).Build(),
			s.Redis.B().Zrem().Key(s.Keys.Dormant(e.Followee)).Member(store.Member(e.Follower)).Build(),
			s.Redis.B().Srem().Key(s.Keys.BigFollowees(e.Follower)).Member(store.Member(e.Followee)).Build(),
			s.Redis.B().Zrem().Key(s.Keys.FollowedAnchors(e.Follower)).Member(store.Member(e.Followee)).Build())
		cmds = append(cmds, s.unfollowTimeCmds(e)...)
	}
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return fmt.Errorf("remove followers: %w", err)
	}
	tls := s.Timelines()
	authors := make([]store.ID, len(edges))
	for i, e := range edges {
		authors[i] = e.Followee
	}
	recent, err := s.InboxableIDs(ctx, tls, authors)
	if err != nil {
		return err
	}
	var removes []rueidis.Completed
	for i, e := range edges {
		for j, tl := range tls {
			if ids := recent[i][j]; len(ids) > 0 {
				removes = append(removes, s.InboxRemoveCmd(tl, e.Follower, ids...))
			}
		}
	}
	return store.FirstErr(s.DoMulti(ctx, removes...))
}

// InboxableIDs reads the items of each author that may be in an inbox, for
// each timeline of tls (ids[author][timeline]): only an author's newest
// cap items can be in an inbox of cap entries. One round trip.
func (s *Service) InboxableIDs(ctx context.Context, tls []core.Timeline, authors []store.ID) ([][][]store.ID, error) {
	var reads []rueidis.Completed
	for _, a := range authors {
		for _, tl := range tls {
			reads = append(reads, s.newestCmd(tl.Outbox(a), s.Opts.InboxCap))
		}
	}
	rs := s.DoMulti(ctx, reads...)
	out := make([][][]store.ID, len(authors))
	for i := range authors {
		out[i] = make([][]store.ID, len(tls))
		for j := range tls {
			recent, err := core.ParseEntries(rs[i*len(tls)+j])
			if err != nil {
				return nil, fmt.Errorf("read outbox: %w", err)
			}
			ids := make([]store.ID, len(recent))
			for k, it := range recent {
				ids[k] = it.ID
			}
			out[i][j] = ids
		}
	}
	return out, nil
}

// BackfillMany copies each followee's newest items, up to the inbox cap,
// into its follower's inbox, for every kind of timeline. When a followee has
// more, the inbox horizon rises to the oldest copied one, so reads pull
// whatever lies below it. Two round trips for the whole batch.
func (s *Service) BackfillMany(ctx context.Context, edges []core.Edge) error {
	_, err := s.Backfill(ctx, s.Timelines(), edges)
	return err
}

// Backfill is BackfillMany over the timelines tls; it returns how many
// entries it copied.
//
// The edges of one follower are merged before anything is written: a
// reader upgraded with 30 big-V followees, or rebuilt with 300 followees,
// gets one write of at most the cap's newest entries, not a cap's worth of
// each followee for the inbox to trim again (on a new network's first run,
// those copies were most of what Redis did).
func (s *Service) Backfill(ctx context.Context, tls []core.Timeline, edges []core.Edge) (int, error) {
	return s.backfill(ctx, tls, edges, s.Opts.InboxCap, false)
}

// backfill is Backfill, reading at most per (at most the cap) of each
// followee's newest entries; reset rebuilds each follower's inbox from
// nothing (core.InboxAdd's ARGV[5]).
func (s *Service) backfill(ctx context.Context, tls []core.Timeline, edges []core.Edge, per int, reset bool) (int, error) {
	type source struct {
		tl     int
		author store.ID
	}
	at := map[source]int{}
	var reads []rueidis.Completed
	for t, tl := range tls {
		for _, e := range edges {
			src := source{tl: t, author: e.Followee}
			if _, ok := at[src]; !ok {
				at[src] = len(reads)
				reads = append(reads, s.newestCmd(tl.Outbox(e.Followee), per+1))
			}
		}
	}
	rs := s.DoMulti(ctx, reads...)
	var writes []rueidis.Completed
	n := 0
	for t, tl := range tls {
		fills := map[store.ID]*inboxFill{}
		var order []store.ID
		for _, e := range edges {
			recent, err := core.ParseEntries(rs[at[source{tl: t, author: e.Followee}]])
			if err != nil {
				return 0, err
			}
			f := fills[e.Follower]
			if f == nil {
				f = &inboxFill{}
				fills[e.Follower] = f
				order = append(order, e.Follower)
			}
			f.add(e.Followee, recent, per)
		}
		for _, r := range order {
			f := fills[r]
			f.settle(s.Opts.InboxCap)
			if len(f.items) == 0 && f.floor == nil && !reset {
				continue
			}
			n += len(f.items)
			writes = append(writes, s.inboxAddCmd(tl, r, f, reset))
		}
	}
	return n, store.FirstErr(s.DoMulti(ctx, writes...))
}

// inboxFill is what a backfill writes into one inbox: the newest entries
// of its followees, merged, and the floor below which the inbox is not
// complete (nil: complete all the way down).
type inboxFill struct {
	items   []store.Item
	authors []store.ID // authors[i] wrote items[i]
	floor   *store.Item
}

// add takes author's newest entries (up to per+1 of them, newest first):
// past per, the per-th is a floor the inbox must not claim below.
func (f *inboxFill) add(author store.ID, recent []store.Item, per int) {
	if len(recent) > per {
		recent = recent[:per]
		f.raise(recent[per-1])
	}
	for _, it := range recent {
		f.items = append(f.items, it)
		f.authors = append(f.authors, author)
	}
}

func (f *inboxFill) raise(it store.Item) {
	if f.floor == nil || it.Before(*f.floor) {
		f.floor = &it
	}
}

// settle orders the entries newest first and keeps those the inbox will
// hold: none below the floor, and at most cap (the cap-th becoming the
// floor when more were read).
func (f *inboxFill) settle(cap int) {
	idx := make([]int, len(f.items))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return f.items[idx[a]].Before(f.items[idx[b]]) })
	if len(idx) > cap {
		f.raise(f.items[idx[cap-1]])
		idx = idx[:cap]
	}
	items, authors := make([]store.Item, 0, len(idx)), make([]store.ID, 0, len(idx))
	for _, i := range idx {
		if f.floor != nil && f.floor.Before(f.items[i]) {
			break // below the floor, and so is everything after it
		}
		items, authors = append(items, f.items[i]), append(authors, f.authors[i])
	}
	f.items, f.authors = items, authors
}

// inboxAddCmd writes f into reader's inbox (core.InboxAdd), each author's
// entries unless that author is hidden from the reader.
func (s *Service) inboxAddCmd(tl core.Timeline, reader store.ID, f *inboxFill, reset bool) rueidis.Completed {
	byAuthor := map[store.ID][]store.Item{}
	var authors []store.ID
	for i, a := range f.authors {
		if _, ok := byAuthor[a]; !ok {
			authors = append(authors, a)
		}
		byAuthor[a] = append(byAuthor[a], f.items[i])
	}
	args := make([]string, 0, 4+2*len(authors)+2*len(f.items))
	args = append(args, store.Itoa(s.Opts.InboxCap))
	if f.floor != nil {
		args = append(args, store.ScoreArg(f.floor.TS), store.Member(f.floor.ID))
	} else {
		args = append(args, "", "")
	}
	rebuild := ""
	if reset {
		rebuild = "1"
	}
	args = append(args, store.ScoreArg(s.NowMS()), rebuild)
	for _, a := range authors {
		args = append(args, store.Member(a), store.Itoa(len(byAuthor[a])))
		for _, it := range byAuthor[a] {
			args = append(args, store.ScoreArg(it.TS), store.Member(it.ID))
		}
	}
	return core.InboxAdd.Cmd(s.Redis.B(), []string{tl.Inbox(reader), tl.Horizon(reader), s.Keys.HiddenAuthors(reader)}, args)
}

// Newest returns up to n newest entries of a timeline.
func (s *Service) Newest(ctx context.Context, key string, n int) ([]store.Item, error) {
	return core.ParseEntries(s.Do(ctx, s.newestCmd(key, n)))
}

func (s *Service) newestCmd(key string, n int) rueidis.Completed {
	return s.Redis.B().Zrange().Key(key).Min("+inf").Max("-inf").Byscore().Rev().Limit(0, int64(n)).Withscores().Build()
}

// FollowingIDs returns the ids viewer follows (hidden ones too; reads
// use visibleFollowees).
func (s *Service) FollowingIDs(ctx context.Context, viewer store.ID) ([]store.ID, error) {
	return idsOfReply(s.Redis.Do(ctx, s.Redis.B().Zrange().Key(s.Keys.Following(viewer)).Min("0").Max("-1").Build()))
}

// idsOfReply reads a reply of set or sorted-set members as ids.
func idsOfReply(r rueidis.RedisResult) ([]store.ID, error) {
	ms, err := r.AsStrSlice()
	if err != nil {
		return nil, err
	}
	return IdsOf(ms)
}

// IdsOf reads sorted-set members as ids.
func IdsOf(ms []string) ([]store.ID, error) { return store.ParseEach(ms, store.MemberID) }

// SettleEdges brings the followers side, active sets and inboxes of edges
// in line with the following sets, their record of truth (and the follow
// times kept beside them).
func (s *Service) SettleEdges(ctx context.Context, edges []core.Edge) error {
	var applied []bool
	for range core.MaxSettleRounds {
		truth, times, err := s.following(ctx, edges)
		if err != nil {
			return err
		}
		if applied != nil && slices.Equal(truth, applied) {
			return nil
		}
		var on, off []core.Edge
		var at []int64
		for i, e := range edges {
			if truth[i] {
				on, at = append(on, e), append(at, times[i])
			} else {
				off = append(off, e)
			}
		}
		if err := s.AddFollows(ctx, on, at); err != nil {
			return err
		}
		if err := s.removeFollows(ctx, off); err != nil {
			return err
		}
		applied = truth
	}
	return errors.New("settle follows: the following sets kept changing; the journal repair finishes it")
}

// following reports, for each edge, whether its follower follows its
// followee now, and since when (ms; 0 when no time is kept).
func (s *Service) following(ctx context.Context, edges []core.Edge) ([]bool, []int64, error) {
	cmds := make([]rueidis.Completed, 0, 2*len(edges))
	for _, e := range edges {
		m := store.Member(e.Followee)
		cmds = append(cmds, s.Redis.B().Zscore().Key(s.Keys.Following(e.Follower)).Member(m).Build(),
			s.Redis.B().Zscore().Key(s.Keys.FollowingTimes(e.Follower)).Member(m).Build())
	}
	rs := s.DoMulti(ctx, cmds...)
	out, at := make([]bool, len(edges)), make([]int64, len(edges))
	for i := range edges {
		var err error
		if out[i], err = store.IsMember(rs[2*i]); err == nil {
			at[i], err = core.ScoreOrZero(rs[2*i+1])
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read following: %w", err)
		}
	}
	return out, at, nil
}

// JEdges is the journal kind of follows and unfollows: field e, the
// follower:followee pairs, comma-separated.
const JEdges = "edges"

// FollowTimeCmds time the follow e at at ms (the clock's now when 0: a
// follow from before times were kept, whose time is then set once):
// always two writes, the followee's side and, if missing, the follower's.
func (s *Service) FollowTimeCmds(e core.Edge, at, now int64) []rueidis.Completed {
	if at == 0 {
		at = now
	}
	return []rueidis.Completed{
		s.Redis.B().Zadd().Key(s.Keys.FollowerTimes(e.Followee)).ScoreMember().ScoreMember(float64(at), store.Member(e.Follower)).Build(),
		s.Redis.B().Zadd().Key(s.Keys.FollowingTimes(e.Follower)).Nx().ScoreMember().ScoreMember(float64(at), store.Member(e.Followee)).Build(),
	}
}

// unfollowTimeCmds drop the times of the follow e, gone from the
// following set.
func (s *Service) unfollowTimeCmds(e core.Edge) []rueidis.Completed {
	return []rueidis.Completed{
		s.Redis.B().Zrem().Key(s.Keys.FollowerTimes(e.Followee)).Member(store.Member(e.Follower)).Build(),
		s.Redis.B().Zrem().Key(s.Keys.FollowingTimes(e.Follower)).Member(store.Member(e.Followee)).Build(),
	}
}

// ErrBlocked is what a follow, like or open across a block gets.
func ErrBlocked() error {
	return apierr.Errorf(apierr.Forbidden, "a block stands between you and this user")
}
