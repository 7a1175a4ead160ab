package lists

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/safety"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
)

// RelationFlags is how one user relates to the viewer.
type RelationFlags struct {
	Blocked      bool // the viewer blocks the user
	BlocksViewer bool // the user blocks the viewer
	Muted        bool // the viewer mutes the user (a mute not ended)
	HidesFrom    bool // the viewer hides its posts from the user
	// MuteEnds is when the viewer's mute of the user ends; zero when
	// there is none or it has no end.
	MuteEnds time.Time
}

// Forbidden is the refusal a block between the viewer and the user makes
// (either way) of opening the user's posts and sessions, nil when none
// stands: for reads that have the flags already (node(id:) through the
// request's loaders).
func (f RelationFlags) Forbidden() error {
	if f.Blocked || f.BlocksViewer {
		return timeline.ErrBlocked()
	}
	return nil
}

// RelationFlags reads how each of users relates to viewer, in one round
// trip: four reads of the viewer's own slot, whatever the number of users.
// All false for viewer 0.
func (s *Service) RelationFlags(ctx context.Context, viewer store.ID, users []store.ID) (_ []RelationFlags, err error) {
	defer store.Wrap(&err, "read the relations of user %d", viewer)
	if viewer == 0 || len(users) == 0 {
		return make([]RelationFlags, len(users)), nil
	}
	return s.parseRelationFlags(s.Redis.DoMulti(ctx, s.relationFlagsCmds(viewer, users)...), len(users))
}

// relationFlagsCmds are RelationFlags' reads, for a caller's own pipeline
// (hydration); read their replies, in order, with parseRelationFlags.
// users must not be empty.
func (s *Service) relationFlagsCmds(viewer store.ID, users []store.ID) []rueidis.Completed {
	ms := store.Members(users)
	return []rueidis.Completed{
		s.Redis.B().Zmscore().Key(s.Keys.Blocks(viewer)).Member(ms...).Build(),
		s.Redis.B().Zmscore().Key(s.Keys.BlockedBy(viewer)).Member(ms...).Build(),
		s.Redis.B().Zmscore().Key(s.Keys.MuteEnds(viewer)).Member(ms...).Build(),
		s.Redis.B().Zmscore().Key(s.Keys.Hides(viewer)).Member(ms...).Build(),
	}
}

// relationFlagsReplies is how many replies relationFlagsCmds has.
const relationFlagsReplies = 4

// parseRelationFlags reads relationFlagsCmds' replies for n users.
func (s *Service) parseRelationFlags(rs []rueidis.RedisResult, n int) ([]RelationFlags, error) {
	if len(rs) < relationFlagsReplies {
		return nil, fmt.Errorf("relation flags: %d replies, want %d", len(rs), relationFlagsReplies)
	}
	var scores [relationFlagsReplies][]rueidis.RedisMessage
	for i := range scores {
		arr, err := rs[i].ToArray()
		if err != nil {
			return nil, err
		}
		if len(arr) != n {
			return nil, fmt.Errorf("relation flags: %d scores, want %d", len(arr), n)
		}
		scores[i] = arr
	}
	now := s.NowMS()
	out := make([]RelationFlags, n)
	for i := range out {
		f := &out[i]
		f.Blocked, f.BlocksViewer, f.HidesFrom = !scores[0][i].IsNil(), !scores[1][i].IsNil(), !scores[3][i].IsNil()
		if end, err := core.ScoreOf(scores[2][i]); err == nil && !scores[2][i].IsNil() && end > now {
			f.Muted = true
			if end < core.RelationForever {
				f.MuteEnds = time.UnixMilli(end)
			}
		}
	}
	return out, nil
}

// relationRecords is the record key of viewer's relations of kind, the
// key of their ends (mutes only; "" otherwise), and the kind of their
// list (the cursor's).
func (s *Service) relationRecords(kind core.RelationKind, viewer store.ID) (rec, ends string, list cursor.ListKind, err error) {
	switch kind {
	case core.RelationBlock:
		return s.Keys.Blocks(viewer), "", cursor.ListBlocked, nil
	case core.RelationMute:
		return s.Keys.Mutes(viewer), s.Keys.MuteEnds(viewer), cursor.ListMuted, nil
	case core.RelationHide:
		return s.Keys.Hides(viewer), "", cursor.ListHidden, nil
	}
	return "", "", 0, apierr.Errorf(apierr.BadInput, "no relation kind %q", kind)
}

// RelationList pages viewer's own relations of kind, newest first (ties
// by user id, highest first), first per page (DefaultPageSize when 0).
// Ended mutes are not listed.
func (s *Service) RelationList(ctx context.Context, viewer store.ID, kind core.RelationKind, first int, after string) (_ *UserPage, err error) {
	defer store.Wrap(&err, "list the %s relations of user %d", kind, viewer)
	if viewer == 0 {
		return nil, apierr.Errorf(apierr.Unauthenticated, "sign in to list your %ss", kind)
	}
	rec, ends, list, err := s.relationRecords(kind, viewer)
	if err != nil {
		return nil, err
	}
	now := store.ScoreArg(s.NowMS())
	users, cursors, more, end, err := readList(ctx, s, listAt{viewer: viewer, kind: list, owner: viewer, first: first, after: after},
		func(*store.Item) listScan[store.ID] {
			return listScan[store.ID]{
				seek: func(from *store.Item, limit int) rueidis.Completed { return s.ListSeekCmd(rec, ends, now, from, limit) },
				keep: keepAll,
			}
		})
	if err != nil {
		return nil, err
	}
	return userPage(users, cursors, more, end), nil
}

// keepAll keeps every entry of a list of users (listScan.keep).
func keepAll(_ context.Context, _ []rueidis.RedisResult, items []store.Item) ([]*store.ID, error) {
	out := make([]*store.ID, len(items))
	for i := range items {
		out[i] = &items[i].ID
	}
	return out, nil
}

// PutRelations records relations (import), each as Block, Mute or
// HidePostsFrom does (CreatedAt kept; a mute's Until given as its end, an
// ended one skipped), then settles each pair. It returns how many were
// applied before the first refused (a bad kind or user, the limit), with
// the refusal; those after a refusal over the limit may have been applied
// too, harmlessly.
func (s *Service) PutRelations(ctx context.Context, rs []core.Relation) (_ int, err error) {
	defer store.Wrap(&err, "record relations")
	rs, stop := s.checkRelations(ctx, rs)
	now := s.NowMS()
	var cmds []rueidis.Completed
	var pairs []core.Edge
	var at []int // the index in rs of each pair
	for i, r := range rs {
		until := core.RelationForever
		if !r.Until.IsZero() {
			until = r.Until.UnixMilli()
		}
		created := r.CreatedAt.UnixMilli()
		if r.CreatedAt.IsZero() {
			created = now
		}
		if until <= now {
			continue // an ended mute is no mute
		}
		keys, args := s.RelationCommitArgs(r.Kind, r.User, r.Target, true, now, until)
		args[len(args)-1] = store.ScoreArg(created)
		cmds = append(cmds, safety.RelationCommit.Cmd(s.Redis.B(), keys, args))
		pairs = append(pairs, core.Edge{Follower: r.User, Followee: r.Target})
		at = append(at, i)
	}
	n := len(rs)
	for i, r := range s.DoMulti(ctx, cmds...) {
		added, err := r.AsInt64()
		if err != nil {
			return 0, err
		}
		if added < 0 && n == len(rs) {
			n, stop = at[i], apierr.Errorf(apierr.BadInput, "user %d has %d blocks, mutes and hides, the most allowed (--max-blocks)", pairs[i].Follower, s.Opts.MaxRelations)
		}
	}
	// Every pair: the records after a refused one may have gone in.
	if err := s.SettleRelations(ctx, pairs); err != nil {
		return 0, err
	}
	return n, stop
}

// checkRelations returns the prefix of rs that can be applied, and the
// error of the first that cannot: a bad kind, a relation to oneself, a
// missing user.
func (s *Service) checkRelations(ctx context.Context, rs []core.Relation) ([]core.Relation, error) {
	var stop error
	for i, r := range rs {
		if _, _, _, err := s.relationRecords(r.Kind, r.User); err != nil {
			rs, stop = rs[:i], err
			break
		}
		if r.User == r.Target || (r.Kind != core.RelationMute && !r.Until.IsZero()) {
			rs, stop = rs[:i], apierr.Errorf(apierr.BadInput, "relation %d %s %d: a user and another, and an end only for a mute", r.User, r.Kind, r.Target)
			break
		}
	}
	pairs := store.CmdsFor(rs, func(r core.Relation) core.Edge { return core.Edge{Follower: r.User, Followee: r.Target} })
	n, err := s.ExistingPairs(ctx, pairs)
	switch {
	case store.CodeOf(err) == apierr.NotFound:
		rs, stop = rs[:n], err
	case err != nil:
		return nil, err
	}
	return rs, stop
}

// ExportRelations is the export pass of the records of kind: each user's,
// exportChunk a call, with their times and, for mutes, their ends (ended
// mutes left out).
func (s *Service) ExportRelations(kind core.RelationKind) func(context.Context, []store.ID, core.ExportSink) error {
	return func(ctx context.Context, ids []store.ID, sink core.ExportSink) error {
		now := s.NowMS()
		for _, id := range ids {
			rec, ends, _, _ := s.relationRecords(kind, id)
			for from := int64(0); ; from += core.ExportChunk {
				items, err := core.ParseEntries(s.Do(ctx, s.Redis.B().Zrange().Key(rec).Min(core.Itoa64(from)).Max(core.Itoa64(from+core.ExportChunk-1)).Withscores().Build()))
				if err != nil {
					return err
				}
				untils, err := s.relationEnds(ctx, ends, items)
				if err != nil {
					return err
				}
				for i, it := range items {
					r := core.Relation{Kind: kind, User: id, Target: it.ID, CreatedAt: time.UnixMilli(it.TS).UTC()}
					if ends != "" && untils[i] <= now {
						continue
					}
					if ends != "" && untils[i] < core.RelationForever {
						r.Until = time.UnixMilli(untils[i]).UTC()
					}
					if err := sink.Relation(r); err != nil {
						return err
					}
				}
				if len(items) < core.ExportChunk {
					break
				}
			}
		}
		return nil
	}
}

// relationEnds reads the ends (ms; 0 none) of the mutes items from ends;
// nil when ends is "" (not mutes) or there are no items.
func (s *Service) relationEnds(ctx context.Context, ends string, items []store.Item) ([]int64, error) {
	if ends == "" || len(items) == 0 {
		return nil, nil
	}
	ms := make([]string, len(items))
	for i, it := range items {
		ms[i] = store.Member(it.ID)
	}
	scores, err := s.Do(ctx, s.Redis.B().Zmscore().Key(ends).Member(ms...).Build()).ToArray()
	if err != nil {
		return nil, fmt.Errorf("read mute ends: %w", err)
	}
	out := make([]int64, len(items))
	for i, sc := range scores {
		if !sc.IsNil() {
			out[i], _ = core.ScoreOf(sc)
		}
	}
	return out, nil
}
