package timeline

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/keyword"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/roundtrip"
)

// Page sizes, for every paged read: a page holds DefaultPageSize items
// when its request gives no size, and at most MaxPageSize. The API's
// checks and cost table use them too.
const (
	DefaultPageSize = 20
	MaxPageSize     = 100
)

const (
	// MaxRounds bounds how often one page reads on when filtering (tombstones,
	// unfollowed authors) leaves it short; maxBatch bounds one round's reads.
	MaxRounds = 8
	maxBatch  = 512
)

// View is what a read knows of its viewer, loaded in its first round trip.
type View struct {
	tl        core.Timeline
	Viewer    store.ID
	Skip      map[store.ID]bool // recent unfollows and hidden followees, whose items may linger in the inbox
	Followees []store.ID        // read only when a page goes below the inbox horizon
	fgLoaded  bool
	// reached: an Older read went down to the inbox's horizon (the
	// inbox ran out above it, or the read started below it), so the
	// page after this one pulls (see page).
	reached bool
	// below: the horizon the page pulled below (pulledSources), from
	// the outboxes of the viewer and of Followees; nil: it did not.
	below    *store.Item
	bigV     []store.ID  // big-V followees, pulled unless the inbox is complete
	pending  []store.ID  // followees whose follow has yet to backfill the inbox: pulled
	complete bool        // the inbox holds every post pushed or backfilled
	horizon  *store.Item // inbox holds everything at or above it; nil: everything
	spec     specRead
	Extra    []rueidis.Completed // writes to send with the next round trip
	// alongside: the page's FeedRequest.Alongside, until called, with
	// at most alongsideN items: those a page short of reposts to decide
	// reads (firstBatch), so a warm page that calls it (a post new to
	// the replica) hydrates no more than that. early: it may be called
	// with the read of the items too, when their authors are known
	// (owners), as every item's is on a page that pulls, on a replica
	// that has not pulled for the viewer (see earlyShown).
	alongside  func(context.Context, []core.Shown) error
	alongsideN int
	early      bool
	owners     map[store.ID]store.ID // items whose author is known: read from its outbox, or its post read
	unowned    []store.ID            // items merged whose author is not known yet
	Keywords   *keyword.Set          // the viewer's keyword filters (filtered); nil: none
	Now        int64                 // ms, the page's time, which filters' ends are compared with
}

// specRead is the inbox seek sent with the view load, used by round one,
// and the seeks of the outboxes the viewer's last pages on this process
// merged (outs), used where the page merges them again from where they
// were sought (see serves).
type specRead struct {
	from  *store.Item
	limit int
	seek  seekReq
	res   []rueidis.RedisResult
	ok    bool
	outs  []outSeek
}

// outSeek is an outbox's seek from `from` in order o sent with the view
// load, whose replies start at index at of the load's.
type outSeek struct {
	key       string
	o         core.ScanOrder
	from      *store.Item
	limit, at int
	seek      seekReq
	res       []rueidis.RedisResult
}

// out is a seek of the outbox key sent with the view that serves a read
// from cur in order o, nil if none.
func (sp *specRead) out(key string, o core.ScanOrder, cur *store.Item) *outSeek {
	for i := range sp.outs {
		if q := &sp.outs[i]; q.key == key && q.serves(o, cur) {
			return q
		}
	}
	return nil
}

// Entry is an item found for a page (a post, a replay), with its position.
type Entry[T any] struct {
	It  store.Item
	Val *T
}

// Loader reads the items' values and returns those the viewer may see,
// nil for the others.
type Loader[T any] func(ctx context.Context, v *View, items []store.Item) ([]*T, error)

// FollowingFeed returns one page of viewer's following feed: the posts of
// the viewer and of everyone the viewer follows, newest first. See
// FeedRequest for paging.
func (s *Service) FollowingFeed(ctx context.Context, req core.FeedRequest) (_ *core.FeedPage, err error) {
	defer store.Wrap(&err, "following feed of user %d", req.Viewer)
	o, n, raw, err := pageArgs(req)
	if err != nil {
		return nil, err
	}
	var pos *store.Item
	var pull bool
	if raw != "" {
		c, err := s.OpenCursor(ctx, raw, req.Viewer)
		if err != nil {
			return nil, err
		}
		if c.State != cursor.StateTimeline && c.State != cursor.StatePull || c.Session != "" {
			return nil, apierr.Errorf(apierr.InvalidCursor, "this cursor belongs to another feed; request the first page without a cursor")
		}
		it := c.Item()
		pos, pull = &it, c.State == cursor.StatePull
	}
	note, seen := s.Readers.Get(req.Viewer)
	note.Deep = note.Deep || !seen // a viewer's first page here reads deep
	batch := firstBatch(o, n, note.Deep)
	guess, _ := s.Pulled.Get(req.Viewer)
	var below core.Pull
	if pull {
		below, _ = s.PulledBelow.Get(req.Viewer)
	}
	v, err := s.loadView(ctx, s.PostsTL(), req.Viewer, o, pos, batch, viewHints{pull: pull, guess: guess, below: below, complete: note.Complete && note.Fresh(s.NowMS(), s.Opts.ActiveWindow)})
	if err != nil {
		return nil, err
	}
	if o == core.Older {
		// A replica that remembers no pull of the viewer's (nor the
		// outboxes its last page merged) has not served it, and reads
		// the items' posts from Redis.
		v.alongside, v.alongsideN = req.Alongside, firstBatch(o, n, false)
		v.early = len(below.Authors) == 0 && len(guess) == 0
	}
	found, scanned, more, used, err := s.fillFeedPage(ctx, v, o, pos, n, batch)
	if err != nil {
		return nil, err
	}
	s.Readers.Put(req.Viewer, noted(note, o, n, used, v))
	s.notePulled(req.Viewer, guess, v.pulled())
	s.notePulledBelow(req.Viewer, below, v)
	return s.page(req, o, n, found, scanned, more, v.horizon, v.reached), nil
}

func pageArgs(r core.FeedRequest) (core.ScanOrder, int, string, error) {
	bad := func(msg string) (core.ScanOrder, int, string, error) {
		return core.Older, 0, "", apierr.Errorf(apierr.BadInput, "%s", msg)
	}
	switch {
	case r.First < 0 || r.First > MaxPageSize:
		return bad(fmt.Sprintf("first must be between 1 and %d", MaxPageSize))
	case r.Last < 0 || r.Last > MaxPageSize:
		return bad(fmt.Sprintf("last must be between 1 and %d", MaxPageSize))
	case r.First > 0 && r.Last > 0:
		return bad("use first (older posts) or last (newer posts), not both")
	case r.After != "" && r.Before != "":
		return bad("use after or before, not both")
	case r.First > 0 && r.Before != "", r.Last > 0 && r.After != "":
		return bad("first goes with after, last with before")
	case r.Last > 0 && r.Before == "":
		return bad("last needs before: it returns posts newer than a cursor")
	case r.Before != "":
		return core.Newer, OrDefault(r.Last), r.Before, nil
	}
	return core.Older, OrDefault(r.First), r.After, nil
}

func OrDefault(n int) int {
	if n == 0 {
		return DefaultPageSize
	}
	return n
}

// LoadView reads the viewer's reader state, big-V followees (less those
// hidden from it), recent unfollows and hide notes, its keyword filters
// (only their version when this process has them compiled), records the
// read, and speculatively seeks the inbox for round one, all in one round
// trip.
// Nothing it reads grows with the network, with followees who do not post
// or with the viewer's blocks and mutes: the following set itself is read
// only by a page that goes below the inbox horizon (or a first live page).
func (s *Service) LoadView(ctx context.Context, tl core.Timeline, viewer store.ID, o core.ScanOrder, pos *store.Item, limit int) (*View, error) {
	return s.loadView(ctx, tl, viewer, o, pos, limit, viewHints{})
}

// viewHints are what a page's view load adds or leaves out on what this
// process knows of the viewer (see loadView).
type viewHints struct {
	// pull: the page starts below the horizon (a StatePull cursor).
	pull bool
	// guess: the outboxes the viewer's last page merged besides its inbox
	// (Service.Pulled).
	guess []store.ID
	// below: with pull, what the viewer's last page below the horizon
	// pulled (Service.PulledBelow).
	below core.Pull
	// complete: the viewer's inbox was complete at its last page, too
	// recently to be demoted since (core.ReaderNote.Fresh).
	complete bool
}

// loadView is LoadView reading the following set too when h.pull says the
// page starts below the horizon, where it will; seeking the outboxes of
// h.guess from pos, and those of h.below from pos or, for a page that
// starts above the horizon h.below was pulled below, from that horizon,
// as the page will when they are still to be merged (see seekAndMerge),
// so that a reader whose inbox is incomplete pays no round trip of its
// own for its big-V followees, nor a page below the horizon for its
// pull, once this process has served it; and, when h.complete, not
// reading the big-V followees, which
// a complete inbox does not merge (should the inbox be incomplete now,
// they are read in a round trip of their own).
func (s *Service) loadView(ctx context.Context, tl core.Timeline, viewer store.ID, o core.ScanOrder, pos *store.Item, limit int, h viewHints) (*View, error) {
	now := s.NowMS()
	since := now - UnfollowMemory.Milliseconds()
	compiled := s.CompiledKeywords(viewer)
	var eager string
	if tl.EagerFollowees || h.pull {
		eager = tl.Followees(viewer)
	}
	sets := s.viewSetsCmds(viewer, eager, compiled, !h.complete)
	seek := s.seekCmds(o, Source{Key: tl.Inbox(viewer), horizon: tl.Horizon(viewer)}, pos, limit)
	unfollows, complete, seekAt := len(sets.cmds), len(sets.cmds)+1, len(sets.cmds)+2
	cmds := append(append(sets.cmds,
		s.Redis.B().Zrange().Key(s.Keys.Unfollowed(viewer)).Min(store.ScoreArg(since)).Max("+inf").Byscore().Build(),
		s.Redis.B().Hget().Key(s.Keys.Reader(viewer)).Field("c").Build(),
	), seek.cmds...)
	outs := make([]outSeek, 0, len(h.guess)+len(h.below.Authors))
	// Each asked for what the page would ask: a pull merges the outboxes
	// alone, a read above the horizon the inbox and the outboxes.
	seekOut := func(f store.ID, from *store.Item, each int) {
		key := tl.Outbox(f)
		q := outSeek{key: key, o: o, from: from, limit: each, at: len(cmds), seek: s.seekCmds(o, Source{Key: key}, from, each)}
		outs, cmds = append(outs, q), append(cmds, q.seek.cmds...)
	}
	each := perSource(limit, 1+len(h.guess))
	for _, f := range h.guess {
		seekOut(f, pos, each)
	}
	below := pos
	if o == core.Older {
		below = h.below.From(pos)
	}
	each = perSource(limit, len(h.below.Authors))
	for _, f := range h.below.Authors {
		// A big-V followee, pulled above the horizon and below, is
		// sought once from one place (h.guess is a few big-V followees).
		if !samePos(below, pos) || !slices.Contains(h.guess, f) {
			seekOut(f, below, each)
		}
	}
	if t := s.TouchCmd(viewer); t != nil {
		cmds = append(cmds, *t)
	}
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs); err != nil {
		return nil, err
	}
	for i := range outs {
		outs[i].res = rs[outs[i].at : outs[i].at+len(outs[i].seek.cmds)]
	}
	seekRes := rs[seekAt : seekAt+len(seek.cmds)]
	v := &View{tl: tl, Viewer: viewer, spec: specRead{from: pos, limit: limit, seek: seek, res: seekRes, ok: true, outs: outs}, Now: now}
	if err := s.readViewSets(v, sets, rs[:len(sets.cmds)]); err != nil {
		return nil, err
	}
	uf, _ := rs[unfollows].AsStrSlice()
	ufIDs, err := IdsOf(uf)
	if err != nil {
		return nil, err
	}
	v.skipAuthors(ufIDs)
	c, _ := rs[complete].ToString()
	v.complete = c == "1"
	if !v.complete && !sets.bigV {
		if err := s.loadBigV(ctx, v); err != nil {
			return nil, err
		}
	}
	_, hz, err := seek.parse(seekRes)
	switch {
	case errors.Is(err, errHorizonMoved):
		v.spec.ok = false // read across a new generation: seek again
	case err != nil && !errors.Is(err, errSeekTies):
		return nil, err
	}
	v.horizon = hz
	if !v.complete && s.Activations.Due(viewer, now) {
		// A returning reader: served by merge now, upgraded in the background.
		v.Extra = append(v.Extra, s.EmitCmd(core.Event{Type: core.EvActivate, User: viewer}))
	}
	return v, nil
}

// loadFollowees reads the viewer's following set, less the followees
// hidden from it, once per page, for the pull below the inbox horizon.
func (s *Service) loadFollowees(ctx context.Context, v *View) error {
	if v.fgLoaded {
		return nil
	}
	ids, err := s.visibleFollowees(ctx, v.tl, v.Viewer)
	if err != nil {
		return err
	}
	v.Followees, v.fgLoaded = ids, true
	return nil
}

// FillTimelinePage walks the timeline from pos in order o until it has need visible
// posts, the timeline ends, or the read bound is reached. It returns the
// posts found, how far it scanned, and whether more may follow.
func FillTimelinePage[T any](ctx context.Context, s *Service, v *View, o core.ScanOrder, pos *store.Item, need int, load Loader[T]) ([]Entry[T], *store.Item, bool, error) {
	return FillPage(pos, need, func(_ int, cur *store.Item, batch int) ([]store.Item, []*T, *store.Item, error) {
		items, next, err := s.readTimeline(ctx, v, o, cur, batch)
		if err != nil {
			return nil, nil, nil, err
		}
		vals, err := load(ctx, v, items)
		return items, vals, next, err
	})
}

// readRound reads one round of a page from cur (nil: the top), at most
// batch entries: the entries, what the page shows of each (nil where the
// viewer is not to see it), and where the next round starts (nil: the
// list ended). round counts from 0.
type readRound[T any] func(round int, cur *store.Item, batch int) (items []store.Item, vals []*T, next *store.Item, err error)

// FillPage is the page filler of every list but the following feed, which
// also dedupes (fillFeedPage): it reads rounds from pos until need entries
// are shown, the list ends, or the read bound is reached (maxRounds
// rounds, each twice the last up to maxBatch), so a page's work is
// bounded whatever the viewer hides. It returns the entries found, how
// far it read, and whether more may follow.
func FillPage[T any](pos *store.Item, need int, read readRound[T]) ([]Entry[T], *store.Item, bool, error) {
	var found []Entry[T]
	cur, batch := pos, need
	for round := 0; round < MaxRounds; round++ {
		items, vals, next, err := read(round, cur, batch)
		if err != nil {
			return nil, nil, false, err
		}
		for i, val := range vals {
			if val == nil {
				continue
			}
			found = append(found, Entry[T]{It: items[i], Val: val})
			if len(found) == need {
				return found, &items[i], true, nil
			}
		}
		if len(items) > 0 {
			cur = &items[len(items)-1]
		}
		if next == nil {
			return found, cur, false, nil
		}
		cur = next
		batch = min(2*batch, maxBatch)
	}
	return found, cur, true, nil
}

// Source is a timeline to read, and the part of it that counts: entries at
// or above min (when set) and below max (when set).
type Source struct {
	Key      string
	min, max *store.Item
	horizon  string   // set for an inbox: its seek also returns the horizon kept here
	owner    store.ID // set for an outbox: the author of every entry (posts and repost records)
}

func (src Source) keeps(it store.Item) bool {
	return (src.min == nil || !src.min.Before(it)) && (src.max == nil || src.max.Before(it))
}

// pastEnd reports whether it lies beyond the kept part in scan order o.
func (src Source) pastEnd(o core.ScanOrder, it store.Item) bool {
	if o == core.Older {
		return src.min != nil && src.min.Before(it)
	}
	return src.max != nil && !src.max.Before(it)
}

// errHorizonMoved: the inbox was trimmed or backfilled while a page was
// being read, so its horizon rose; the scan restarts with the new one.
var errHorizonMoved = errors.New("inbox horizon moved")

// readTimeline returns the next (at most limit) timeline entries after cur in
// order o, and where the next readTimeline should start: nil when nothing is left.
//
// Sources: the inbox holds everything pushed at or above its horizon;
// unless the inbox is complete, big-V followees' outboxes are merged in;
// below the horizon every followee's outbox (and the viewer's own) is
// pulled, so the feed never ends early at the inbox cap. Each inbox read
// returns the horizon atomically with its entries; one that has risen
// since the view was loaded restarts the readTimeline, so every round reads
// sources that are complete for the ranges it takes from them.
func (s *Service) readTimeline(ctx context.Context, v *View, o core.ScanOrder, cur *store.Item, limit int) ([]store.Item, *store.Item, error) {
	for range 8 {
		items, next, err := s.readAcrossHorizon(ctx, v, o, cur, limit)
		if err != errHorizonMoved {
			return items, next, err
		}
	}
	return nil, nil, errors.New("inbox horizon kept moving while reading a page")
}

func (s *Service) readAcrossHorizon(ctx context.Context, v *View, o core.ScanOrder, cur *store.Item, limit int) ([]store.Item, *store.Item, error) {
	hz := v.horizon
	if hz == nil {
		return s.seekAndMerge(ctx, v, o, cur, limit, s.pushedSources(v, nil))
	}
	// The phase below the horizon is built only when scanned: it needs the
	// following set, which a page above the horizon never reads.
	above := func() ([]Source, error) { return s.pushedSources(v, hz), nil }
	below := func() ([]Source, error) { return s.pulledSources(ctx, v, hz) }
	first, second, secondFrom := above, below, hz
	if o == core.Older && cur != nil && !cur.Before(*hz) {
		v.reached = true
		return s.seekAndMergeOf(ctx, v, o, cur, limit, below)
	}
	if o == core.Newer {
		if cur != nil && !hz.Before(*cur) { // cur at or above the horizon
			return s.seekAndMergeOf(ctx, v, o, cur, limit, above)
		}
		// The inbox may hold entries below the horizon; seeking the second
		// phase from just below it keeps them from masking its frontier.
		justBelow := store.Item{TS: hz.TS, ID: hz.ID - 1}
		first, second, secondFrom = below, above, &justBelow
	}
	items, next, err := s.seekAndMergeOf(ctx, v, o, cur, limit, first)
	if err != nil || next != nil || len(items) >= limit {
		return items, next, err
	}
	if o == core.Older {
		v.reached = true // the inbox ran out above the horizon
	}
	if o == core.Older && len(items) > 0 && !v.fgLoaded {
		// The inbox ran out above the horizon. A round may read more than
		// its page shows (the repost window), and the page may well be
		// decided on what the inbox held: the pull below the horizon (the
		// following set, then every followee's outbox: two round trips)
		// is left to the next round, which only a page still undecided
		// reads. The next round starts at the horizon, as the second
		// phase would have. A page whose cursor said it would pull
		// (StatePull) has the following set already and pulls in this
		// round: the inbox's last entries and the outboxes' first then
		// cost one lookup of their posts, not two.
		return items, hz, nil
	}
	more, next, err := s.seekAndMergeOf(ctx, v, o, secondFrom, limit-len(items), second)
	return append(items, more...), next, err
}

// seekAndMergeOf is seekAndMerge over the sources srcs builds.
func (s *Service) seekAndMergeOf(ctx context.Context, v *View, o core.ScanOrder, cur *store.Item, limit int, srcs func() ([]Source, error)) ([]store.Item, *store.Item, error) {
	ss, err := srcs()
	if err != nil {
		return nil, nil, err
	}
	return s.seekAndMerge(ctx, v, o, cur, limit, ss)
}

// Pending are the followees whose follow has yet to settle (read with the
// view), less those hidden from the viewer: until it settles, nothing
// derived from the follow (the inbox's backfill, the followed anchors)
// holds them.
func (v *View) Pending() []store.ID { return v.pending }

// pushedSources are the inbox and, for an incomplete inbox, the outboxes of
// big-V followees, kept at or above hz; and the outboxes of followees
// whose follow has yet to settle (Follow), complete inbox or not: the
// backfill that puts their posts in the inbox has not run.
func (s *Service) pushedSources(v *View, hz *store.Item) []Source {
	srcs := []Source{{Key: v.tl.Inbox(v.Viewer), min: hz, horizon: v.tl.Horizon(v.Viewer)}}
	for _, f := range v.pulled() {
		srcs = append(srcs, Source{Key: v.tl.Outbox(f), min: hz, owner: f})
	}
	return srcs
}

// hydratesEarly reports whether the page may still call its Alongside
// with the read of its items' posts (View.early).
func (v *View) hydratesEarly() bool { return v.early && v.alongside != nil }

// noteOwner records, while the page may hydrate early, that item id was
// read from owner's outbox; owner 0 (not an outbox): that its author is
// not known yet, for the next seeks' round trip to read (seekWithOwners).
func (v *View) noteOwner(id, owner store.ID) {
	switch {
	case !v.hydratesEarly():
	case owner == 0:
		if len(v.unowned) < v.alongsideN {
			v.unowned = append(v.unowned, id)
		}
	default:
		if v.owners == nil {
			v.owners = make(map[store.ID]store.ID)
		}
		v.owners[id] = owner
	}
}

// pulled are the followees whose outboxes a read above the horizon merges
// with the inbox: big-V followees for an incomplete inbox, and follows yet
// to settle.
func (v *View) pulled() []store.ID {
	var pulled []store.ID
	if !v.complete {
		pulled = v.bigV
	}
	for _, f := range v.pending {
		if !slices.Contains(pulled, f) {
			pulled = append(pulled[:len(pulled):len(pulled)], f)
		}
	}
	return pulled
}

// notePulled remembers what viewer's page merged besides its inbox, for
// its next page (loadView's guess); was is what was remembered.
func (s *Service) notePulled(viewer store.ID, was, pulled []store.ID) {
	switch {
	case len(pulled) == 0 && len(was) > 0:
		s.Pulled.Remove(viewer)
	case len(pulled) > 0 && !slices.Equal(was, pulled):
		s.Pulled.Add(viewer, slices.Clone(pulled))
	}
}

// pulledSources are every followee's outbox and the viewer's own, kept
// below hz.
func (s *Service) pulledSources(ctx context.Context, v *View, hz *store.Item) ([]Source, error) {
	if err := s.loadFollowees(ctx, v); err != nil {
		return nil, err
	}
	srcs := []Source{{Key: v.tl.Outbox(v.Viewer), max: hz, owner: v.Viewer}}
	for _, f := range v.Followees {
		srcs = append(srcs, Source{Key: v.tl.Outbox(f), max: hz, owner: f})
	}
	v.below = hz
	return srcs, nil
}

// notePulledBelow remembers what v's page pulled below the horizon, for
// viewer's next page that starts there (loadView's h.below); was is what
// was remembered.
func (s *Service) notePulledBelow(viewer store.ID, was core.Pull, v *View) {
	switch {
	case v.below == nil:
	case len(v.Followees) >= core.MaxPulledBelow:
		s.PulledBelow.Remove(viewer)
	case *v.below != was.Horizon || len(was.Authors) != 1+len(v.Followees) || !slices.Equal(was.Authors[1:], v.Followees):
		s.PulledBelow.Add(viewer, core.Pull{Horizon: *v.below, Authors: append([]store.ID{viewer}, v.Followees...)})
	}
}

// seekAndMerge seeks every source from cur in one round trip and merges.
func (s *Service) seekAndMerge(ctx context.Context, v *View, o core.ScanOrder, cur *store.Item, limit int, srcs []Source) ([]store.Item, *store.Item, error) {
	seeks := make([]seekReq, len(srcs))
	res := make([][]rueidis.RedisResult, len(srcs))
	lims := make([]int, len(srcs))
	each := perSource(limit, len(srcs))
	var cmds []rueidis.Completed
	spec := v.spec.ok && samePos(v.spec.from, cur)
	for i, src := range srcs {
		if spec && src.horizon != "" && v.spec.limit == limit {
			seeks[i], res[i], lims[i] = v.spec.seek, v.spec.res, limit
			continue
		}
		// An outbox sought with the view from the same position serves
		// whatever its limit: each source's read is merged only as far
		// as it goes (its frontier).
		if out := v.spec.out(src.Key, o, cur); out != nil {
			seeks[i], res[i], lims[i] = out.seek, out.res, out.limit
			continue
		}
		lims[i] = each
		seeks[i] = s.seekCmds(o, src, cur, each)
		cmds = append(cmds, seeks[i].cmds...)
	}
	v.spec.ok = false
	if len(cmds) > 0 {
		var rs []rueidis.RedisResult
		if err := s.seekWithOwners(ctx, v, srcs, seeks, res, func(ctx context.Context) { rs = s.DoMulti(ctx, cmds...) }); err != nil {
			return nil, nil, err
		}
		for i := range srcs {
			if res[i] == nil {
				res[i], rs = rs[:len(seeks[i].cmds)], rs[len(seeks[i].cmds):]
			}
		}
	}
	raws, hzs, err := s.parseSeeks(ctx, o, srcs, cur, lims, seeks, res)
	if err != nil {
		return nil, nil, err
	}
	reads := make([]core.SourceRead, len(srcs))
	for i, src := range srcs {
		raw, hz := raws[i], hzs[i]
		if src.horizon != "" && hz != nil && (v.horizon == nil || hz.Before(*v.horizon)) {
			v.horizon = hz
			return nil, nil, errHorizonMoved
		}
		var r core.SourceRead
		for _, it := range raw {
			if src.keeps(it) {
				r.Items = append(r.Items, it)
				v.noteOwner(it.ID, src.owner)
			}
		}
		if len(raw) == lims[i] && !src.pastEnd(o, raw[len(raw)-1]) {
			r.Frontier = &raw[len(raw)-1]
		}
		reads[i] = r
	}
	merged, frontier := core.Merge(o, reads)
	if len(merged) >= limit {
		return merged[:limit], &merged[limit-1], nil
	}
	return merged, frontier, nil
}

// seekWithOwners runs seek, the round trip of a merge's seeks. When the
// page may call its Alongside early (View.early), it reads with it the
// posts of the entries read so far whose author no outbox names: those
// an earlier merge took from an inbox (View.unowned: the inbox's part of
// a read across its horizon), and those of an inbox sought with the view
// (res set: an incomplete reader's merge). Every entry's author is then
// known before the entries' posts are read, and the page hydrates with
// them.
func (s *Service) seekWithOwners(ctx context.Context, v *View, srcs []Source, seeks []seekReq, res [][]rueidis.RedisResult, seek func(context.Context)) error {
	var ids []store.ID
	if v.hydratesEarly() {
		ids, v.unowned = v.unowned, nil
		for i, src := range srcs {
			if res[i] == nil || src.owner != 0 {
				continue
			}
			if raw, _, err := seeks[i].parse(res[i]); err == nil { // else: parsed again, and failing, below
				for _, it := range raw[:min(len(raw), v.alongsideN)] {
					ids = append(ids, it.ID)
				}
			}
		}
	}
	if len(ids) == 0 {
		seek(ctx)
		return nil
	}
	var ps []*content.Post
	err := roundtrip.Parallel(ctx,
		func(ctx context.Context) error { seek(ctx); return nil },
		func(ctx context.Context) (err error) { ps, err = s.CachedPosts(ctx, ids); return err })
	for _, p := range ps {
		if p != nil && p.Author != 0 {
			v.noteOwner(p.ID, p.Author)
		}
	}
	return err
}

// parseSeeks reads every source's seek, seeking again with the script
// (one more round trip, all at once) the sources whose plain seek the
// ties at the cursor's time filled.
func (s *Service) parseSeeks(ctx context.Context, o core.ScanOrder, srcs []Source, cur *store.Item, lims []int, seeks []seekReq, res [][]rueidis.RedisResult) ([][]store.Item, []*store.Item, error) {
	raws, hzs := make([][]store.Item, len(srcs)), make([]*store.Item, len(srcs))
	var again []int
	var cmds []rueidis.Completed
	for i := range srcs {
		raw, hz, err := seeks[i].parse(res[i])
		if errors.Is(err, errSeekTies) {
			again, cmds = append(again, i), append(cmds, s.SeekCmd(o, srcs[i], cur, lims[i]))
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		raws[i], hzs[i] = raw, hz
	}
	if len(cmds) == 0 {
		return raws, hzs, nil
	}
	for j, r := range s.DoMulti(ctx, cmds...) {
		raw, hz, err := core.ParseSeek(r)
		if err != nil {
			return nil, nil, err
		}
		raws[again[j]], hzs[again[j]] = raw, hz
	}
	return raws, hzs, nil
}

// perSource is how many entries each of n sources is asked for, for a
// merge of limit. A pull below the horizon seeks every followee's outbox:
// asking each of 2,000 for the whole limit would read up to 2,000 times
// what the page can show. Past manySources, each is asked for a share
// (twice its even part, at least minPerSource); the merge is certain only
// down to the nearest frontier of a full source, and the page reads on
// from there, as it does past any frontier.
func perSource(limit, n int) int {
	if n <= manySources {
		return limit
	}
	return min(limit, max(minPerSource, (2*limit+n-1)/n))
}

const (
	manySources  = 16
	minPerSource = 8
)

func samePos(a, b *store.Item) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// serves reports whether q serves a read from cur in order o: it was
// sought from there.
func (q *outSeek) serves(o core.ScanOrder, cur *store.Item) bool {
	return o == q.o && samePos(q.from, cur)
}

// seekReq is a seek of one source: the commands sent for it, and how to
// read their replies.
type seekReq struct {
	cmds []rueidis.Completed
	// plain: cmds are the entries (one ZRANGE), then, when horizon, the
	// inbox's horizon commands; else cmds is the seek script alone.
	plain, horizon bool
	o              core.ScanOrder
	from           *store.Item
	limit          int
}

// seekSlack is how many entries at the cursor's own time (its ties, the
// cursor's item among them) a plain seek reads beyond its limit.
const seekSlack = 4

// errSeekTies: more entries share the cursor's time than a plain seek
// read past; the seek script, which finds the cursor by rank, reads it.
var errSeekTies = errors.New("too many entries at the cursor's time for a plain seek")

// seekCmds seeks src from `from` in order o, at most limit entries, with
// plain commands: one ZRANGE BYSCORE of the entries from the cursor's
// time on (its ties first: those not past the cursor are dropped), and,
// for an inbox, what its horizon is made of (the reader hash's stored
// horizon, the inbox's cap-th entry), read after it. Redis spends about
// half as much on them as on the seek script, which copies every entry
// through Lua. The entries are one command, read at one moment, and the
// horizon only rises, so they are complete at or above a horizon read
// after them, as the script's were at the one it read with them.
func (s *Service) seekCmds(o core.ScanOrder, src Source, from *store.Item, limit int) seekReq {
	if o == core.Newer && from == nil {
		return seekReq{cmds: []rueidis.Completed{s.SeekCmd(o, src, from, limit)}}
	}
	q := seekReq{plain: true, horizon: src.horizon != "", o: o, from: from, limit: limit}
	if q.horizon {
		// The horizon's generation before the entries, to compare with
		// the one read after them: see horizonGen.
		q.cmds = append(q.cmds, s.Redis.B().Hget().Key(src.horizon).Field("hg").Build())
	}
	z := s.Redis.B().Zrange().Key(src.Key)
	switch {
	case from == nil:
		q.cmds = append(q.cmds, z.Min("+inf").Max("-inf").Byscore().Rev().Limit(0, int64(limit)).Withscores().Build())
	case o == core.Older:
		q.cmds = append(q.cmds, z.Min(store.ScoreArg(from.TS)).Max("-inf").Byscore().Rev().Limit(0, int64(limit+seekSlack)).Withscores().Build())
	default:
		q.cmds = append(q.cmds, z.Min(store.ScoreArg(from.TS)).Max("+inf").Byscore().Limit(0, int64(limit+seekSlack)).Withscores().Build())
	}
	if q.horizon {
		capAt := store.Itoa(-s.Opts.InboxCap)
		q.cmds = append(q.cmds, s.Redis.B().Hmget().Key(src.horizon).Field("ht", "hm", "hg").Build(),
			s.Redis.B().Zrange().Key(src.Key).Min(capAt).Max(capAt).Withscores().Build())
	}
	return q
}

// parse reads the replies to q's commands: the entries in scan order (at
// most q.limit) and, for an inbox, its horizon (nil: none), as
// core.ParseSeek reads the script's. It returns errSeekTies, with the
// horizon, when the ties at the cursor's time filled the read.
func (q seekReq) parse(rs []rueidis.RedisResult) ([]store.Item, *store.Item, error) {
	if !q.plain {
		return core.ParseSeek(rs[0])
	}
	var genBefore rueidis.RedisResult
	if q.horizon {
		genBefore, rs = rs[0], rs[1:]
	}
	raw, err := core.ParseEntries(rs[0])
	if err != nil {
		return nil, nil, err
	}
	var hz *store.Item
	if q.horizon {
		if hz, err = horizonOf(rs[1], rs[2]); err != nil {
			return nil, nil, err
		}
		if !sameGen(genBefore, rs[1]) {
			return nil, hz, errHorizonMoved
		}
	}
	items := raw
	if q.from != nil {
		past := 0 // the ties not past the cursor lead the read
		for past < len(raw) && raw[past].TS == q.from.TS &&
			((q.o == core.Older && raw[past].ID >= q.from.ID) || (q.o == core.Newer && raw[past].ID <= q.from.ID)) {
			past++
		}
		items = raw[past:]
		if len(items) < q.limit && len(raw) == q.limit+seekSlack {
			return nil, hz, errSeekTies
		}
	}
	return items[:min(len(items), q.limit)], hz, nil
}

// sameGen reports whether the horizon's generation read before an inbox's
// entries (HGET hg) is the one read after them (HMGET ht hm hg).
//
// Within a generation the horizon only rises, so entries read before a
// horizon are complete at or above it. A new generation starts where the
// horizon may fall: a dormant reader's inboxes are dropped (the horizon
// goes to the top, core.Top) and rebuilt when it returns (the horizon
// falls to the rebuild's floor); entries read across either are not to be
// trusted, and the read starts again.
func sameGen(before, after rueidis.RedisResult) bool {
	b, _ := before.ToString()
	f, err := after.ToArray()
	if err != nil || len(f) < 3 {
		return b == ""
	}
	a, _ := f[2].ToString()
	return a == b
}

// horizonOf is an inbox's horizon (core.LuaHorizon's horizon()) from its
// stored horizon (HMGET ht hm) and its cap-th entry (none while the inbox
// is under its cap): the higher of the two.
func horizonOf(stored, capEntry rueidis.RedisResult) (*store.Item, error) {
	capped, err := core.ParseEntries(capEntry)
	if err != nil {
		return nil, err
	}
	var hz *store.Item
	if len(capped) > 0 {
		hz = &capped[0]
	}
	f, err := stored.ToArray()
	if err != nil || len(f) < 2 || f[0].IsNil() {
		return hz, err
	}
	ts, err := core.ScoreOf(f[0])
	if err != nil {
		return nil, err
	}
	m, err := f[1].ToString()
	if err != nil {
		return nil, err
	}
	id, err := store.MemberID(m)
	if err != nil {
		return nil, err
	}
	if st := (store.Item{TS: ts, ID: id}); hz == nil || st.Before(*hz) {
		hz = &st
	}
	return hz, nil
}

func (s *Service) SeekCmd(o core.ScanOrder, src Source, from *store.Item, limit int) rueidis.Completed {
	ts, m := "", ""
	if from != nil {
		ts, m = store.ScoreArg(from.TS), store.Member(from.ID)
	}
	sc := core.SeekOlder
	if o == core.Newer {
		sc = core.SeekNewer
	}
	if src.horizon != "" {
		return sc.Cmd(s.Redis.B(), []string{src.Key, src.horizon}, []string{ts, m, store.Itoa(limit), store.Itoa(s.Opts.InboxCap)})
	}
	return sc.Cmd(s.Redis.B(), []string{src.Key}, []string{ts, m, store.Itoa(limit)})
}

// page turns what fillFeedPage found into a FeedPage of n edges.
func (s *Service) page(req core.FeedRequest, o core.ScanOrder, n int, found []Entry[feedItem], scanned *store.Item, more bool, hz *store.Item, reached bool) *core.FeedPage {
	sealer := s.Cursors() // one key for the whole page
	// A page from at or below the horizon pulls, and so does the next
	// page toward older items of one whose read reached the horizon
	// (reached): their cursors say so (StatePull), so that page reads
	// the following set with its view. A cursor above the horizon of a
	// page that did not reach it must not: the following set is read
	// whole, and a page above the horizon never needs it.
	below := func(it store.Item) bool { return hz != nil && !it.Before(*hz) }
	reached = reached && o == core.Older
	sealAs := func(it store.Item, pull bool) string {
		state := cursor.StateTimeline
		if pull || below(it) {
			state = cursor.StatePull
		}
		return sealer.Seal(cursor.Cursor{State: state, LastID: it.ID, TS: it.TS, Viewer: req.Viewer})
	}
	seal := func(it store.Item) string { return sealAs(it, false) }
	shown := found[:min(n, len(found))]
	pg := &core.FeedPage{Edges: make([]core.FeedEdge, len(shown))}
	for i, e := range shown {
		j := i
		if o == core.Newer { // found closest to the cursor first; show newest first
			j = len(shown) - 1 - i
		}
		pg.Edges[j] = core.FeedEdge{Post: e.Val.post, Repost: e.Val.repost, Cursor: seal(e.It)}
	}
	// The far end advances past everything scanned, or to the last edge
	// when the next visible post is already known.
	far := ""
	switch {
	case len(found) > n:
		far = sealAs(found[n-1].It, reached)
	case scanned != nil:
		far = sealAs(*scanned, reached)
	}
	near := req.After
	if o == core.Newer {
		near = req.Before
	}
	if len(pg.Edges) > 0 {
		if o == core.Older {
			near = pg.Edges[0].Cursor
		} else {
			near = pg.Edges[len(pg.Edges)-1].Cursor
		}
	}
	if far == "" {
		far = near
	}
	if o == core.Older {
		pg.StartCursor, pg.EndCursor = near, far
		pg.HasNext, pg.HasPrevious = more, req.After != ""
	} else {
		pg.StartCursor, pg.EndCursor = far, near
		pg.HasPrevious, pg.HasNext = more, true
	}
	return pg
}
