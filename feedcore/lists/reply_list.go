package lists

import (
	"context"
	"math"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
)

// A post's replies are paged oldest first, as a conversation reads, from
// the parent's set of replies (keys.replies), with the seek that pages a
// feed toward newer items. A page shows the replies the viewer may see:
// live, their authors not suspended and not hidden from the viewer
// (blocks either way, its mutes, hides), read through the client-side
// cache. Replies left out
// are read past within the read bound, and the end cursor advances past
// everything read.
//
// A cursor is sealed as a list's, of kind ListReplies and owned by the
// parent (list_page.go), so it opens only the replies of the post it was
// minted for, for the viewer it was minted for.

// repliesStart is where a first page of replies seeks from: before every
// reply (scores are times, never negative; a deleted reply's -1 ties
// below every member).
var repliesStart = store.Item{TS: -1, ID: math.MaxUint64}

// Replies returns a page of the replies of post as viewer sees them,
// oldest first: first of them (DefaultPageSize when 0), after the cursor
// after.
func (s *Service) Replies(ctx context.Context, viewer, post store.ID, first int, after string) (_ *core.FeedPage, err error) {
	defer store.Wrap(&err, "replies of post %d", post)
	if first < 0 || first > timeline.MaxPageSize {
		return nil, apierr.Errorf(apierr.BadInput, "first must be between 1 and %d", timeline.MaxPageSize)
	}
	n := timeline.OrDefault(first)
	pos := repliesStart
	if after != "" {
		c, err := s.OpenListCursor(ctx, after, viewer, cursor.ListReplies, post)
		if err != nil {
			return nil, err
		}
		pos = c.Item()
	}
	found, scanned, more, err := s.collectReplies(ctx, viewer, post, pos, n+1)
	if err != nil {
		return nil, err
	}
	seal := func(it store.Item) string { return s.SealListCursor(viewer, cursor.ListReplies, post, it) }
	shown := found[:min(n, len(found))]
	pg := &core.FeedPage{Edges: make([]core.FeedEdge, len(shown)), HasNext: more, HasPrevious: after != "", StartCursor: after}
	for i, e := range shown {
		pg.Edges[i] = core.FeedEdge{Post: e.Val, Cursor: seal(e.It)}
	}
	if len(shown) > 0 {
		pg.StartCursor = pg.Edges[0].Cursor
	}
	// The end advances past everything read, or to the last edge when
	// the next reply shown is already known.
	switch {
	case len(found) > n:
		pg.EndCursor = seal(found[n-1].It)
	case scanned != nil && *scanned != repliesStart:
		pg.EndCursor = seal(*scanned)
	default:
		pg.EndCursor = after
	}
	return pg, nil
}

// collectReplies reads the replies of post after pos, oldest first, until
// it has need the viewer may see, the replies end or the read bound is
// reached: those found, how far it read, and whether more may follow.
func (s *Service) collectReplies(ctx context.Context, viewer, post store.ID, pos store.Item, need int) ([]timeline.Entry[content.Post], *store.Item, bool, error) {
	src := timeline.Source{Key: s.Keys.Replies(post)}
	return timeline.FillPage(&pos, need, func(_ int, cur *store.Item, batch int) ([]store.Item, []*content.Post, *store.Item, error) {
		items, _, err := core.ParseSeek(s.Do(ctx, s.SeekCmd(core.Newer, src, cur, batch)))
		if err != nil {
			return nil, nil, nil, err
		}
		vals, err := s.visibleReplies(ctx, viewer, post, items)
		if err != nil || len(items) < batch { // a short read: the replies ended
			return items, vals, nil, err
		}
		return items, vals, &items[len(items)-1], nil
	})
}

// visibleReplies loads the replies at items and keeps those viewer may
// see (nil for the others).
func (s *Service) visibleReplies(ctx context.Context, viewer, post store.ID, items []store.Item) ([]*content.Post, error) {
	ps, err := s.CachedPosts(ctx, store.CmdsFor(items, func(it store.Item) store.ID { return it.ID }))
	if err != nil {
		return nil, err
	}
	var ask timeline.LinkReads
	for i, p := range ps {
		if p == nil || p.Deleted || p.AuthorSuspended || p.ReplyTo != post || p.CreatedAt.UnixMilli() != items[i].TS {
			ps[i] = nil
		} else if viewer != 0 && p.Author != viewer {
			ask.Hidden = append(ask.Hidden, p.Author)
		}
	}
	if len(ask.Hidden) == 0 {
		return ps, nil
	}
	l, err := s.ReadLinks(ctx, viewer, ask)
	if err != nil {
		return nil, err
	}
	for i, p := range ps {
		if p != nil && l.Hidden[p.Author] {
			ps[i] = nil
		}
	}
	return ps, nil
}
