package realtime

import (
	"context"
	"errors"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/ratelimit"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
)

// A following feed subscription counts what a pull-to-refresh from its
// since cursor would show, with the very read the feed's page makes
// (FollowingFeed, last/before since), so every rule of the page holds for
// the count. It recounts when a notice concerns its viewer, at most once
// per Options.MinInterval, and sends an update only when the count, the
// authors or the posts that left changed.
//
// The posts that left (DeletedPostIDs) are those a removal notice names
// (a delete, a takedown: the post id) and those the subscription saw
// before and no longer sees: of the new posts it counted and of the
// viewer's screen, the page of posts at and below since, read again when
// the viewer's views change (a block, a mute, a suspension...). So a
// post newly hidden from the viewer is reported as one deleted.
//
// The pill's authors are the distinct authors of the newest counted
// items; a repost's is its reposter's, whom the viewer follows and who
// put the post in the feed (the original's author may be anyone).

// countPages bounds the pages one count reads (each of up to MaxCount
// items, within the page's own read bound).
const countPages = 3

// followSub is one followingFeedUpdates subscription.
type followSub struct {
	h      *hub
	viewer store.ID
	ctx    context.Context // the subscriber's, without its rate charge
	since  string
	out    chan FollowingUpdate

	// authors are the big-V followees and pending follows whose
	// channels it follows; under the hub's lock.
	authors []store.ID

	mu        sync.Mutex
	closed    bool
	scheduled bool // a run is waiting or running
	dirty     bool // a notice came since the last run began
	refresh   bool // the viewer's follows changed: read them again
	window    bool // the viewer's views changed: read the screen again
	removed   []store.ID
	lastRun   time.Time
	lastSent  time.Time
	sent      FollowingUpdate // what the client was sent last
	news      shownRead       // the new posts last counted
	screen    shownRead       // the screen last read
}

// shownRead is what a read showed: each post's position (its edge's:
// a repost's when a repost put it there), and the range the read is
// complete for (nil ends: unbounded), outside which a post may be gone
// from the read without having left the feed.
type shownRead struct {
	pos    map[store.ID]store.Item
	lo, hi *store.Item
}

func edgeItem(e core.FeedEdge) store.Item {
	if e.Repost != nil {
		return store.Item{TS: e.Repost.CreatedAt.UnixMilli(), ID: e.Repost.ID}
	}
	return store.Item{TS: e.Post.CreatedAt.UnixMilli(), ID: e.Post.ID}
}

func readOf(edges []core.FeedEdge, lo, hi *store.Item) shownRead {
	r := shownRead{pos: make(map[store.ID]store.Item, len(edges)), lo: lo, hi: hi}
	for _, e := range edges {
		r.pos[e.Post.ID] = edgeItem(e)
	}
	return r
}

// left appends to out the posts of prev that now does not show though it
// covers their position.
func (prev shownRead) left(now shownRead, out []store.ID) []store.ID {
	for id, it := range prev.pos {
		if _, ok := now.pos[id]; ok {
			continue
		}
		if (now.lo == nil || !it.Before(*now.lo)) && (now.hi == nil || !now.hi.Before(it)) {
			out = append(out, id)
		}
	}
	return out
}

// FollowingFeedUpdates subscribes viewer to its following feed's updates
// from the cursor since (empty: the top as it is now). The channel closes
// when ctx ends or the subscriber is dropped.
//
// The subscription is checked and counted before it returns: a since
// that is not a following feed cursor of viewer is INVALID_CURSOR, a
// subscription past Options.MaxPerViewer RATE_LIMITED
// (ErrTooManySubscriptions); a count above zero is waiting in the
// channel. Round trips: the viewer's follows, its presence mark, the
// count (2 on a warm feed) and the screen (2).
func (s *Service) FollowingFeedUpdates(ctx context.Context, viewer store.ID, since string) (_ <-chan FollowingUpdate, err error) {
	defer store.Wrap(&err, "subscribe user %d to its following feed's updates", viewer)
	h, err := s.joinAs(viewer)
	if err != nil {
		return nil, err
	}
	// scheduled until its first count is done: a notice meanwhile waits
	// for it (dirty), so the count and the runs after it never overlap.
	f := &followSub{h: h, viewer: viewer, ctx: ratelimit.WithoutCharge(ctx), since: since, out: make(chan FollowingUpdate, 1),
		scheduled: true}
	if err := f.start(ctx); err != nil {
		return nil, err
	}
	return f.out, nil
}

// start registers f (its channels, its presence), then counts: a post
// whose fan-out ran after the mark is told to f, one before it is in the
// count. It sends the count when above zero.
func (f *followSub) start(ctx context.Context) error {
	h := f.h
	bigV, pending, _, err := h.s.Followed(ctx, f.viewer)
	if err != nil {
		h.leave(f.viewer)
		return err
	}
	first, err := h.addFollow(f, union(bigV, pending))
	if err != nil {
		h.leave(f.viewer)
		return err
	}
	h.s.stats.subscriptions.Add(1)
	if first {
		if err := h.mark(ctx, f.viewer); err != nil {
			f.close()
			return err
		}
	}
	if err := f.first(ctx); err != nil {
		f.close()
		return err
	}
	context.AfterFunc(ctx, f.close)
	return nil
}

// first reads the screen (which, without since, finds it: the top item)
// and the count, and sends the count when above zero.
func (f *followSub) first(ctx context.Context) error {
	s := f.h.s
	start := time.Now()
	if f.since == "" {
		pg, err := s.FollowingFeed(ctx, core.FeedRequest{Viewer: f.viewer, First: timeline.DefaultPageSize})
		if err != nil {
			return err
		}
		f.since = pg.StartCursor
		if f.since == "" {
			f.since = pg.EndCursor // every item scanned was hidden: count above them
		}
		if f.since == "" { // an empty feed: everything is new
			f.since = s.Cursors().Seal(cursor.Cursor{State: cursor.StateTimeline, Viewer: f.viewer})
		}
		f.screen = screenOf(pg)
	}
	u, news, err := f.count(ctx)
	if err != nil {
		return err
	}
	if f.screen.pos == nil {
		if f.screen, err = f.readScreen(ctx); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.news, f.lastRun = news, start
	if u.NewPostCount > 0 {
		f.send(u)
	}
	f.next()
	return nil
}

// next schedules the run a notice asked for while one ran, or says none
// is scheduled. Under f.mu.
func (f *followSub) next() {
	if f.dirty && !f.closed && f.ctx.Err() == nil {
		f.h.run.after(f.ctx, f.wait(), f.run)
		return
	}
	f.scheduled = false
}

func screenOf(pg *core.FeedPage) shownRead {
	var lo *store.Item
	if pg.HasNext && len(pg.Edges) > 0 {
		it := edgeItem(pg.Edges[len(pg.Edges)-1])
		lo = &it
	}
	return readOf(pg.Edges, lo, nil)
}

// readScreen reads the page at and below since: what the client shows.
// A page after a cursor leaves the cursor's own item out, so it reads
// after a cursor just above it (the same position, the next id).
func (f *followSub) readScreen(ctx context.Context) (shownRead, error) {
	s := f.h.s
	c, err := s.OpenCursor(ctx, f.since, f.viewer)
	if err != nil {
		return shownRead{}, err
	}
	if c.LastID < math.MaxUint64 {
		c.LastID++
	}
	pg, err := s.FollowingFeed(ctx, core.FeedRequest{Viewer: f.viewer, First: timeline.DefaultPageSize, After: s.Cursors().Seal(c)})
	if err != nil {
		return shownRead{}, err
	}
	return screenOf(pg), nil
}

// count reads what a pull-to-refresh from since would show: the pages of
// last/before since, newest last, up to MaxCount items. When there are
// more, the authors are the newest items' (a page from the top).
func (f *followSub) count(ctx context.Context) (FollowingUpdate, shownRead, error) {
	s := f.h.s
	f.h.s.stats.recounts.Add(1)
	var pages [][]core.FeedEdge
	n, more, before := 0, false, f.since
	for range countPages {
		pg, err := s.FollowingFeed(ctx, core.FeedRequest{Viewer: f.viewer, Last: MaxCount - n, Before: before})
		if err != nil {
			return FollowingUpdate{}, shownRead{}, err
		}
		pages = append(pages, pg.Edges)
		n += len(pg.Edges)
		more = pg.HasPrevious
		if !more || n >= MaxCount || pg.StartCursor == "" || pg.StartCursor == before {
			break
		}
		before = pg.StartCursor
	}
	var edges []core.FeedEdge // newest first
	for i := len(pages) - 1; i >= 0; i-- {
		edges = append(edges, pages[i]...)
	}
	var hi *store.Item
	if more && len(edges) > 0 {
		it := edgeItem(edges[0])
		hi = &it
	}
	news := readOf(edges, nil, hi)
	u := FollowingUpdate{NewPostCount: min(n, MaxCount), NewPostAuthors: authorsOf(edges)}
	if more && n >= MaxCount {
		top, err := s.FollowingFeed(ctx, core.FeedRequest{Viewer: f.viewer, First: timeline.DefaultPageSize})
		if err != nil {
			return FollowingUpdate{}, shownRead{}, err
		}
		u.NewPostAuthors = authorsOf(top.Edges)
	}
	return u, news, nil
}

// authorsOf are the distinct authors of edges (newest first), up to
// MaxAuthors: a repost's reposter, whom the viewer follows.
func authorsOf(edges []core.FeedEdge) []store.ID {
	out := []store.ID{}
	for _, e := range edges {
		a := e.Post.Author
		if e.Repost != nil {
			a = e.Repost.Author
		}
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
		if len(out) == MaxAuthors {
			break
		}
	}
	return out
}

// notice takes a notice that concerns f's viewer: f runs again, now or
// once Options.MinInterval has passed since it last did.
func (f *followSub) notice(n core.Notice) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return
	}
	switch n.Kind {
	case core.NoticeRemoval:
		if n.Item != 0 && len(f.removed) < MaxCount && !slices.Contains(f.removed, n.Item) {
			f.removed = append(f.removed, n.Item)
		}
	case core.NoticeViews:
		f.refresh, f.window = true, true
	case core.NoticeSuspension: // its posts left or came back; no follow changed
		f.window = true
	}
	f.kick()
}

// catchUp recounts after f's channels were (re)subscribed.
func (f *followSub) catchUp() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.kick()
	}
}

// kick schedules a run unless one is waiting: then the notice is folded
// into it (coalesced). Under f.mu.
func (f *followSub) kick() {
	if f.dirty { // a notice not yet acted on: this one rides its run
		f.h.s.stats.coalesced.Add(1)
	}
	f.dirty = true
	if f.scheduled {
		return
	}
	f.scheduled = true
	f.h.run.after(f.ctx, f.wait(), f.run)
}

// wait is how long the next run waits: until Options.MinInterval after
// the last run and the last update.
func (f *followSub) wait() time.Duration {
	next := f.lastRun
	if f.lastSent.After(next) {
		next = f.lastSent
	}
	return max(0, time.Until(next.Add(f.h.opts.MinInterval)))
}

// run recounts, reading the viewer's follows and screen again when a
// notice asked, and sends an update if anything changed.
func (f *followSub) run() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.dirty = false
	refresh, window, removed := f.refresh, f.window, f.removed
	f.refresh, f.window, f.removed = false, false, nil
	news, screen := f.news, f.screen
	f.mu.Unlock()

	start := time.Now()
	u, gone, err := f.recount(refresh, window, news, screen)
	if refused := (*apierr.Error)(nil); errors.As(err, &refused) && refused.Code != apierr.Unavailable {
		// Not Redis: the since cursor no longer opens (the cursor key
		// changed) or the viewer is gone. Retrying cannot help; the
		// client subscribes again.
		f.h.s.stats.recountErrors.Add(1)
		f.close()
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lastRun = start
	if err != nil && f.ctx.Err() == nil {
		// Redis failed: try again, keeping what the notices asked.
		f.h.s.stats.recountErrors.Add(1)
		f.refresh, f.window = f.refresh || refresh, f.window || window
		f.removed = append(f.removed, removed...)
		f.dirty = true
	}
	if err == nil && !f.closed {
		f.news = gone.news
		if window {
			f.screen = gone.screen
		}
		u.DeletedPostIDs = dedupe(append(removed, gone.ids...))
		if u.NewPostCount != f.sent.NewPostCount || !slices.Equal(u.NewPostAuthors, f.sent.NewPostAuthors) || len(u.DeletedPostIDs) > 0 {
			f.send(u)
		}
	}
	f.next()
}

// recountResult is what a recount found besides the update: the posts
// that left, and the reads to compare the next one with.
type recountResult struct {
	ids          []store.ID
	news, screen shownRead
}

func (f *followSub) recount(refresh, window bool, news, screen shownRead) (FollowingUpdate, recountResult, error) {
	ctx := f.ctx
	var r recountResult
	if refresh {
		bigV, pending, _, err := f.h.s.Followed(ctx, f.viewer)
		if err != nil {
			return FollowingUpdate{}, r, err
		}
		f.h.rerouteFollow(f, union(bigV, pending))
	}
	u, now, err := f.count(ctx)
	if err != nil {
		return FollowingUpdate{}, r, err
	}
	r.news = now
	r.ids = news.left(now, nil)
	if window {
		if r.screen, err = f.readScreen(ctx); err != nil {
			return FollowingUpdate{}, r, err
		}
		r.ids = screen.left(r.screen, r.ids)
	}
	return u, r, nil
}

// send hands u to the subscriber. The channel holds one update: one the
// subscriber has not taken yet is replaced by u, its deleted posts kept.
// Under f.mu.
func (f *followSub) send(u FollowingUpdate) {
	if f.closed {
		return
	}
	for {
		select {
		case f.out <- u:
			f.sent, f.lastSent = u, time.Now()
			f.h.s.stats.sent.Add(1)
			return
		default:
		}
		select {
		case old := <-f.out:
			u.DeletedPostIDs = dedupe(append(old.DeletedPostIDs, u.DeletedPostIDs...))
			f.h.s.stats.coalesced.Add(1)
		default:
		}
	}
}

// close ends f: its channel closes, its routes and channels go, and its
// viewer's presence mark with its last following subscription here.
func (f *followSub) close() {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	f.closed = true
	close(f.out)
	f.mu.Unlock()
	if f.h.removeFollow(f) {
		f.h.unmark(f.viewer)
	}
	f.h.s.stats.subscriptions.Add(-1)
}

// routedOn reports whether f follows channel ch as an author's. Under
// the hub's lock.
func (f *followSub) routedOn(k store.Keys, ch string) bool {
	for _, a := range f.authors {
		if k.AuthorChannel(store.RealtimeBucket(a)) == ch {
			return true
		}
	}
	return false
}

// union is a with the members of b it lacks.
func union(a, b []store.ID) []store.ID {
	out := slices.Clone(a)
	for _, id := range b {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// dedupe is ids without repeats, in order; nil for none.
func dedupe(ids []store.ID) []store.ID {
	var out []store.ID
	for _, id := range ids {
		if !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}
