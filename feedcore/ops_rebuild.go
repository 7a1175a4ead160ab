package feedcore

import (
	"context"
	"fmt"
	"slices"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/lists"
	"github.com/feedd/feedd/feedcore/live"
	"github.com/feedd/feedd/feedcore/moderation"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/redis/rueidis"
)

// Rebuild recomputes every derived structure from the records (users,
// following sets, posts and their tombstones, live sessions, activity and
// readers' complete flags; suspensions, whose marks on posts and sessions
// it settles, and reports, which it indexes, first), in phases:
//
//   - follows: followers sets from the following sets;
//   - posts: outboxes from the posts (and reposts) that are not deleted;
//   - conversations: each parent's set of replies and each original's
//     set of reposts from the replies and reposts; a repost whose
//     original is deleted is taken back;
//   - conversation counts: each post's comments and reposts counters as
//     their imported bases plus its live replies and reposts;
//   - live: anchor queues and replay outboxes from the sessions;
//   - authors: stale followers, outbox, queue and replay entries out; big-V
//     status (sticky: a big-V stays one) and push mode for authors over the
//     threshold, their active sets built as promotion does and pruned of
//     readers neither active nor complete;
//   - relations: per user, every pair its relation records, mirrors and
//     derived sets name settled as a relation mutation does (safety_settle.go):
//     block mirrors, hidden authors, no-push sets, no follow across a block;
//   - filters: per user with keyword filters, expired ones pruned, ids
//     derived again from the keywords, a fresh version token where they
//     changed (safety_keyword.go);
//   - inboxes: per reader, entries of authors it does not follow or that
//     are hidden from it (and tombstones) out, then its own posts and its
//     pushed, shown followees' newest posts and replays in, with the
//     horizon, exactly as backfill does;
//   - follow times: both sides' times from the following sets and the
//     times kept beside them (list_follows.go);
//   - favorites, counters: each post's favoriters from the users'
//     records, then its likes and favorites counters as their imported
//     bases plus its likers and favoriters (list_favorites.go).
//
// It runs online: every write is idempotent and either adds what the
// records say belongs or removes what they say does not, so readers and a
// fan-out running meanwhile stay correct (an inbox horizon only ever rises,
// which costs a deeper merge, never an item). It is resumable: a checkpoint
// key records the phase and the last user, post or session done, and the
// next Rebuild continues after it unless o.Restart.
func (s *Service) Rebuild(ctx context.Context, o RebuildOptions) (st core.RebuildStats, err error) {
	defer store.Wrap(&err, "rebuild")
	core.SetDefault(&o.Batch, 100)
	// Unfinished account deletions, suspensions and takedowns first:
	// nothing of a deleted account (its posts, its follows), no post taken
	// down, may be rebuilt; then the marks of suspended accounts, and the
	// reports' index.
	if err := s.FinishJobs(ctx, moderation.JAccount, moderation.JSuspend, moderation.JTakedown); err != nil {
		return st, err
	}
	if err := s.SettleSuspensions(ctx, &st); err != nil {
		return st, err
	}
	if err := s.ReindexReports(ctx, &st); err != nil {
		return st, err
	}
	ck := s.Keys.Rebuild()
	if o.Restart {
		if err := s.Do(ctx, s.Redis.B().Del().Key(ck).Build()).Error(); err != nil {
			return st, err
		}
	}
	cur, err := s.Do(ctx, s.Redis.B().Hgetall().Key(ck).Build()).AsStrMap()
	if err != nil {
		return st, fmt.Errorf("read checkpoint: %w", err)
	}
	phase := slices.IndexFunc(rebuildPhases, func(p rebuildPhase) bool { return p.name == cur["phase"] })
	var last store.ID
	if phase < 0 {
		phase = 0
	} else {
		st.Resumed = true
		last, _ = store.ParseID(cur["last"])
	}
	scanned := map[string][]store.ID{} // the ids of each kind of record, listed once a run
	for ; phase < len(rebuildPhases); phase++ {
		p := rebuildPhases[phase]
		name := p.name
		keyOf := func(id store.ID) string { return p.records(s.Keys, id) }
		kind := store.TagHead(keyOf)
		ids, ok := scanned[kind]
		if !ok {
			if ids, err = s.recordIDs(ctx, keyOf); err != nil {
				return st, err
			}
			scanned[kind] = ids
		}
		i, _ := slices.BinarySearch(ids, last+1)
		if last == 0 {
			i = 0
		}
		for ; i < len(ids); i += o.Batch {
			if err := ctx.Err(); err != nil {
				return st, err
			}
			chunk := ids[i:min(i+o.Batch, len(ids))]
			if err := p.run(s, ctx, chunk, &st); err != nil {
				return st, fmt.Errorf("%s phase: %w", name, err)
			}
			if err := s.Do(ctx, s.Redis.B().Hset().Key(ck).FieldValue().FieldValue("phase", name).
				FieldValue("last", store.FormatID(chunk[len(chunk)-1])).Build()).Error(); err != nil {
				return st, fmt.Errorf("write checkpoint: %w", err)
			}
			if o.Progress != nil {
				o.Progress(RebuildProgress{Phase: name, Done: i + len(chunk), Total: len(ids), Stats: st})
			}
		}
		last = 0
		if phase+1 < len(rebuildPhases) {
			if err := s.Do(ctx, s.Redis.B().Hset().Key(ck).FieldValue().FieldValue("phase", rebuildPhases[phase+1].name).
				FieldValue("last", "0").Build()).Error(); err != nil {
				return st, fmt.Errorf("write checkpoint: %w", err)
			}
		}
	}
	return st, s.Do(ctx, s.Redis.B().Del().Key(ck).Build()).Error()
}

// RebuildOptions tune Rebuild.
type RebuildOptions struct {
	// Progress, when set, is called after each batch.
	Progress func(RebuildProgress)
	// Batch is how many users, posts or sessions one round covers
	// (default 100); the checkpoint is written after each.
	Batch int
	// Restart ignores a checkpoint left by an earlier, unfinished run.
	Restart bool
}

// RebuildProgress is where a Rebuild stands.
type RebuildProgress struct {
	Phase       string // follows, posts, conversations, conversation counts, live, authors, relations, filters, inboxes, follow times, favorites or counters
	Done, Total int    // ids of the phase done (resumed ones included) and in all
	Stats       core.RebuildStats
}

// rebuildPhase is one pass of Rebuild: run over every record of one kind
// (users, posts or live sessions: the keys records names), a chunk at a
// time.
type rebuildPhase struct {
	name    string
	records func(store.Keys, store.ID) string
	run     func(s *Service, ctx context.Context, ids []store.ID, st *core.RebuildStats) error
}

var rebuildPhases = []rebuildPhase{
	{"follows", store.Keys.User, (*Service).rebuildFollowers},
	{"posts", store.Keys.Post, (*Service).rebuildOutboxes},
	{"conversations", store.Keys.Post, (*Service).rebuildConversations},
	{"conversation counts", store.Keys.Post, (*Service).recountConversations},
	{"live", store.Keys.Live, (*Service).rebuildLive},
	{"authors", store.Keys.User, (*Service).rebuildAuthors},
	{"relations", store.Keys.User, (*Service).RebuildRelations},
	{"filters", store.Keys.KeywordFilters, (*Service).RebuildKeywordFilters},
	{"inboxes", store.Keys.User, (*Service).rebuildInboxes},
	{"follow times", store.Keys.User, (*Service).RebuildFollowTimes},
	{"favorites", store.Keys.User, (*Service).RebuildFavorites},
	{"counters", store.Keys.Post, (*Service).RebuildCounters},
}

// recordIDs lists the ids of every key keyOf names, sorted, from every
// master.
func (s *Service) recordIDs(ctx context.Context, keyOf func(store.ID) string) ([]store.ID, error) {
	var ids []store.ID
	err := s.ScanIDs(ctx, keyOf, func(batch []store.ID) error { ids = append(ids, batch...); return nil })
	if err != nil {
		return nil, fmt.Errorf("list the records %s*}: %w", store.TagHead(keyOf), err)
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}

func (s *Service) rebuildFollowers(ctx context.Context, users []store.ID, st *core.RebuildStats) error {
	fgs, err := s.AllOf(ctx, s.Keys.Following, users)
	if err != nil {
		return err
	}
	var cmds []rueidis.Completed
	for i, u := range users {
		for _, m := range fgs[i] {
			f, err := store.MemberID(m)
			if err != nil {
				return err
			}
			cmds = append(cmds, s.Redis.B().Zadd().Key(s.Keys.Followers(f)).ScoreMember().ScoreMember(0, store.Member(u)).Build())
		}
	}
	st.Follows += int64(len(cmds))
	return store.FirstErr(s.DoMulti(ctx, cmds...))
}

func (s *Service) rebuildOutboxes(ctx context.Context, posts []store.ID, st *core.RebuildStats) error {
	authors, ts, deleted, err := s.ReadPostFields(ctx, posts)
	if err != nil {
		return err
	}
	var cmds []rueidis.Completed
	for i, id := range posts {
		switch {
		case authors[i] == 0:
		case deleted[i]:
			cmds = append(cmds, s.Redis.B().Zrem().Key(s.Keys.Outbox(authors[i])).Member(store.Member(id)).Build())
		default:
			cmds = append(cmds, s.Redis.B().Zadd().Key(s.Keys.Outbox(authors[i])).ScoreMember().ScoreMember(float64(ts[i]), store.Member(id)).Build())
			st.Posts++
		}
	}
	return store.FirstErr(s.DoMulti(ctx, cmds...))
}

// rebuildConversations files each reply among posts in its parent's
// replies and each repost in its original's reposts (or takes them out,
// deleted), as materializing and deleting them do. A live repost of a
// deleted original is taken back, as the workers do. The counters are
// recounted after (recountConversations).
func (s *Service) rebuildConversations(ctx context.Context, posts []store.ID, st *core.RebuildStats) error {
	ps, err := s.Posts(ctx, posts)
	if err != nil {
		return err
	}
	var cmds []rueidis.Completed
	var recs []*content.Post
	for _, p := range ps {
		switch {
		case p == nil || p.Author == 0:
		case p.IsRepost() && p.Deleted:
			cmds = append(cmds, lists.RepostDrop.Cmd(s.Redis.B(), []string{s.Keys.Reposts(p.RepostOf), s.Keys.PostCounts(p.RepostOf)},
				[]string{store.Member(p.Author), store.Member(p.ID)}))
		case p.IsRepost():
			recs = append(recs, p)
		case p.ReplyTo != 0 && p.Deleted:
			cmds = append(cmds, s.ReplyDropCmd(p))
		case p.ReplyTo != 0:
			cmds = append(cmds, s.ReplyAddCmd(p))
			st.Replies++
		}
	}
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return err
	}
	states, err := s.MaterializeReposts(ctx, recs)
	for _, state := range states {
		if state == lists.RepostLive {
			st.Reposts++
		}
	}
	return err
}

// recountConversations recounts the comments and reposts of posts (of
// every post that has counters, replies or reposts).
func (s *Service) recountConversations(ctx context.Context, posts []store.ID, st *core.RebuildStats) error {
	return store.FirstErr(s.DoMulti(ctx, store.CmdsFor(posts, s.RecountCmd)...))
}

// rebuildLive files each session where its state belongs, as settling a
// live mutation does, but without queueing a replay fan-out: the inboxes
// phase fills the replay inboxes.
func (s *Service) rebuildLive(ctx context.Context, ids []store.ID, st *core.RebuildStats) error {
	ls, err := s.LiveSessions(ctx, ids)
	if err != nil {
		return err
	}
	// Every account with a session is an anchor (MarkAnchor's mark; the
	// inboxes phase settles the followed anchors from the marks).
	var marks []rueidis.Completed
	for _, l := range ls {
		if l != nil {
			marks = append(marks, s.Redis.B().Set().Key(s.Keys.AnchorMark(l.Anchor)).Value("1").Build())
		}
	}
	if err := store.FirstErr(s.DoMulti(ctx, marks...)); err != nil {
		return fmt.Errorf("mark anchors: %w", err)
	}
	for _, l := range ls {
		switch {
		case l == nil:
			continue
		case l.Cancelled():
			err = s.Dequeue(ctx, l.Anchor, l.ID)
		case l.State() == core.StateReplay:
			if err = s.Dequeue(ctx, l.Anchor, l.ID); err == nil {
				err = s.Do(ctx, s.Redis.B().Zadd().Key(s.Keys.ReplayOutbox(l.Anchor)).ScoreMember().
					ScoreMember(float64(l.EndedAt.UnixMilli()), store.Member(l.ID)).Build()).Error()
			}
		default:
			err = s.Enqueue(ctx, l.Anchor, store.Item{TS: live.QueueScore(l), ID: l.ID})
		}
		if err != nil {
			return err
		}
		st.Sessions++
	}
	return nil
}

// rebuildAuthors takes out stale author-side entries and settles big-V
// status and active sets.
func (s *Service) rebuildAuthors(ctx context.Context, users []store.ID, st *core.RebuildStats) error {
	for _, u := range users {
		if err := s.pruneFollowers(ctx, u, st); err != nil {
			return err
		}
		if err := s.pruneOutbox(ctx, u, st); err != nil {
			return err
		}
		if err := s.pruneLive(ctx, u, st); err != nil {
			return err
		}
		if err := s.settleBigV(ctx, u, st); err != nil {
			return err
		}
		st.Authors++
	}
	return nil
}

func (s *Service) pruneFollowers(ctx context.Context, u store.ID, st *core.RebuildStats) error {
	fr, err := s.AllOf(ctx, s.Keys.Followers, []store.ID{u})
	if err != nil || len(fr[0]) == 0 {
		return err
	}
	follows := func(m string) rueidis.Completed {
		f, _ := store.MemberID(m)
		return s.Redis.B().Zscore().Key(s.Keys.Following(f)).Member(store.Member(u)).Build()
	}
	still, err := store.ParseEach(s.DoMulti(ctx, store.CmdsFor(fr[0], follows)...), store.IsMember)
	if err != nil {
		return err
	}
	stale := make([]bool, len(still))
	for i, ok := range still {
		stale[i] = !ok
	}
	return s.removeStale(ctx, s.Keys.Followers(u), fr[0], stale, st)
}

func (s *Service) removeStale(ctx context.Context, key string, ms []string, stale []bool, st *core.RebuildStats) error {
	cmd, n := s.ZremWhere(key, ms, stale)
	if n == 0 {
		return nil
	}
	st.Removed += int64(n)
	return s.Do(ctx, cmd).Error()
}

// pruneOutbox removes tombstones and other authors' posts from u's outbox.
// An entry whose post hash does not exist yet is left: a publish writes
// them in either order, and reads skip it.
func (s *Service) pruneOutbox(ctx context.Context, u store.ID, st *core.RebuildStats) error {
	ob, err := s.AllOf(ctx, s.Keys.Outbox, []store.ID{u})
	if err != nil || len(ob[0]) == 0 {
		return err
	}
	ids, err := timeline.IdsOf(ob[0])
	if err != nil {
		return err
	}
	authors, _, deleted, err := s.ReadPostFields(ctx, ids)
	if err != nil {
		return err
	}
	stale := make([]bool, len(ids))
	for i := range ids {
		stale[i] = authors[i] != 0 && (deleted[i] || authors[i] != u)
	}
	return s.removeStale(ctx, s.Keys.Outbox(u), ob[0], stale, st)
}

// pruneLive removes from u's queue and replay outbox the sessions whose
// hash no longer puts them there. (The queues need no index: readers find
// them by live shard.)
func (s *Service) pruneLive(ctx context.Context, u store.ID, st *core.RebuildStats) error {
	sets, err := s.AllOf(ctx, func(id store.ID) string { return s.Keys.LiveQueue(id) }, []store.ID{u})
	if err != nil {
		return err
	}
	ros, err := s.AllOf(ctx, s.Keys.ReplayOutbox, []store.ID{u})
	if err != nil {
		return err
	}
	for _, q := range []struct {
		key    string
		ms     []string
		replay bool
	}{{s.Keys.LiveQueue(u), sets[0], false}, {s.Keys.ReplayOutbox(u), ros[0], true}} {
		if len(q.ms) == 0 {
			continue
		}
		ids, err := timeline.IdsOf(q.ms)
		if err != nil {
			return err
		}
		ls, err := s.LiveSessions(ctx, ids)
		if err != nil {
			return err
		}
		stale := make([]bool, len(ids))
		for i, l := range ls {
			stale[i] = l == nil || l.Anchor != u || l.Cancelled() || (l.State() == core.StateReplay) != q.replay
		}
		if err := s.removeStale(ctx, q.key, q.ms, stale, st); err != nil {
			return err
		}
	}
	return nil
}

// settleBigV promotes u if it is (or was) a big-V or is over the
// threshold now, then takes out of its active set the readers that are no
// longer followers, or neither active nor complete (under the reader's
// lock, as demotion does; a reader being upgraded or demoted is left to
// that).
func (s *Service) settleBigV(ctx context.Context, u store.ID, st *core.RebuildStats) error {
	rs := s.DoMulti(ctx,
		s.Redis.B().Zcard().Key(s.Keys.Followers(u)).Build(),
		s.Redis.B().Get().Key(s.Keys.PushMode(u)).Build())
	n, err := rs[0].AsInt64()
	if err != nil {
		return err
	}
	mode, _ := rs[1].ToString()
	if mode == timeline.PushAll && n <= s.Opts.BigVThresholdNow() {
		return nil
	}
	if err := s.Promote(ctx, u); err != nil {
		return err
	}
	st.BigV++
	ac, err := s.AllOf(ctx, s.Keys.Active, []store.ID{u})
	if err != nil {
		return err
	}
	for _, m := range ac[0] {
		reader, err := store.MemberID(m)
		if err != nil {
			return err
		}
		if _, err := s.WithLock(ctx, reader, func(ctx context.Context) error {
			rs := s.DoMulti(ctx,
				s.Redis.B().Zscore().Key(s.Keys.Followers(u)).Member(m).Build(),
				s.SeenCmd(reader),
				s.Redis.B().Hget().Key(s.Keys.Reader(reader)).Field("c").Build())
			_, notFollower := rs[0].AsFloat64()
			seen, seenErr := rs[1].AsFloat64()
			complete, _ := rs[2].ToString()
			if notFollower == nil && (complete == "1" || seenErr == nil && s.IsActive(int64(seen))) {
				return nil
			}
			st.Removed++
			return s.Do(ctx, s.Redis.B().Zrem().Key(s.Keys.Active(u)).Member(m).Build()).Error()
		}); err != nil {
			return err
		}
	}
	return nil
}

// rebuildInboxes refills readers' inboxes (posts and replays) with what
// fan-out and backfill would have left there, after taking out entries of
// authors a reader does not follow and tombstones.
func (s *Service) rebuildInboxes(ctx context.Context, readers []store.ID, st *core.RebuildStats) error {
	readers, err := s.Awake(ctx, readers)
	if err != nil {
		return err
	}
	fgs, err := s.AllOf(ctx, s.Keys.Following, readers)
	if err != nil {
		return err
	}
	follows := make([][]store.ID, len(readers))
	for i := range readers {
		if follows[i], err = timeline.IdsOf(fgs[i]); err != nil {
			return err
		}
	}
	big, err := s.followeesMarked(ctx, follows, s.Keys.PushMode, func(mode string) bool { return mode != timeline.PushAll })
	if err != nil {
		return err
	}
	if err := s.pruneBigFollowees(ctx, readers, follows, big, st); err != nil {
		return err
	}
	anchors, err := s.followeesMarked(ctx, follows, s.Keys.AnchorMark, func(mark string) bool { return mark != "" })
	if err != nil {
		return err
	}
	if err := s.settleFollowedAnchors(ctx, readers, follows, anchors, st); err != nil {
		return err
	}
	// Hidden followees stay followed (and in the big-V followees), but
	// their posts leave the inbox and are not copied back.
	if err := s.DropHidden(ctx, readers, follows); err != nil {
		return err
	}
	// Which big-V followees push to each reader: those whose active set
	// holds it.
	type pair struct{ r, f store.ID }
	var asks []pair
	var cmds []rueidis.Completed
	for i, r := range readers {
		for _, f := range follows[i] {
			if big[f] {
				asks = append(asks, pair{r, f})
				cmds = append(cmds, s.Redis.B().Zscore().Key(s.Keys.Active(f)).Member(store.Member(r)).Build())
			}
		}
	}
	pushed, err := store.ParseEach(s.DoMulti(ctx, cmds...), store.IsMember)
	if err != nil {
		return err
	}
	pushedBig := make(map[pair]bool, len(asks))
	for i, ok := range pushed {
		pushedBig[asks[i]] = ok
	}
	var posts, replays []Edge
	for i, r := range readers {
		if err := s.pruneInbox(ctx, r, follows[i], st); err != nil {
			return err
		}
		posts = append(posts, Edge{Follower: r, Followee: r}) // read-your-writes
		for _, f := range follows[i] {
			if !big[f] || pushedBig[pair{r, f}] {
				posts = append(posts, Edge{Follower: r, Followee: f})
				replays = append(replays, Edge{Follower: r, Followee: f})
			}
		}
	}
	n1, err := s.Backfill(ctx, []core.Timeline{s.PostsTL()}, posts)
	if err != nil {
		return err
	}
	n2, err := s.Backfill(ctx, []core.Timeline{s.ReplaysTL()}, replays)
	if err != nil {
		return err
	}
	st.Readers += int64(len(readers))
	st.InboxEntries += int64(n1 + n2)
	return nil
}

// followeesMarked tells which of the followees listed are marked: is of
// the string at key (the push mode, for big-V status; the anchor mark),
// "" where there is none.
func (s *Service) followeesMarked(ctx context.Context, follows [][]store.ID, key func(store.ID) string, is func(string) bool) (map[store.ID]bool, error) {
	var ids []store.ID
	seen := map[store.ID]bool{}
	for _, fs := range follows {
		for _, f := range fs {
			if !seen[f] {
				seen[f] = true
				ids = append(ids, f)
			}
		}
	}
	get := func(f store.ID) rueidis.Completed { return s.Redis.B().Get().Key(key(f)).Build() }
	marked := make(map[store.ID]bool, len(ids))
	for i, r := range s.DoMulti(ctx, store.CmdsFor(ids, get)...) {
		v, err := r.ToString()
		if err != nil && !rueidis.IsRedisNil(err) {
			return nil, err
		}
		marked[ids[i]] = is(v)
	}
	return marked, nil
}

// settleFollowedAnchors makes each reader's followed anchors the anchors
// among its follows: the missing ones added (an account marked while its
// followers were not all noted), the others taken out.
func (s *Service) settleFollowedAnchors(ctx context.Context, readers []store.ID, follows [][]store.ID, anchor map[store.ID]bool, st *core.RebuildStats) error {
	fa := func(r store.ID) rueidis.Completed {
		return s.Redis.B().Zrange().Key(s.Keys.FollowedAnchors(r)).Min("0").Max("-1").Build()
	}
	rs := s.DoMulti(ctx, store.CmdsFor(readers, fa)...)
	var writes []rueidis.Completed
	for i, r := range readers {
		have, err := rs[i].AsStrSlice()
		if err != nil {
			return err
		}
		had := make(map[string]bool, len(have))
		for _, m := range have {
			had[m] = true
		}
		keep := map[string]bool{}
		add := s.Redis.B().Zadd().Key(s.Keys.FollowedAnchors(r)).ScoreMember()
		adds := 0
		for _, f := range follows[i] {
			if anchor[f] {
				keep[store.Member(f)] = true
				if !had[store.Member(f)] {
					add, adds = add.ScoreMember(0, store.Member(f)), adds+1
				}
			}
		}
		if adds > 0 {
			writes = append(writes, add.Build())
		}
		if stale := staleMembers(have, keep); len(stale) > 0 {
			st.Removed += int64(len(stale))
			writes = append(writes, s.Redis.B().Zrem().Key(s.Keys.FollowedAnchors(r)).Member(stale...).Build())
		}
	}
	return store.FirstErr(s.DoMulti(ctx, writes...))
}

// pruneBigFollowees removes from each reader's set of big-V followees the
// accounts it does not follow or that are not big-V. Adding the missing
// ones is the authors phase's: promoting a big-V notes it in every
// follower's set.
func (s *Service) pruneBigFollowees(ctx context.Context, readers []store.ID, follows [][]store.ID, big map[store.ID]bool, st *core.RebuildStats) error {
	bf := func(r store.ID) rueidis.Completed { return s.Redis.B().Smembers().Key(s.Keys.BigFollowees(r)).Build() }
	rs := s.DoMulti(ctx, store.CmdsFor(readers, bf)...)
	var writes []rueidis.Completed
	for i, r := range readers {
		have, err := rs[i].AsStrSlice()
		if err != nil {
			return err
		}
		keep := map[string]bool{}
		for _, f := range follows[i] {
			keep[store.Member(f)] = big[f]
		}
		if stale := staleMembers(have, keep); len(stale) > 0 {
			st.Removed += int64(len(stale))
			writes = append(writes, s.Redis.B().Srem().Key(s.Keys.BigFollowees(r)).Member(stale...).Build())
		}
	}
	return store.FirstErr(s.DoMulti(ctx, writes...))
}

// staleMembers are the members of have that keep does not keep.
func staleMembers(have []string, keep map[string]bool) []string {
	var stale []string
	for _, m := range have {
		if !keep[m] {
			stale = append(stale, m)
		}
	}
	return stale
}

// pruneInbox removes from r's inboxes the posts and replays of authors r
// neither is nor follows, and tombstones, keeping the horizon. Entries of
// followees that do not push to r are left: reads merge and deduplicate.
func (s *Service) pruneInbox(ctx context.Context, r store.ID, follows []store.ID, st *core.RebuildStats) error {
	ok := map[store.ID]bool{r: true}
	for _, f := range follows {
		ok[f] = true
	}
	in, err := s.AllOf(ctx, s.Keys.Inbox, []store.ID{r})
	if err != nil {
		return err
	}
	if ids, err := timeline.IdsOf(in[0]); err != nil {
		return err
	} else if len(ids) > 0 {
		authors, _, deleted, err := s.ReadPostFields(ctx, ids)
		if err != nil {
			return err
		}
		var drop []store.ID
		for i, id := range ids {
			if authors[i] != 0 && (deleted[i] || !ok[authors[i]]) {
				drop = append(drop, id)
			}
		}
		if len(drop) > 0 {
			st.Removed += int64(len(drop))
			if err := s.Do(ctx, s.InboxRemoveCmd(s.PostsTL(), r, drop...)).Error(); err != nil {
				return err
			}
		}
	}
	delete(ok, r)
	ri, err := s.AllOf(ctx, s.Keys.ReplayInbox, []store.ID{r})
	if err != nil {
		return err
	}
	ids, err := timeline.IdsOf(ri[0])
	if err != nil || len(ids) == 0 {
		return err
	}
	ls, err := s.LiveSessions(ctx, ids)
	if err != nil {
		return err
	}
	var drop []store.ID
	for i, l := range ls {
		if l != nil && (!ok[l.Anchor] || l.Cancelled() || l.State() != core.StateReplay) {
			drop = append(drop, ids[i])
		}
	}
	if len(drop) == 0 {
		return nil
	}
	st.Removed += int64(len(drop))
	return s.Do(ctx, s.InboxRemoveCmd(s.ReplaysTL(), r, drop...)).Error()
}
