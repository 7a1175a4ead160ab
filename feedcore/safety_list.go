package feedcore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
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
		return errBlocked()
	}
	return nil
}

// RelationFlags reads how each of users relates to viewer, in one round
// trip: four reads of the viewer's own slot, whatever the number of users.
// All false for viewer 0.
func (s *Service) RelationFlags(ctx context.Context, viewer ID, users []ID) (_ []RelationFlags, err error) {
	defer wrap(&err, "read the relations of user %d", viewer)
	if viewer == 0 || len(users) == 0 {
		return make([]RelationFlags, len(users)), nil
	}
	return s.parseRelationFlags(s.c.DoMulti(ctx, s.relationFlagsCmds(viewer, users)...), len(users))
}

// relationFlagsCmds are RelationFlags' reads, for a caller's own pipeline
// (hydration); read their replies, in order, with parseRelationFlags.
// users must not be empty.
func (s *Service) relationFlagsCmds(viewer ID, users []ID) []rueidis.Completed {
	ms := members(users)
	return []rueidis.Completed{
		s.c.B().Zmscore().Key(s.k.blocks(viewer)).Member(ms...).Build(),
		s.c.B().Zmscore().Key(s.k.blockedBy(viewer)).Member(ms...).Build(),
		s.c.B().Zmscore().Key(s.k.muteEnds(viewer)).Member(ms...).Build(),
		s.c.B().Zmscore().Key(s.k.hides(viewer)).Member(ms...).Build(),
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
	now := s.nowMS()
	out := make([]RelationFlags, n)
	for i := range out {
		f := &out[i]
		f.Blocked, f.BlocksViewer, f.HidesFrom = !scores[0][i].IsNil(), !scores[1][i].IsNil(), !scores[3][i].IsNil()
		if end, err := scoreOf(scores[2][i]); err == nil && !scores[2][i].IsNil() && end > now {
			f.Muted = true
			if end < relationForever {
				f.MuteEnds = time.UnixMilli(end)
			}
		}
	}
	return out, nil
}

// Blocked reports whether a block stands between viewer and other, either
// way: both read in viewer's slot (its blocks and the mirror of blocks of
// it), one round trip.
func (s *Service) Blocked(ctx context.Context, viewer, other ID) (_ bool, err error) {
	defer wrap(&err, "read blocks between %d and %d", viewer, other)
	if viewer == 0 || other == 0 || viewer == other {
		return false, nil
	}
	return parseBlocked(s.doMulti(ctx, s.blockedCmds(viewer, other)...))
}

func (s *Service) blockedCmds(viewer, other ID) []rueidis.Completed {
	m := member(other)
	return []rueidis.Completed{
		s.c.B().Zscore().Key(s.k.blocks(viewer)).Member(m).Build(),
		s.c.B().Zscore().Key(s.k.blockedBy(viewer)).Member(m).Build(),
	}
}

func parseBlocked(rs []rueidis.RedisResult) (bool, error) {
	for _, r := range rs {
		if ok, err := isMember(r); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// RelationPage is one page of a user's own relations of one kind.
type RelationPage struct {
	Users       []ID
	Cursors     []string
	HasNextPage bool
	EndCursor   string
}

// stateRelations is the first cursor state of a relation list; the
// list's kind is added to it, so a cursor opens only the list it was
// minted for, and never a feed (read_cursor.go).
const stateRelations uint8 = 8

var relationKinds = []RelationKind{RelationBlock, RelationMute, RelationHide}

// relationRecords is the record key of viewer's relations of kind, and
// the key of their ends (mutes only; "" otherwise).
func (s *Service) relationRecords(kind RelationKind, viewer ID) (rec, ends string, state uint8, err error) {
	switch kind {
	case RelationBlock:
		return s.k.blocks(viewer), "", stateRelations, nil
	case RelationMute:
		return s.k.mutes(viewer), s.k.muteEnds(viewer), stateRelations + 1, nil
	case RelationHide:
		return s.k.hides(viewer), "", stateRelations + 2, nil
	}
	return "", "", 0, apierr.Errorf(apierr.BadInput, "no relation kind %q", kind)
}

// RelationList pages viewer's own relations of kind, newest first (ties
// by user id, highest first), first per page (DefaultPageSize when 0).
// Ended mutes are not listed.
func (s *Service) RelationList(ctx context.Context, viewer ID, kind RelationKind, first int, after string) (_ *RelationPage, err error) {
	defer wrap(&err, "list the %s relations of user %d", kind, viewer)
	if viewer == 0 {
		return nil, apierr.Errorf(apierr.Unauthenticated, "sign in to list your %ss", kind)
	}
	rec, ends, state, err := s.relationRecords(kind, viewer)
	if err != nil {
		return nil, err
	}
	if first < 0 || first > MaxPageSize {
		return nil, apierr.Errorf(apierr.BadInput, "first must be between 0 and %d", MaxPageSize)
	}
	setDefault(&first, DefaultPageSize)
	var at Cursor
	if after != "" {
		if at, err = s.sealer.Load().open(after, viewer); err != nil {
			return nil, err
		}
		if at.State != state {
			return nil, apierr.Errorf(apierr.InvalidCursor, "the cursor is not one of this list; request the first page without a cursor")
		}
	}
	keys := []string{rec}
	if ends != "" {
		keys = append(keys, ends)
	}
	id := ""
	if after != "" {
		id = member(at.LastID)
	}
	r := s.do(ctx, relationSeek.cmd(s.c.B(), keys, []string{scoreArg(at.TS), id, itoa(first + 1), scoreArg(s.nowMS())}))
	items, err := parseEntries(r)
	if err != nil {
		return nil, err
	}
	page := &RelationPage{HasNextPage: len(items) > first}
	items = items[:min(len(items), first)]
	sealer := s.sealer.Load()
	for _, it := range items {
		page.Users = append(page.Users, it.ID)
		page.Cursors = append(page.Cursors, sealer.Seal(Cursor{State: state, LastID: it.ID, TS: it.TS, Viewer: viewer}))
	}
	if n := len(page.Cursors); n > 0 {
		page.EndCursor = page.Cursors[n-1]
	}
	return page, nil
}

// relationSeek returns up to ARGV[3] entries of the records KEYS[1] after
// (ARGV[1] score, ARGV[2] member; an empty member starts at the newest),
// newest first, flat as member, score, skipping members whose end in
// KEYS[2] (if given) is not after now ARGV[4]. Its walk is bounded by the
// records, which the relation limit bounds.
var relationSeek = newScript(true, luaLess+`
local ts, id, n, now = ARGV[1], ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local top = '+inf'
if id ~= '' then top = ts end
local out, off = {}, 0
while #out < 2 * n do
  local got = redis.call('ZRANGE', KEYS[1], top, '-inf', 'BYSCORE', 'REV', 'LIMIT', off, 2 * n, 'WITHSCORES')
  if #got == 0 then break end
  for i = 1, #got, 2 do
    local m, s = got[i], got[i + 1]
    local after = id == '' or tonumber(s) < tonumber(ts) or lt(m, id)
    local live = #KEYS < 2 or tonumber(redis.call('ZSCORE', KEYS[2], m) or '0') > now
    if after and live and #out < 2 * n then add(out, m, s) end
  end
  off = off + #got / 2
end
return out
`)

// PutRelations records relations (import), each as Block, Mute or
// HidePostsFrom does (CreatedAt kept; a mute's Until given as its end, an
// ended one skipped), then settles each pair. It returns how many were
// applied before the first refused (a bad kind or user, the limit), with
// the refusal; those after a refusal over the limit may have been applied
// too, harmlessly.
func (s *Service) PutRelations(ctx context.Context, rs []Relation) (_ int, err error) {
	defer wrap(&err, "record relations")
	rs, stop := s.checkRelations(ctx, rs)
	now := s.nowMS()
	var cmds []rueidis.Completed
	var pairs []Edge
	var at []int // the index in rs of each pair
	for i, r := range rs {
		until := relationForever
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
		keys, args := s.relationCommitArgs(r.Kind, r.User, r.Target, true, now, until)
		args[len(args)-1] = scoreArg(created)
		cmds = append(cmds, relationCommit.cmd(s.c.B(), keys, args))
		pairs = append(pairs, Edge{Follower: r.User, Followee: r.Target})
		at = append(at, i)
	}
	n := len(rs)
	for i, r := range s.doMulti(ctx, cmds...) {
		added, err := r.AsInt64()
		if err != nil {
			return 0, err
		}
		if added < 0 && n == len(rs) {
			n, stop = at[i], apierr.Errorf(apierr.BadInput, "user %d has %d blocks, mutes and hides, the most allowed (--max-blocks)", pairs[i].Follower, s.o.MaxRelations)
		}
	}
	// Every pair: the records after a refused one may have gone in.
	if err := s.settleRelations(ctx, pairs); err != nil {
		return 0, err
	}
	return n, stop
}

// checkRelations returns the prefix of rs that can be applied, and the
// error of the first that cannot: a bad kind, a relation to oneself, a
// missing user.
func (s *Service) checkRelations(ctx context.Context, rs []Relation) ([]Relation, error) {
	var stop error
	for i, r := range rs {
		if _, _, _, err := s.relationRecords(r.Kind, r.User); err != nil {
			rs, stop = rs[:i], err
			break
		}
		if r.User == r.Target || (r.Kind != RelationMute && !r.Until.IsZero()) {
			rs, stop = rs[:i], apierr.Errorf(apierr.BadInput, "relation %d %s %d: a user and another, and an end only for a mute", r.User, r.Kind, r.Target)
			break
		}
	}
	pairs := cmdsFor(rs, func(r Relation) Edge { return Edge{Follower: r.User, Followee: r.Target} })
	n, err := s.existingPairs(ctx, pairs)
	switch {
	case CodeOf(err) == apierr.NotFound:
		rs, stop = rs[:n], err
	case err != nil:
		return nil, err
	}
	return rs, stop
}

// exportRelations is the export pass of the records of kind: each user's,
// exportChunk a call, with their times and, for mutes, their ends (ended
// mutes left out).
func (s *Service) exportRelations(kind RelationKind) func(context.Context, []ID, ExportSink) error {
	return func(ctx context.Context, ids []ID, sink ExportSink) error {
		now := s.nowMS()
		for _, id := range ids {
			rec, ends, _, _ := s.relationRecords(kind, id)
			for from := int64(0); ; from += exportChunk {
				items, err := parseEntries(s.do(ctx, s.c.B().Zrange().Key(rec).Min(itoa64(from)).Max(itoa64(from+exportChunk-1)).Withscores().Build()))
				if err != nil {
					return err
				}
				untils, err := s.relationEnds(ctx, ends, items)
				if err != nil {
					return err
				}
				for i, it := range items {
					r := Relation{Kind: kind, User: id, Target: it.ID, CreatedAt: time.UnixMilli(it.TS).UTC()}
					if ends != "" && untils[i] <= now {
						continue
					}
					if ends != "" && untils[i] < relationForever {
						r.Until = time.UnixMilli(untils[i]).UTC()
					}
					if err := sink.Relation(r); err != nil {
						return err
					}
				}
				if len(items) < exportChunk {
					break
				}
			}
		}
		return nil
	}
}

// relationEnds reads the ends (ms; 0 none) of the mutes items from ends;
// nil when ends is "" (not mutes) or there are no items.
func (s *Service) relationEnds(ctx context.Context, ends string, items []Item) ([]int64, error) {
	if ends == "" || len(items) == 0 {
		return nil, nil
	}
	ms := make([]string, len(items))
	for i, it := range items {
		ms[i] = member(it.ID)
	}
	scores, err := s.do(ctx, s.c.B().Zmscore().Key(ends).Member(ms...).Build()).ToArray()
	if err != nil {
		return nil, fmt.Errorf("read mute ends: %w", err)
	}
	out := make([]int64, len(items))
	for i, sc := range scores {
		if !sc.IsNil() {
			out[i], _ = scoreOf(sc)
		}
	}
	return out, nil
}
