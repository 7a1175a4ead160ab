package feedcore

import (
	"context"
	"fmt"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/lists"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// ExportBatch is how many keys Export reads in one pipelined round trip
// when ExportSink.Batch is 0.
const ExportBatch = 256

// Export reads every record of the store, kind after kind, in an order an
// import can apply: deleted and suspended accounts, users, follow edges
// (with their times), relations (blocks, mutes, hides: after the follows,
// which they may remove, and before the posts, whose fan-out they steer),
// keyword filters, posts (and the tombstones of posts taken down; replies
// with the post and author they answer, so a reply may come before its
// parent), reposts (after every post), live sessions, likes, favorites,
// counters, reports, the audit trail. Derived structures (inboxes, outboxes, active and big-V sets,
// replay timelines, snapshots, streams) are not records: an import
// rebuilds them. A deleted post is invisible everywhere, so neither it nor
// its likes and counters are exported (a post taken down is, as a
// takedown: its tombstone keeps its id taken and its text for appeals).
//
// A post published while Export runs may be missed by the posts pass and
// met by the likes or counters pass: every post published since a little
// before the posts pass began (exportRecent) is written again before its
// likes and counters, so every like and counts line follows its post
// (import takes the repeat as the same post). Users are created by imports
// only, so a follow, post or session never names a user created since the
// users pass, unless an import runs during the export.
//
// It walks the keys with SCAN (every master of a cluster) and reads them
// in pipelined batches, so memory stays bounded whatever the store's size.
// It is not a point-in-time snapshot: a record written while it runs may
// or may not be in it, and a key SCAN meets twice is exported twice (an
// import applies it twice, harmlessly). Each record is read whole, in one
// command, so each is consistent.
func (s *Service) Export(ctx context.Context, sink ExportSink) (err error) {
	defer store.Wrap(&err, "export")
	core.SetDefault(&sink.Batch, ExportBatch)
	if sink.Deleted != nil {
		// First: an import records them (holding their handles) before
		// anything else.
		if err := s.DeletedAccounts(ctx, func(ds []DeletedAccount) error { return each(ds, sink.Deleted) }); err != nil {
			return err
		}
	}
	if sink.Suspended != nil {
		if err := s.Suspensions(ctx, func(ss []Suspension) error { return each(ss, sink.Suspended) }); err != nil {
			return err
		}
	}
	phases := []struct {
		keyOf func(store.ID) string // the records' keys
		posts bool                  // the posts pass: later passes write again what it may have missed
		read  func(context.Context, []store.ID, ExportSink) error
	}{
		{keyOf: s.Keys.User, read: s.exportUsers},
		{keyOf: s.Keys.Following, read: s.exportFollowTimes},
		{keyOf: s.Keys.Blocks, read: s.ExportRelations(RelationBlock)},
		{keyOf: s.Keys.Mutes, read: s.ExportRelations(RelationMute)},
		{keyOf: s.Keys.Hides, read: s.ExportRelations(RelationHide)},
		{keyOf: s.Keys.KeywordFilters, read: s.ExportKeywordFilters},
		{keyOf: s.Keys.Post, posts: true, read: s.exportPosts},
		{keyOf: s.Keys.Post, read: s.exportReposts},
		{keyOf: s.Keys.Live, read: s.exportLives},
		{keyOf: s.Keys.Likers, read: s.exportLikes},
		{keyOf: s.Keys.Favorites, read: s.ExportFavorites},
		{keyOf: s.Keys.PostCounts, read: s.exportCounts},
	}
	for _, ph := range phases {
		if ph.posts {
			sink.Recent = s.Opts.Now().Add(-lists.ExportRecent)
		}
		err := s.ScanIDs(ctx, ph.keyOf, func(ids []store.ID) error {
			for len(ids) > 0 {
				n := min(len(ids), sink.Batch)
				if err := ph.read(ctx, ids[:n], sink); err != nil {
					return err
				}
				ids = ids[n:]
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	if sink.Report != nil {
		if err := s.Reports(ctx, Since{}, func(rs []Report) error { return each(rs, sink.Report) }); err != nil {
			return err
		}
	}
	if sink.Audit != nil {
		return s.AuditLog(ctx, Since{}, func(es []AuditEntry) error { return each(es, sink.Audit) })
	}
	return nil
}

// each calls fn with the items in order, stopping at its first error.
func each[T any](items []T, fn func(T) error) error {
	for _, it := range items {
		if err := fn(it); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) exportUsers(ctx context.Context, ids []store.ID, sink ExportSink) error {
	hgetall := func(id store.ID) rueidis.Completed { return s.Redis.B().Hgetall().Key(s.Keys.User(id)).Build() }
	for i, r := range s.DoMulti(ctx, store.CmdsFor(ids, hgetall)...) {
		m, err := r.AsStrMap()
		if err != nil {
			return err
		}
		if m["h"] == "" {
			continue // deleted meanwhile, or not a profile
		}
		if err := sink.User(User{ID: ids[i], Handle: m["h"], DisplayName: m["n"], AvatarURL: m["a"]}); err != nil {
			return err
		}
	}
	return nil
}

// exportFollowTimes reads each user's following set by index, in member
// (id) order, exportChunk members a call, with the time of each follow
// (zero for one made before times were kept): the first chunk of every
// set in one round trip and their times in one more, the rest of a
// longer set after.
func (s *Service) exportFollowTimes(ctx context.Context, ids []store.ID, sink ExportSink) error {
	rangeCmd := func(id store.ID, from int64) rueidis.Completed {
		return s.Redis.B().Zrange().Key(s.Keys.Following(id)).Min(core.Itoa64(from)).Max(core.Itoa64(from + core.ExportChunk - 1)).Build()
	}
	chunks, err := store.ParseEach(s.DoMulti(ctx, store.CmdsFor(ids, func(id store.ID) rueidis.Completed { return rangeCmd(id, 0) })...),
		rueidis.RedisResult.AsStrSlice)
	if err != nil {
		return err
	}
	times := s.followTimesOf(ctx, ids, chunks)
	for i, id := range ids {
		for from := int64(0); ; {
			if err := s.exportFollowChunk(id, chunks[i], times[i], sink); err != nil {
				return err
			}
			if len(chunks[i]) < core.ExportChunk {
				break
			}
			from += core.ExportChunk
			ms, err := s.Do(ctx, rangeCmd(id, from)).AsStrSlice()
			if err != nil {
				return err
			}
			chunks[i], times[i] = ms, s.followTimesOf(ctx, []store.ID{id}, [][]string{ms})[0]
		}
	}
	return nil
}

// followTimesOf reads, in one round trip, the times of the follows of
// each user ids[i] whose followees' members are chunks[i]: the replies.
func (s *Service) followTimesOf(ctx context.Context, ids []store.ID, chunks [][]string) []rueidis.RedisResult {
	out := make([]rueidis.RedisResult, len(ids))
	var cmds []rueidis.Completed
	var at []int
	for i, id := range ids {
		if len(chunks[i]) > 0 {
			cmds = append(cmds, s.Redis.B().Zmscore().Key(s.Keys.FollowingTimes(id)).Member(chunks[i]...).Build())
			at = append(at, i)
		}
	}
	for j, r := range s.DoMulti(ctx, cmds...) {
		out[at[j]] = r
	}
	return out
}

// exportFollowChunk writes the follows of user to the followees ms, with
// the times in times (followTimesOf's reply).
func (s *Service) exportFollowChunk(user store.ID, ms []string, times rueidis.RedisResult, sink ExportSink) error {
	if len(ms) == 0 {
		return nil
	}
	scores, err := times.ToArray()
	if err != nil {
		return fmt.Errorf("read follow times: %w", err)
	}
	for j, m := range ms {
		v, err := store.MemberID(m)
		if err != nil {
			continue
		}
		var at time.Time
		if j < len(scores) && !scores[j].IsNil() {
			if t, err := core.ScoreOf(scores[j]); err == nil {
				at = time.UnixMilli(t).UTC()
			}
		}
		if err := sink.Follow(Edge{Follower: user, Followee: v}, at); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) exportPosts(ctx context.Context, ids []store.ID, sink ExportSink) error {
	ps, err := s.Posts(ctx, ids)
	if err != nil {
		return err
	}
	for _, p := range ps {
		switch {
		case p != nil && p.IsRepost(): // the reposts pass writes it
		case lists.Exportable(p):
			err = sink.Post(p)
		case p != nil && p.Deleted && !p.TakenDown.IsZero() && sink.Takedown != nil:
			err = sink.Takedown(p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// exportReposts writes the live reposts among the records ids whose
// original is live, each after its original when the original is recent
// (it may have been published after the posts pass went by).
func (s *Service) exportReposts(ctx context.Context, ids []store.ID, sink ExportSink) error {
	ps, err := s.Posts(ctx, ids)
	if err != nil {
		return err
	}
	var recs []*content.Post
	for _, p := range ps {
		if lists.Exportable(p) && p.IsRepost() {
			recs = append(recs, p)
		}
	}
	origs, err := s.LivePosts(ctx, store.CmdsFor(recs, func(r *content.Post) store.ID { return r.RepostOf }), sink)
	if err != nil {
		return err
	}
	for i, r := range recs {
		if origs[i] == nil {
			continue // its original deleted: the workers take it back
		}
		if err := sink.Repost(r); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) exportLives(ctx context.Context, ids []store.ID, sink ExportSink) error {
	ls, err := s.LiveSessions(ctx, ids)
	if err != nil {
		return err
	}
	for _, l := range ls {
		if l == nil || l.Anchor == 0 || (l.ScheduledStartAt == nil && l.StartedAt == nil) {
			continue // gone meanwhile, or not a session
		}
		if err := sink.Live(l); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) exportLikes(ctx context.Context, ids []store.ID, sink ExportSink) error {
	ps, err := s.LivePosts(ctx, ids, sink)
	if err != nil {
		return err
	}
	sscan := func(id store.ID, cursor uint64) rueidis.Completed {
		return s.Redis.B().Sscan().Key(s.Keys.Likers(id)).Cursor(cursor).Count(core.ExportChunk).Build()
	}
	var cmds []rueidis.Completed
	var posts []store.ID
	for i, id := range ids {
		if ps[i] != nil {
			cmds = append(cmds, sscan(id, 0))
			posts = append(posts, id)
		}
	}
	for i, r := range s.DoMulti(ctx, cmds...) {
		for {
			e, err := r.AsScanEntry()
			if err != nil {
				return err
			}
			for _, m := range e.Elements {
				if v, err := store.MemberID(m); err == nil {
					if err := sink.Like(posts[i], v); err != nil {
						return err
					}
				}
			}
			if e.Cursor == 0 {
				break
			}
			r = s.Do(ctx, sscan(posts[i], e.Cursor))
		}
	}
	return nil
}

func (s *Service) exportCounts(ctx context.Context, ids []store.ID, sink ExportSink) error {
	ps, err := s.LivePosts(ctx, ids, sink)
	if err != nil {
		return err
	}
	var cmds []rueidis.Completed
	var posts []store.ID
	for i, id := range ids {
		if ps[i] != nil {
			cmds = append(cmds, s.PostCountsCmd(id))
			posts = append(posts, id)
		}
	}
	cs, err := lists.ParseCounts(s.DoMulti(ctx, cmds...))
	if err != nil {
		return err
	}
	for i, c := range cs {
		if err := sink.Counts(posts[i], c); err != nil {
			return err
		}
	}
	return nil
}
