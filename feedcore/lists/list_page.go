package lists

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
)

// Lists: a viewer's favorites, an author's posts, a user's followers and
// followees, the viewer's blocks, mutes and hides (and a post's replies,
// ListReplies) each page one sorted set of 8-byte members scored by time,
// newest first, ties by member (id) highest first, as the feeds order
// their items. A page is one listSeek of the set (in its owner's slot)
// with the reads that filter it riding in the same pipeline, then what
// the list's keep reads of the entries found (the posts, through the
// client-side cache; the viewer's separations from them, only when the
// viewer has more than the first round trip reads: see Separations). Entries filtered out are read past, doubling the read up to
// maxBatch for at most maxRounds rounds, and the end cursor advances past
// everything read, so a page costs Redis work proportional to its size,
// never to the set's, and a client never gets stuck.
//
// Cursors are sealed with the list's kind and owner (Cursor.List, Owner):
// a cursor opens only the list, of the owner, and for the viewer it was
// minted for (openListCursor); anything else is INVALID_CURSOR.

// UserPage is one page of a list of users, in list order.
type UserPage struct {
	Users       []store.ID
	Cursors     []string
	HasNextPage bool
	EndCursor   string
}

// listAt is a request for one page of a list.
type listAt struct {
	viewer store.ID
	kind   cursor.ListKind
	owner  store.ID
	first  int    // 1..MaxPageSize; 0: DefaultPageSize
	after  string // a cursor of this list; "": from the top
}

// SealListCursor is the cursor of the entry at of viewer's list kind of
// owner.
func (s *Service) SealListCursor(viewer store.ID, kind cursor.ListKind, owner store.ID, at store.Item) string {
	return s.Cursors().Seal(cursor.Cursor{State: cursor.StateTimeline, LastID: at.ID, TS: at.TS, Viewer: viewer, List: kind, Owner: owner})
}

// OpenListCursor opens raw, a cursor of viewer's list kind of owner. A
// cursor of a feed, of another list or owner, or another viewer's is
// INVALID_CURSOR.
func (s *Service) OpenListCursor(ctx context.Context, raw string, viewer store.ID, kind cursor.ListKind, owner store.ID) (cursor.Cursor, error) {
	c, err := s.OpenWith(ctx, raw, viewer, (*cursor.Sealer).OpenAny)
	if err != nil {
		return cursor.Cursor{}, err
	}
	if c.List != kind || c.Owner != owner || c.State != cursor.StateTimeline || c.Session != "" {
		return cursor.Cursor{}, apierr.Errorf(apierr.InvalidCursor, "this cursor belongs to another list or another user's list; request this list's first page without a cursor")
	}
	return c, nil
}

// start checks q's page size and opens its cursor: n, the page size, and
// the position to read after (nil: the top).
func (s *Service) start(ctx context.Context, q listAt) (n int, from *store.Item, err error) {
	if q.first < 0 || q.first > timeline.MaxPageSize {
		return 0, nil, apierr.Errorf(apierr.BadInput, "first must be between 1 and %d", timeline.MaxPageSize)
	}
	n = timeline.OrDefault(q.first)
	if q.after == "" {
		return n, nil, nil
	}
	c, err := s.OpenListCursor(ctx, q.after, q.viewer, q.kind, q.owner)
	if err != nil {
		return 0, nil, err
	}
	it := c.Item()
	return n, &it, nil
}

// listScan is how one list is read.
type listScan[T any] struct {
	// seek reads up to limit entries after from (nil: the top): a
	// listSeek call (listSeekCmd).
	seek func(from *store.Item, limit int) rueidis.Completed
	// first are reads sent with the first seek, in its pipeline; their
	// replies are handed to keep.
	first []rueidis.Completed
	// keep returns, for each entry read, what the page shows of it, nil
	// where the viewer is not to see it.
	keep func(ctx context.Context, first []rueidis.RedisResult, items []store.Item) ([]*T, error)
}

// collectList walks l from position from until it has need entries to
// show, the list ends, or the read bound is reached. It returns the
// entries found, how far it read, and whether more may follow.
func collectList[T any](ctx context.Context, s *Service, l listScan[T], from *store.Item, need int) ([]timeline.Entry[T], *store.Item, bool, error) {
	var first []rueidis.RedisResult
	found, cur, more, err := timeline.FillPage(from, need, func(round int, cur *store.Item, batch int) ([]store.Item, []*T, *store.Item, error) {
		cmds := []rueidis.Completed{l.seek(cur, batch)}
		if round == 0 {
			cmds = append(cmds, l.first...)
		}
		rs := s.DoMulti(ctx, cmds...)
		if round == 0 {
			first = rs[1:]
		}
		items, frontier, err := ParseListSeek(rs[0])
		if err != nil {
			return nil, nil, nil, err
		}
		vals, err := l.keep(ctx, first, items)
		return items, vals, frontier, err
	})
	if errors.Is(err, errNothingShown) {
		return nil, nil, false, nil
	}
	return found, cur, more, err
}

// listSeek reads the list KEYS[1] after (ARGV[1] score, ARGV[2] member;
// an empty member starts at the top), up to ARGV[3] entries, newest
// first, ties by member highest first. With KEYS[2], an entry is kept
// only if its score there is above ARGV[4] (a member of fr or fg; a
// mute not ended). It replies {kept entries (flat member, score),
// frontier}: the frontier is the last entry read when ARGV[3] were (more
// may follow), else empty.
//
// The seek costs O(log n) whatever the ties: it finds the cursor's
// entry by rank, or, when that entry has gone (an unfollow, an
// unfavorite), binary-searches the run of entries with the cursor's
// score for the first below its member.
var listSeek = store.NewScript(true, core.LuaLess+`
local key, ts, id, n = KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3])
local from = 0
if id ~= '' then
  local sc = redis.call('ZSCORE', key, id)
  if sc and tonumber(sc) == tonumber(ts) then
    from = redis.call('ZREVRANK', key, id) + 1
  else
    local lo = redis.call('ZCOUNT', key, '(' .. ts, '+inf')
    local hi = lo + redis.call('ZCOUNT', key, ts, ts)
    while lo < hi do
      local mid = math.floor((lo + hi) / 2)
      if lt(redis.call('ZRANGE', key, mid, mid, 'REV')[1], id) then hi = mid else lo = mid + 1 end
    end
    from = lo
  end
end
local got = redis.call('ZRANGE', key, from, from + n - 1, 'REV', 'WITHSCORES')
local out = {}
for i = 1, #got, 2 do
  local keep = #KEYS < 2
  if not keep then
    local sc = redis.call('ZSCORE', KEYS[2], got[i])
    keep = sc and tonumber(sc) > tonumber(ARGV[4])
  end
  if keep then add(out, got[i], got[i + 1]) end
end
local frontier = {}
if #got == 2 * n then frontier = {got[#got - 1], got[#got]} end
return {out, frontier}
`)

// ListSeekCmd is listSeek of the list key from position from, up to
// limit entries; check, when not "", is the set an entry must score
// above above in.
func (s *Service) ListSeekCmd(key, check, above string, from *store.Item, limit int) rueidis.Completed {
	ts, m := "", ""
	if from != nil {
		ts, m = store.ScoreArg(from.TS), store.Member(from.ID)
	}
	keys := []string{key}
	if check != "" {
		keys = append(keys, check)
	}
	return listSeek.Cmd(s.Redis.B(), keys, []string{ts, m, store.Itoa(limit), above})
}

// ParseListSeek reads listSeek's reply: the entries kept, and the
// frontier (nil at the list's end).
func ParseListSeek(r rueidis.RedisResult) ([]store.Item, *store.Item, error) {
	arr, err := r.ToArray()
	if err != nil {
		return nil, nil, fmt.Errorf("read a list: %w", err)
	}
	if len(arr) != 2 {
		return nil, nil, fmt.Errorf("read a list: %d values, want 2", len(arr))
	}
	items, err := core.EntriesOf(arr[0])
	if err != nil {
		return nil, nil, err
	}
	fr, err := core.EntriesOf(arr[1])
	if err != nil || len(fr) == 0 {
		return items, nil, err
	}
	return items, &fr[0], nil
}

// sealPage turns what collectList found into a page of at most n entries
// of q's list: their values and cursors, whether more follow, and the end
// cursor, which advances past everything read (or to the last entry
// shown when the next one is already known).
func sealPage[T any](s *Service, q listAt, n int, found []timeline.Entry[T], scanned *store.Item, more bool) (vals []*T, cursors []string, hasNext bool, end string) {
	seal := func(it store.Item) string { return s.SealListCursor(q.viewer, q.kind, q.owner, it) }
	shown := found[:min(n, len(found))]
	vals, cursors = make([]*T, len(shown)), make([]string, len(shown))
	for i, e := range shown {
		vals[i], cursors[i] = e.Val, seal(e.It)
	}
	switch {
	case len(found) > n:
		end = cursors[n-1]
	case scanned != nil:
		end = seal(*scanned)
	default:
		end = q.after
	}
	return vals, cursors, more, end
}

// postPage is a page of a list of posts (favorites, an author's posts).
func postPage(q listAt, posts []*content.Post, cursors []string, hasNext bool, end string) *core.FeedPage {
	pg := &core.FeedPage{Edges: make([]core.FeedEdge, len(posts)), HasNext: hasNext, HasPrevious: q.after != "", StartCursor: q.after, EndCursor: end}
	for i, p := range posts {
		pg.Edges[i] = core.FeedEdge{Post: p, Cursor: cursors[i]}
	}
	if len(cursors) > 0 {
		pg.StartCursor = cursors[0]
	}
	return pg
}

// userPage is a page of a list of users.
func userPage(users []*store.ID, cursors []string, hasNext bool, end string) *UserPage {
	pg := &UserPage{Users: make([]store.ID, len(users)), Cursors: cursors, HasNextPage: hasNext, EndCursor: end}
	for i, u := range users {
		pg.Users[i] = *u
	}
	return pg
}

// readList reads one page of q's list as l says: the shown values with
// their cursors, whether more follow, and the end cursor.
func readList[T any](ctx context.Context, s *Service, q listAt, l func(from *store.Item) listScan[T]) (vals []*T, cursors []string, hasNext bool, end string, err error) {
	n, from, err := s.start(ctx, q)
	if err != nil {
		return nil, nil, false, "", err
	}
	found, scanned, more, err := collectList(ctx, s, l(from), from, n+1)
	if err != nil {
		return nil, nil, false, "", err
	}
	vals, cursors, hasNext, end = sealPage(s, q, n, found, scanned, more)
	return vals, cursors, hasNext, end, nil
}

// Separations: what keeps a user's entries out of the viewer's lists,
// the feeds' rule (DESIGN): nothing of a user a block separates from the
// viewer, either way, or whom the viewer mutes (a mute in force: one that
// has ended counts as gone at once, whatever the settle has pruned), and,
// in lists of posts, nothing of an author who hides its posts from the
// viewer.
//
// Lists of posts read the viewer's hidden authors (keys.hiddenAuthors,
// hx), the set the feeds read, which says exactly that: each author so
// kept from the viewer with when that ends (relationForever for a block
// or a hide). Lists of users read the records instead (bk, the mirror bb,
// and the mute ends mue): hx cannot tell a hide from a block, and a hide
// is kept from its target, so a user who hides its posts from the viewer
// stays in the viewer's lists of users (its posts do not), where its
// leaving would tell.
//
// A list's first round trip reads up to sepPrefetch of each of those
// sets (hiddenPrefetchCmds, sepPrefetchCmds): a viewer in none (most) or
// in a few (some mutes, a block or two) then pays nothing more, and only
// one in more pays one round trip a page, for the entries it found.

// SepPrefetch bounds how much of each of the viewer's separation sets a
// list's first round trip reads.
const SepPrefetch = 64

// sepSet is what a page knows of the users separated from its viewer:
// those read, whether they are all of them, and else how to read whether
// given users are (one round trip).
type sepSet struct {
	Users    map[store.ID]bool
	Complete bool
	read     func(ctx context.Context, users []store.ID) (map[store.ID]bool, error)
}

// of returns which of users are separated from the viewer: from the set
// when it holds them all, else read.
func (h sepSet) of(ctx context.Context, users []store.ID) (map[store.ID]bool, error) {
	if h.Complete || len(users) == 0 {
		return h.Users, nil
	}
	return h.read(ctx, users)
}

// prefetchCmd reads up to sepPrefetch members of key scored above min.
func (s *Service) prefetchCmd(key, min string) rueidis.Completed {
	return s.Redis.B().Zrange().Key(key).Min(min).Max("+inf").Byscore().Limit(0, SepPrefetch).Build()
}

// parsePrefetch reads prefetchCmds' replies into a sepSet falling back to
// read when one of the sets may hold more.
func parsePrefetch(rs []rueidis.RedisResult, read func(context.Context, []store.ID) (map[store.ID]bool, error)) (sepSet, error) {
	h := sepSet{Users: map[store.ID]bool{}, Complete: true, read: read}
	for _, r := range rs {
		ms, err := r.AsStrSlice()
		if err != nil {
			return sepSet{}, fmt.Errorf("read separations: %w", err)
		}
		ids, err := timeline.IdsOf(ms)
		if err != nil {
			return sepSet{}, err
		}
		h.Complete = h.Complete && len(ids) < SepPrefetch
		for _, id := range ids {
			h.Users[id] = true
		}
	}
	return h, nil
}

// HiddenPrefetchCmds read, for a list of posts, the authors hidden from
// viewer after now (ms); parseHiddenPrefetch reads the replies.
func (s *Service) HiddenPrefetchCmds(viewer store.ID, now int64) []rueidis.Completed {
	return []rueidis.Completed{s.prefetchCmd(s.Keys.HiddenAuthors(viewer), "("+store.ScoreArg(now))}
}

// ParseHiddenPrefetch reads hiddenPrefetchCmds' replies, sent at now.
func (s *Service) ParseHiddenPrefetch(rs []rueidis.RedisResult, viewer store.ID, now int64) (sepSet, error) {
	return parsePrefetch(rs, func(ctx context.Context, authors []store.ID) (map[store.ID]bool, error) {
		return parseHidden(s.Do(ctx, s.hiddenCmd(viewer, authors)), authors, now)
	})
}

// hiddenCmd reads when each of authors (not empty) stops being hidden
// from viewer; parseHidden reads the reply.
func (s *Service) hiddenCmd(viewer store.ID, authors []store.ID) rueidis.Completed {
	return s.Redis.B().Zmscore().Key(s.Keys.HiddenAuthors(viewer)).Member(store.Members(authors)...).Build()
}

// parseHidden reads hiddenCmd's reply: the authors hidden after now (ms).
func parseHidden(r rueidis.RedisResult, authors []store.ID, now int64) (map[store.ID]bool, error) {
	out := map[store.ID]bool{}
	if err := inForceOf(r, authors, now, out); err != nil {
		return nil, fmt.Errorf("read hidden authors: %w", err)
	}
	return out, nil
}

// inForceOf marks in out the users whose score in a ZMSCORE reply r (in
// the order of users) is above now: a relation, scored by its end, in
// force. now below 0 takes every score.
func inForceOf(r rueidis.RedisResult, users []store.ID, now int64, out map[store.ID]bool) error {
	scores, err := r.ToArray()
	if err != nil {
		return err
	}
	for i, sc := range scores {
		if sc.IsNil() || i >= len(users) {
			continue
		}
		if until, err := sc.AsFloat64(); err != nil {
			return err
		} else if until > float64(now) {
			out[users[i]] = true
		}
	}
	return nil
}

// SepPrefetchCmds read, for a list of users, the users a block separates
// from viewer, either way, and those it mutes after now (ms);
// parseSepPrefetch reads the replies.
func (s *Service) SepPrefetchCmds(viewer store.ID, now int64) []rueidis.Completed {
	return []rueidis.Completed{
		s.prefetchCmd(s.Keys.Blocks(viewer), "-inf"),
		s.prefetchCmd(s.Keys.BlockedBy(viewer), "-inf"),
		s.prefetchCmd(s.Keys.MuteEnds(viewer), "("+store.ScoreArg(now)),
	}
}

// ParseSepPrefetch reads sepPrefetchCmds' replies, sent at now.
func (s *Service) ParseSepPrefetch(rs []rueidis.RedisResult, viewer store.ID, now int64) (sepSet, error) {
	return parsePrefetch(rs, func(ctx context.Context, users []store.ID) (map[store.ID]bool, error) {
		return parseSeparations(s.DoMulti(ctx, s.separationCmds(viewer, users)...), users, now)
	})
}

// separationCmds read whether a block stands between viewer and each of
// users, or viewer mutes it; parse the replies with parseSeparations.
// users must not be empty.
func (s *Service) separationCmds(viewer store.ID, users []store.ID) []rueidis.Completed {
	ms := store.Members(users)
	return []rueidis.Completed{
		s.Redis.B().Zmscore().Key(s.Keys.Blocks(viewer)).Member(ms...).Build(),
		s.Redis.B().Zmscore().Key(s.Keys.BlockedBy(viewer)).Member(ms...).Build(),
		s.Redis.B().Zmscore().Key(s.Keys.MuteEnds(viewer)).Member(ms...).Build(),
	}
}

// parseSeparations reads separationCmds' replies, sent at now (ms): the
// users separated from the viewer.
func parseSeparations(rs []rueidis.RedisResult, users []store.ID, now int64) (map[store.ID]bool, error) {
	out := map[store.ID]bool{}
	for i, what := range []string{"blocks", "blocks", "mutes"} {
		at := int64(-1) // a block's score is when it was made: any counts
		if what == "mutes" {
			at = now
		}
		if err := inForceOf(rs[i], users, at, out); err != nil {
			return nil, fmt.Errorf("read %s: %w", what, err)
		}
	}
	return out, nil
}
