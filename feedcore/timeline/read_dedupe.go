package timeline

import (
	"context"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// Never the same post twice (Mastodon's REBLOG_FALLOFF). Call F the
// viewer's feed as every other rule leaves it (read_items.go), in feed
// order. An item of F shows a post: its own, or a repost's original. A
// repost is left out when one of the repostFalloff items of F that follow
// it (older) shows the same post: the original, or another repost of it.
// Those were the newest when it arrived, so of reposts that come close
// together the first one shows; one of an older post, past the window,
// shows, and the original stays where it is further down. Posts are never
// left out.
//
// It is decided at read time over F, so an inbox reader and a reader
// merged on read, who read the same F, see the same thing; when the shown
// one is taken back or its original deleted, the next read shows the
// hidden one in its place. A decision depends only on the items older
// than the repost, which new items (newer) do not change: a page paged to
// later agrees with the pages before it, and a cursor, which moves only
// toward older items, yields an item once.
//
// A page toward older items looks repostFalloff items of F past its last
// repost; a page toward newer items looks that far behind its cursor. The
// look is bounded by the read bound (maxRounds, maxBatch): a window the
// bound cuts short is decided on the part read.

// RepostFalloff is how many items after a repost (older) are searched for
// the post it shows.
const RepostFalloff = 40

// deduper decides, item by item of F in scan order, which are shown.
type deduper struct {
	o     core.ScanOrder
	n     int               // the page's size
	found []Entry[feedItem] // shown, in scan order (older: then the first item of F after the n-th)
	seen  int               // items of F so far
	// Toward older items a repost is decided once repostFalloff items of
	// F follow it; pend holds the items of F not yet passed on, in order.
	pend []pending
	// Toward newer items a repost is decided at once by the originals of
	// the repostFalloff items before it (older), oldest first; behind
	// says the items older than the cursor are in it.
	recent []store.ID
	behind bool
}

// pending is an item of F waiting for its decision (older pages).
type pending struct {
	e       Entry[feedItem]
	idx     int // its place in F
	decided bool
	hidden  bool
}

func newDeduper(o core.ScanOrder, n int) *deduper { return &deduper{o: o, n: n} }

// add takes the next item of F in scan order.
func (d *deduper) add(e Entry[feedItem]) {
	idx := d.seen
	d.seen++
	if d.o == core.Newer {
		shown := e.Val.repost == nil || !containsID(d.recent, e.Val.original())
		d.recent = append(d.recent, e.Val.original())
		if len(d.recent) > RepostFalloff {
			d.recent = d.recent[1:]
		}
		if shown {
			d.found = append(d.found, e)
		}
		return
	}
	for j := len(d.pend) - 1; j >= 0 && idx-d.pend[j].idx <= RepostFalloff; j-- {
		if p := &d.pend[j]; !p.decided && p.e.Val.original() == e.Val.original() {
			p.decided, p.hidden = true, true
		}
	}
	d.pend = append(d.pend, pending{e: e, idx: idx, decided: e.Val.repost == nil})
	for j := range d.pend {
		if p := &d.pend[j]; !p.decided && idx-p.idx >= RepostFalloff {
			p.decided = true
		}
	}
	d.pass(false)
}

// pass moves the decided items at the head of pend to found: all of them
// with all set, else until the page holds n.
func (d *deduper) pass(all bool) {
	for len(d.pend) > 0 && (all || len(d.found) < d.n) {
		p := d.pend[0]
		if !p.decided && !all {
			return
		}
		if !p.hidden {
			d.found = append(d.found, p.e)
		}
		d.pend = d.pend[1:]
	}
}

// done reports whether the page is decided: n items shown and more known
// to follow. Toward older items, any item of F after the n-th shown one
// means a shown one follows (a repost left out has an item after it that
// shows the same post; the last of such a chain shows), so that one item
// stands in for the next page's first.
func (d *deduper) done() bool {
	if d.o == core.Newer {
		return len(d.found) > d.n
	}
	if len(d.found) == d.n && len(d.pend) > 0 {
		d.found = append(d.found, d.pend[0].e)
		return true
	}
	return false
}

// end decides what is still pending on what was read: the feed ended, or
// the read bound was reached.
func (d *deduper) end() {
	for j := range d.pend {
		d.pend[j].decided = true
	}
	d.pass(true)
}

// needsBehind reports whether a page toward newer items must read the
// items of F older than its cursor before it decides e.
func (d *deduper) needsBehind(e *feedItem) bool {
	return d.o == core.Newer && !d.behind && e.repost != nil && d.seen < RepostFalloff
}

// setBehind takes the items of F older than the cursor, closest first.
func (d *deduper) setBehind(older []Entry[feedItem]) {
	d.behind = true
	keys := make([]store.ID, 0, len(older)+len(d.recent))
	for i := len(older) - 1; i >= 0; i-- {
		keys = append(keys, older[i].Val.original())
	}
	keys = append(keys, d.recent...)
	d.recent = keys[max(0, len(keys)-RepostFalloff):]
}

func containsID(ids []store.ID, id store.ID) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// fillFeedPage walks the viewer's feed from pos in order o until a page of
// n items is decided (see deduper), the feed ends or the read bound is
// reached, reading batch entries first. It returns the items shown (more
// than n when the page is full: the next one, or its stand-in, is at n),
// how far it read, whether more may follow, and how many entries it read
// up to its decision. Each round loads what it scanned at once (two
// cached reads: the items, then what their reposts and replies need), so
// a cold page pays those two round trips once, and a warm one none.
func (s *Service) fillFeedPage(ctx context.Context, v *View, o core.ScanOrder, pos *store.Item, n, batch int) ([]Entry[feedItem], *store.Item, bool, int, error) {
	d := newDeduper(o, n)
	cur, used := pos, 0
	for round := 0; round < MaxRounds; round++ {
		items, next, err := s.readTimeline(ctx, v, o, cur, batch)
		if err != nil {
			return nil, nil, false, 0, err
		}
		vals, err := s.visibleItems(ctx, v, items)
		if err != nil {
			return nil, nil, false, 0, err
		}
		for i, val := range vals {
			if val == nil {
				continue
			}
			if d.needsBehind(val) {
				if err := s.lookBehind(ctx, v, pos, d); err != nil {
					return nil, nil, false, 0, err
				}
			}
			d.add(Entry[feedItem]{It: items[i], Val: val})
			if d.done() {
				return d.found, &items[i], true, used + i + 1, nil
			}
		}
		used += len(items)
		if len(items) > 0 {
			cur = &items[len(items)-1]
		}
		if next == nil {
			d.end()
			return d.found, cur, len(d.found) > n, used, nil
		}
		cur = next
		batch = min(2*batch, maxBatch)
	}
	d.end()
	return d.found, cur, true, used, nil
}

// firstBatch is how many entries a page of n reads first (and the view's
// speculative seek with it). Toward newer items, the page and the next.
// Toward older items, a page that shows a repost decides it only
// RepostFalloff items further on: a deep batch reads the page, that
// window and a quarter of a window more for the items the rules leave out
// (replies to strangers, mostly), so a page with reposts and replies
// decides in one read; a short one reads the page and that quarter (31
// entries for a page of 20, not 71), enough without a repost near, and
// reads on as any page does when it needs more. A viewer's first page on this
// process reads deep, a later one as deep as the one before needed
// (core.ReaderNote): a warm page with reposts still decides in one read,
// and one without costs Redis and this process less.
func firstBatch(o core.ScanOrder, n int, deep bool) int {
	switch {
	case o == core.Newer:
		return n + 1
	case deep:
		return n + 1 + RepostFalloff + RepostFalloff/4
	}
	return n + 1 + RepostFalloff/4
}

// noted is what a page of n in order o, which read used entries up to its
// decision and found v, leaves noted of its viewer, noted before as note.
func noted(note core.ReaderNote, o core.ScanOrder, n, used int, v *View) core.ReaderNote {
	if o == core.Older {
		note.Deep = used > firstBatch(o, n, false)
	}
	note.Complete, note.At = v.complete, core.NoteAt(v.Now)
	return note
}

// lookBehind gives d the repostFalloff items of F at and older than the
// cursor pos of a page toward newer items.
func (s *Service) lookBehind(ctx context.Context, v *View, pos *store.Item, d *deduper) error {
	from := store.Item{TS: pos.TS, ID: pos.ID + 1} // the cursor's own item is the first of them
	behind, _, _, err := FillTimelinePage(ctx, s, v, core.Older, &from, RepostFalloff, s.visibleItems)
	if err != nil {
		return err
	}
	d.setBehind(behind)
	return nil
}
