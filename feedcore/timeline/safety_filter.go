package timeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/keyword"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/roundtrip"
	"github.com/redis/rueidis"
)

// Reads filter the viewer's relations in the viewer's own slot, in the
// round trips they already make (design: filter at fan-out, derived sets
// per viewer). hiddenAuthors (hx) lists every author hidden from a viewer
// with the time it ends; a followee in it is neither pulled (its outbox is
// never read) nor filed in a live snapshot. hideNotes (xn) names the
// followed authors whose entries may still sit in the inbox until the
// clean-up removes them; reads skip their items as they skip recent
// unfollows. Neither read grows with the viewer's relations: they are
// intersections with the followees, run inside Redis, and the notes are
// bounded by the followees.

// viewSets are the reads of the viewer's relations and settings a page's
// first round trip makes, as plain commands (a script cost Redis several
// times as much for the same few reads): the big-V followees and, by
// intersection with the hidden authors (each with the time its hiding
// ends), those of them hidden; the hide notes whose author is hidden too,
// each with the earlier of the two ends; the keyword filters with their
// version; and, when followees is set, the following set and its hidden
// members. readViewSets keeps what stands now: big-V followees and
// followees less the hidden ones, and, to skip, the noted authors whose
// note and hiding both stand, so an ended mute or an unblock shows the
// author's entries at once, whether or not the clean-up has run. Every
// reply is bounded by the followees (intersections run inside Redis),
// never by the viewer's blocks and mutes.
type viewSets struct {
	cmds []rueidis.Completed
	// followees: the following set is read; compiled: the filters this
	// process compiled for the viewer, whose version the keyword script
	// is sent (nil: the version and the filters are read plainly); bigV:
	// the big-V followees are read (a complete inbox merges none).
	followees, bigV bool
	compiled        *keyword.Set
}

func (s *Service) viewSetsCmds(viewer store.ID, followees string, compiled *keyword.Set, bigV bool) viewSets {
	b := s.Redis.B()
	hx := s.Keys.HiddenAuthors(viewer)
	pf, fg := s.Keys.PendingFollows(viewer), s.Keys.Following(viewer)
	q := viewSets{followees: followees != "", compiled: compiled, bigV: bigV}
	if bigV {
		q.cmds = s.bigVCmds(viewer)
	}
	q.cmds = append(q.cmds,
		b.Zinter().Numkeys(2).Key(s.Keys.HideNotes(viewer), hx).AggregateMin().Withscores().Build(),
		// Pending follows still in the following set (the truth: a mark
		// left by a follow since undone never brings its author back),
		// and those hidden (a follow's time is past, so MAX is the
		// hiding's end when it is still standing).
		b.Zinter().Numkeys(2).Key(pf, fg).Build(),
		b.Zinter().Numkeys(2).Key(pf, hx).AggregateMax().Withscores().Build(),
	)
	if followees != "" {
		q.cmds = append(q.cmds, followeesCmds(b, followees, hx)...)
	}
	// Most viewers have no filters, and a plain read of none costs little;
	// a viewer whose filters this process holds sends their version, and
	// gets them back only when they changed.
	if compiled == nil {
		q.cmds = append(q.cmds, b.Get().Key(s.Keys.KeywordVersion(viewer)).Build(),
			b.Hgetall().Key(s.Keys.KeywordFilters(viewer)).Build())
	} else {
		q.cmds = append(q.cmds, s.KeywordViewCmd(viewer, compiled.Version()))
	}
	return q
}

// readViewSets reads the replies to q's commands into v, as they stand
// at v.Now: its big-V followees, the authors it skips, when asked for its
// followees, and its keyword filters (compiled anew, and kept, when they
// changed).
func (s *Service) readViewSets(v *View, q viewSets, rs []rueidis.RedisResult) error {
	var bigV []store.ID
	var err error
	if q.bigV {
		if bigV, err = unhidden(rs[0], rs[1], v.Now); err != nil {
			return err
		}
		rs = rs[2:]
	}
	notes, err := standing(rs[0], v.Now)
	if err != nil {
		return err
	}
	if v.pending, err = unhidden(rs[1], rs[2], v.Now); err != nil {
		return err
	}
	rs = rs[3:]
	if q.followees {
		if v.Followees, err = unhidden(rs[0], rs[1], v.Now); err != nil {
			return err
		}
		v.fgLoaded = true
		rs = rs[2:]
	}
	v.bigV = bigV
	v.skipAuthors(notes)
	if q.compiled != nil {
		v.Keywords, err = s.ReadKeywordViewReply(v.Viewer, q.compiled, rs[0])
		return err
	}
	version, err := rs[0].ToString()
	if rueidis.IsRedisNil(err) {
		return nil // no filters
	}
	if err != nil {
		return fmt.Errorf("read the keyword filters' version: %w", err)
	}
	flat, err := flatHash(rs[1])
	if err != nil {
		return err
	}
	v.Keywords = s.keepKeywords(v.Viewer, version, flat)
	return nil
}

// Followed is what a realtime subscription of viewer follows the
// notices of, as a page's first round trip reads it (readViewSets, so
// the same accounts are left out as hidden): the big-V followees and the
// followees whose follow has yet to settle (both merged on read, never
// pushed to it), and the anchors it follows. One round trip.
func (s *Service) Followed(ctx context.Context, viewer store.ID) (bigV, pending, anchors []store.ID, err error) {
	defer store.Wrap(&err, "read what user %d follows", viewer)
	q := s.viewSetsCmds(viewer, s.Keys.FollowedAnchors(viewer), s.CompiledKeywords(viewer), true)
	rs := s.DoMulti(ctx, q.cmds...)
	if err := store.FirstErr(rs); err != nil {
		return nil, nil, nil, err
	}
	v := &View{Viewer: viewer, Now: s.NowMS()}
	if err := s.readViewSets(v, q, rs); err != nil {
		return nil, nil, nil, err
	}
	return v.bigV, v.pending, v.Followees, nil
}

// bigVCmds read viewer's big-V followees and, by intersection with the
// hidden authors, those of them hidden (unhidden reads the two replies).
func (s *Service) bigVCmds(viewer store.ID) []rueidis.Completed {
	bf, hx := s.Keys.BigFollowees(viewer), s.Keys.HiddenAuthors(viewer)
	return []rueidis.Completed{
		s.Redis.B().Smembers().Key(bf).Build(),
		s.Redis.B().Zinter().Numkeys(2).Key(bf, hx).AggregateMax().Withscores().Build(),
	}
}

// loadBigV reads the big-V followees of a view loaded without them, in a
// round trip of its own: its reader, which this process last saw with a
// complete inbox, has an incomplete one now (back from dormancy).
func (s *Service) loadBigV(ctx context.Context, v *View) (err error) {
	rs := s.DoMulti(ctx, s.bigVCmds(v.Viewer)...)
	if err := store.FirstErr(rs); err != nil {
		return err
	}
	v.bigV, err = unhidden(rs[0], rs[1], v.Now)
	return err
}

// unhidden reads a reply of members, less those the reply of their
// intersection with the hidden authors says are hidden at now (ms).
func unhidden(ids, hidden rueidis.RedisResult, now int64) ([]store.ID, error) {
	all, err := idsReply(ids)
	if err != nil {
		return nil, err
	}
	drop, err := standing(hidden, now)
	if err != nil {
		return nil, err
	}
	return without(all, drop), nil
}

// idsReply reads a reply of members.
func idsReply(r rueidis.RedisResult) ([]store.ID, error) {
	ms, err := r.AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("read the viewer's sets: %w", err)
	}
	return IdsOf(ms)
}

// standing reads a reply of members with the time (ms) each one's entry
// ends, and returns those that end after now.
func standing(r rueidis.RedisResult, now int64) ([]store.ID, error) {
	es, err := core.ParseEntries(r)
	if err != nil {
		return nil, fmt.Errorf("read the viewer's hidden authors: %w", err)
	}
	var out []store.ID
	for _, e := range es {
		if e.TS > now {
			out = append(out, e.ID)
		}
	}
	return out, nil
}

// without is ids less those in drop (a few: the hidden authors).
func without(ids, drop []store.ID) []store.ID {
	if len(drop) == 0 {
		return ids
	}
	out := ids[:0:0]
	for _, id := range ids {
		if !slices.Contains(drop, id) {
			out = append(out, id)
		}
	}
	return out
}

// visibleFollowees returns the accounts viewer follows, less those hidden
// from it: the following set and its hidden members, as a page that
// pulls reads them with its view (viewSetsCmds), in plain commands (a
// script cost Redis more for the same reads, copying every followee
// through Lua).
func (s *Service) visibleFollowees(ctx context.Context, tl core.Timeline, viewer store.ID) ([]store.ID, error) {
	fg := tl.Followees(viewer)
	rs := s.DoMulti(ctx, followeesCmds(s.Redis.B(), fg, s.Keys.HiddenAuthors(viewer))...)
	if err := store.FirstErr(rs); err != nil {
		return nil, err
	}
	return unhidden(rs[0], rs[1], s.NowMS())
}

// followeesCmds read the following set fg and, with the time each hiding
// ends, its members in the hidden authors hx (see unhidden).
func followeesCmds(b rueidis.Builder, fg, hx string) []rueidis.Completed {
	return []rueidis.Completed{b.Zrange().Key(fg).Min("0").Max("-1").Build(),
		b.Zinter().Numkeys(2).Key(fg, hx).AggregateMax().Withscores().Build()}
}

// skipAuthors adds ids to the view's authors whose items a page leaves
// out.
func (v *View) skipAuthors(ids []store.ID) {
	if len(ids) > 0 && v.Skip == nil { // usually none: no map for most pages
		v.Skip = make(map[store.ID]bool, len(ids))
	}
	for _, id := range ids {
		v.Skip[id] = true
	}
}

// pushTargets replies the next targets of a fan-out task: the members of
// the followers or active set KEYS[1] in the lex range ARGV[1]..ARGV[2],
// at most ARGV[3] of them, less the readers in the author's no-push set
// KEYS[2] with an end after ARGV[4] ms (ARGV[4] empty: none left out for
// that) and less the author's dormant followers KEYS[3], whose inboxes are
// dropped (a delete need not reach them either: a dormant reader's inbox
// is emptied when it returns, before pushes resume). It replies {scanned,
// last scanned, targets...}: the task moves on past every member scanned,
// written or not. One slot: the author's.
var pushTargets = store.NewScript(true, `
local ms = redis.call('ZRANGE', KEYS[1], ARGV[1], ARGV[2], 'BYLEX', 'LIMIT', 0, tonumber(ARGV[3]))
if #ms == 0 then return {0} end
local out = {#ms, ms[#ms]}
local filter = ARGV[4] ~= '' and redis.call('EXISTS', KEYS[2]) == 1
local dormant = redis.call('EXISTS', KEYS[3]) == 1
local now = tonumber(ARGV[4])
for _, m in ipairs(ms) do
  local u = filter and redis.call('ZSCORE', KEYS[2], m)
  if (not u or tonumber(u) <= now) and not (dormant and redis.call('ZSCORE', KEYS[3], m)) then
    out[#out + 1] = m
  end
end
return out
`)

// targetChunk is one read of a task's targets.
type targetChunk struct {
	scanned int      // members of the set read
	last    string   // the last of them; the task goes on after it
	targets []string // those to write
}

// readTargets reads the next chunk of t's targets after lo.
func (s *Service) readTargets(ctx context.Context, t Task, lo string) (targetChunk, error) {
	// The script reads the set beside the author's no-push set, so the set
	// must be one of the author's (its followers or active followers): a
	// task naming another key could not be sent to a cluster at all, and
	// fails here, every time, into the dead letters.
	if t.Set != s.Keys.Followers(t.Author) && t.Set != s.Keys.Active(t.Author) {
		return targetChunk{}, fmt.Errorf("read task targets: %q is not a target set of author %d", t.Set, t.Author)
	}
	now := ""
	if !core.Removal(t.Type) {
		now = store.ScoreArg(s.NowMS())
	}
	arr, err := s.Do(ctx, pushTargets.Cmd(s.Redis.B(), []string{t.Set, s.Keys.NoPush(t.Author), s.Keys.Dormant(t.Author)},
		[]string{lo, t.Hi, store.Itoa(ChunkSize), now})).ToArray()
	if err != nil {
		return targetChunk{}, fmt.Errorf("read task targets: %w", err)
	}
	var c targetChunk
	n, _ := arr[0].AsInt64()
	if c.scanned = int(n); c.scanned == 0 {
		return c, nil
	}
	c.last, _ = arr[1].ToString()
	c.targets = make([]string, 0, len(arr)-2)
	for _, m := range arr[2:] {
		str, _ := m.ToString()
		c.targets = append(c.targets, str)
	}
	return c, nil
}

// ReadUnblocked reads post (nil when it does not exist) and refuses it
// with FORBIDDEN when a block stands between viewer and its author: at
// most one round trip besides the read when the viewer blocks or is
// blocked by anyone. The post is read through the client-side cache,
// unless fresh: a caller that must not act on a post deleted a moment ago
// (whose invalidation may still be on its way) reads it from Redis, in
// the same round trip as the viewer's blocks.
func (s *Service) ReadUnblocked(ctx context.Context, viewer, post store.ID, fresh bool) (*content.Post, error) {
	var p *content.Post
	var any bool
	read := s.CachedPosts
	if fresh {
		read = s.Posts
	}
	err := roundtrip.Parallel(ctx,
		func(ctx context.Context) error {
			ps, err := read(ctx, []store.ID{post})
			if err == nil {
				p = ps[0]
			}
			return err
		},
		func(ctx context.Context) error {
			n, err := s.Do(ctx, s.Redis.B().Exists().Key(s.Keys.Blocks(viewer), s.Keys.BlockedBy(viewer)).Build()).AsInt64()
			any = n > 0
			return err
		})
	if err != nil || !any || p == nil || p.Author == 0 {
		return p, err // a missing post: the caller answers NOT_FOUND
	}
	if blocked, err := s.Blocked(ctx, viewer, p.Author); err != nil || !blocked {
		return p, err
	}
	return nil, ErrBlocked()
}

// LuaKeywordView: keywords(kf, kfv, have) is what a page reads of a
// viewer's filters kf with their version kfv, given the version have the
// replica has compiled (empty: none): false when the viewer has no
// filters, the version alone when it is have, else {version, id, record,
// id, record...}.
const LuaKeywordView = `
local function keywords(kf, kfv, have)
  local v = redis.call('GET', kfv)
  if not v then return false end
  if v == have then return v end
  local out = redis.call('HGETALL', kf)
  table.insert(out, 1, v)
  return out
end
`

func (s *Service) KeywordKeys(viewer store.ID) []string {
	return []string{s.Keys.KeywordFilters(viewer), s.Keys.KeywordVersion(viewer)}
}

// CompiledKeywords is the set of viewer's filters this process has
// compiled, nil if none: a page sends its version (Version) with its
// first read.
func (s *Service) CompiledKeywords(viewer store.ID) *keyword.Set {
	ks, _ := s.Keywords.Get(viewer)
	return ks
}

// ReadKeywordView reads what luaKeywordView replied for viewer, sent with
// have's version: the filters that apply to its page, compiled anew (and
// kept) when they changed; nil when it has none.
func (s *Service) ReadKeywordView(viewer store.ID, have *keyword.Set, msg rueidis.RedisMessage) (*keyword.Set, error) {
	if msg.IsNil() {
		if have != nil {
			s.Keywords.Remove(viewer)
		}
		return nil, nil
	}
	if !msg.IsArray() {
		v, err := msg.ToString()
		if err != nil || have == nil || v != have.Version() {
			return nil, fmt.Errorf("read the keyword filters' version: %q, %w", v, err)
		}
		return have, nil
	}
	arr, _ := msg.ToArray()
	flat := make([]string, len(arr))
	for i, m := range arr {
		flat[i], _ = m.ToString()
	}
	if len(flat)%2 != 1 {
		return nil, fmt.Errorf("read the keyword filters: a reply of %d values", len(flat))
	}
	return s.keepKeywords(viewer, flat[0], flat[1:]), nil
}

// keepKeywords compiles viewer's filters at version from their hash
// (flat) and keeps them for the viewer's next pages on this process.
func (s *Service) keepKeywords(viewer store.ID, version string, flat []string) *keyword.Set {
	ks := CompileKeywords(viewer, version, flat)
	s.Keywords.Add(viewer, ks)
	return ks
}

// flatHash is an HGETALL reply (a map in RESP3, an array in RESP2) as
// field, value, ...
func flatHash(r rueidis.RedisResult) ([]string, error) {
	m, err := r.AsStrMap()
	if err != nil {
		return nil, fmt.Errorf("read the keyword filters: %w", err)
	}
	flat := make([]string, 0, 2*len(m))
	for k, v := range m {
		flat = append(flat, k, v)
	}
	return flat, nil
}

// keywordView replies, in an array of one, what luaKeywordView reads of
// the viewer's filters KEYS[1] with their version KEYS[2], given the
// version ARGV[1]: the read of a page that reads no other relations of
// its viewer in a script (a list's), and of a feed page whose viewer has
// filters this process compiled (viewSets), in its first round trip: the
// filters come back only when they changed.
var keywordView = store.NewScript(true, LuaKeywordView+`
return {keywords(KEYS[1], KEYS[2], ARGV[1])}
`)

// KeywordViewCmd reads viewer's keyword filters unless they are those of
// version (keywordView); readKeywordViewReply reads its reply.
func (s *Service) KeywordViewCmd(viewer store.ID, version string) rueidis.Completed {
	return keywordView.Cmd(s.Redis.B(), s.KeywordKeys(viewer), []string{version})
}

// ReadKeywordViewReply reads keywordView's reply for viewer, sent with
// have's version, as readKeywordView does.
func (s *Service) ReadKeywordViewReply(viewer store.ID, have *keyword.Set, r rueidis.RedisResult) (*keyword.Set, error) {
	arr, err := r.ToArray()
	if err == nil && len(arr) != 1 {
		err = fmt.Errorf("a reply of %d values", len(arr))
	}
	if err != nil {
		return nil, fmt.Errorf("read the keyword filters: %w", err)
	}
	return s.ReadKeywordView(viewer, have, arr[0])
}

// Filtered reports whether one of the viewer's keyword filters in force
// at the page's time matches text. Reads apply it to a post's text and a
// live session's title; it is what applies a viewer's filters to any
// other text a page shows (a replied-to or reposted post's). Safe for
// concurrent use.
func (v *View) Filtered(text string) bool { return v.Keywords.Matches(text, v.Now) }

// CompileKeywords compiles viewer's filters at version from their hash
// (flat: id, record, ...). Expired filters are kept: the page checks each
// end against its own time.
func CompileKeywords(viewer store.ID, version string, flat []string) *keyword.Set {
	rules := make([]keyword.Rule, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		f, ok := ParseKeywordFilter(viewer, flat[i], flat[i+1])
		if !ok {
			continue
		}
		until := int64(0)
		if f.ExpiresAt != nil {
			until = f.ExpiresAt.UnixMilli()
		}
		rules = append(rules, keyword.NewRule(f.Keyword, f.WholeWord, until))
	}
	return keyword.NewSet(version, rules)
}

// Blocked reports whether a block stands between viewer and other, either
// way: both read in viewer's slot (its blocks and the mirror of blocks of
// it), one round trip.
func (s *Service) Blocked(ctx context.Context, viewer, other store.ID) (_ bool, err error) {
	defer store.Wrap(&err, "read blocks between %d and %d", viewer, other)
	if viewer == 0 || other == 0 || viewer == other {
		return false, nil
	}
	return parseBlocked(s.DoMulti(ctx, s.blockedCmds(viewer, other)...))
}

func (s *Service) blockedCmds(viewer, other store.ID) []rueidis.Completed {
	m := store.Member(other)
	return []rueidis.Completed{
		s.Redis.B().Zscore().Key(s.Keys.Blocks(viewer)).Member(m).Build(),
		s.Redis.B().Zscore().Key(s.Keys.BlockedBy(viewer)).Member(m).Build(),
	}
}

func parseBlocked(rs []rueidis.RedisResult) (bool, error) {
	for _, r := range rs {
		if ok, err := store.IsMember(r); err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// ParseKeywordFilter reads owner's filter id from its record.
func ParseKeywordFilter(owner store.ID, id, rec string) (core.KeywordFilter, bool) {
	parts := strings.SplitN(rec, " ", 4)
	if len(parts) != 4 {
		return core.KeywordFilter{}, false
	}
	fid, err := store.ParseID(id)
	created, err1 := core.ParseInt(parts[1])
	expires, err2 := core.ParseInt(parts[2])
	if err != nil || err1 != nil || err2 != nil {
		return core.KeywordFilter{}, false
	}
	f := core.KeywordFilter{ID: fid, User: owner, Keyword: parts[3], WholeWord: parts[0] == "1",
		CreatedAt: time.UnixMilli(created).UTC()}
	if expires > 0 {
		at := time.UnixMilli(expires).UTC()
		f.ExpiresAt = &at
	}
	return f, true
}
