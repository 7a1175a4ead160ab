package timeline

import (
	"context"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/roundtrip"
	"github.com/redis/rueidis"
)

// A following feed's items are posts, replies and reposts. Which of them
// a viewer may see is decided at read time, the same way whichever path
// (the inbox, or outboxes merged on read) brought them:
//
//   - every item: not deleted, its author not suspended, by the viewer
//     or by an author not skipped (recent unfollows, followees hidden
//     until their clean-up) whose text no keyword filter of the viewer
//     matches;
//   - a repost: its original is not deleted, its author not suspended and
//     not hidden from the viewer (blocks either way, the viewer's mutes,
//     hides), and its text no filter of the viewer matches (unless the
//     viewer wrote it);
//   - a reply (Mastodon's rule): by the viewer, or to the viewer's post,
//     or to its own author's (a thread), or to an author the viewer
//     follows and does not hide.
//
// What an item needs besides its own hash is read in one more step, all
// of it through the client-side cache: the originals of its reposts, and
// whether the viewer follows, or hides, the authors they name (a ZSCORE of
// the viewer's following set or hidden authors per author). A warm page
// finds it all cached and pays no round trip for it; a write to the
// viewer's sets or a delete of an original invalidates the copies.

// feedItem is an item a page may show: post is what its edge shows (the
// post, or a repost's original), repost the repost's record (nil for a
// post).
type feedItem struct {
	post   *content.Post
	repost *content.Post
}

// original is the post the item shows, whose id counts for dedupe.
func (f *feedItem) original() store.ID { return f.post.ID }

// LinkReads is what the items of a page need read besides their hashes.
type LinkReads struct {
	posts   []store.ID // originals of reposts
	follows []store.ID // authors replied to: does the viewer follow them?
	Hidden  []store.ID // authors of originals and of posts replied to: hidden from the viewer?
}

// links is what linkReads read.
type links struct {
	posts   map[store.ID]*content.Post
	follows map[store.ID]bool
	Hidden  map[store.ID]bool
}

// visibleItems loads the items and keeps those the viewer may see (nil
// for the others), in at most two cached reads: the items' hashes (with
// the view's pending writes riding along), then what reposts and replies
// among them need.
func (s *Service) visibleItems(ctx context.Context, v *View, items []store.Item) ([]*feedItem, error) {
	ids := make([]store.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	ps, missed, err := s.readItemPosts(ctx, v, items, ids)
	v.Extra = nil
	if err != nil {
		return nil, err
	}
	out := make([]*feedItem, len(items))
	var ask LinkReads
	for i, p := range ps {
		if p == nil || p.Deleted || p.AuthorSuspended || p.CreatedAt.UnixMilli() != items[i].TS ||
			(p.Author != v.Viewer && (v.Skip[p.Author] || v.Filtered(p.Text))) {
			continue
		}
		out[i] = &feedItem{post: p}
		switch {
		case p.IsRepost():
			ask.posts = append(ask.posts, p.RepostOf)
			if p.RepostOfAuthor != v.Viewer {
				ask.Hidden = append(ask.Hidden, p.RepostOfAuthor)
			}
		case p.ReplyTo != 0 && !replyShownAlways(v.Viewer, p):
			ask.follows = append(ask.follows, p.ReplyToAuthor)
			ask.Hidden = append(ask.Hidden, p.ReplyToAuthor)
		}
	}
	if len(ask.posts)+len(ask.follows)+len(ask.Hidden) == 0 {
		return out, nil
	}
	l, err := s.readLinksAlongside(ctx, v, ask, out, missed)
	if err != nil {
		return nil, err
	}
	for i, f := range out {
		switch p := f.pointer(); {
		case p == nil:
		case p.IsRepost():
			o := l.posts[p.RepostOf]
			if o == nil || o.Deleted || o.AuthorSuspended || o.IsRepost() || o.Author == 0 ||
				(o.Author != v.Viewer && (l.Hidden[o.Author] || v.Filtered(o.Text))) {
				out[i] = nil
			} else {
				out[i] = &feedItem{post: o, repost: p}
			}
		case p.ReplyTo != 0 && !replyShownAlways(v.Viewer, p):
			if !l.follows[p.ReplyToAuthor] || l.Hidden[p.ReplyToAuthor] {
				out[i] = nil
			}
		}
	}
	return out, nil
}

// readItemPosts reads the posts ids of items, with v.Extra, and with the
// page's Alongside early (earlyShown) when it applies: the hydration of
// a cold page that pulls rides with the read of its posts. It reports
// whether any post was read from Redis.
func (s *Service) readItemPosts(ctx context.Context, v *View, items []store.Item, ids []store.ID) ([]*content.Post, bool, error) {
	shown := v.earlyShown(items)
	if shown == nil {
		return s.cachedPostsWith(ctx, v.Extra, ids)
	}
	v.early = false
	var ps []*content.Post
	var missed bool
	err := roundtrip.Parallel(ctx,
		func(ctx context.Context) (err error) {
			ps, missed, err = s.cachedPostsWith(ctx, v.Extra, ids)
			return err
		},
		func(ctx context.Context) error { return v.alongside(ctx, shown) })
	return ps, missed, err
}

// earlyShown is what items may show, for the page's Alongside before
// their posts are read: nil unless it may be called early (View.early)
// and the author of every item it would be given is known, each read
// from an outbox. An item may be a repost's record, whose original is
// known only once read: the links' read calls Alongside again for those.
func (v *View) earlyShown(items []store.Item) []core.Shown {
	if !v.hydratesEarly() {
		return nil
	}
	items = items[:min(len(items), v.alongsideN)]
	shown := make([]core.Shown, len(items))
	for i, it := range items {
		owner, ok := v.owners[it.ID]
		if !ok {
			return nil
		}
		shown[i] = core.Shown{Post: it.ID, Author: owner}
	}
	return shown
}

// readLinksAlongside is ReadLinks, with the page's Alongside in the same
// round trip when the items were read from Redis (missed), given what
// out may show: a cold page's links cost a round trip its hydration can
// share. A warm page's links are cached, costing none, so it hydrates
// after, reading what it shows and nothing it leaves out.
func (s *Service) readLinksAlongside(ctx context.Context, v *View, ask LinkReads, out []*feedItem, missed bool) (*links, error) {
	fn := v.alongside
	if fn == nil || !missed {
		return s.ReadLinks(ctx, v.Viewer, ask)
	}
	v.alongside = nil
	shown := shownOf(out)
	shown = shown[:min(len(shown), v.alongsideN)]
	var l *links
	err := roundtrip.Parallel(ctx,
		func(ctx context.Context) (err error) { l, err = s.ReadLinks(ctx, v.Viewer, ask); return err },
		func(ctx context.Context) error { return fn(ctx, shown) })
	return l, err
}

// shownOf is what the items out may show, as known before their links
// are read (nil items left out).
func shownOf(out []*feedItem) []core.Shown {
	shown := make([]core.Shown, 0, len(out))
	for _, f := range out {
		switch p := f.pointer(); {
		case p == nil:
		case p.IsRepost():
			shown = append(shown, core.Shown{Post: p.RepostOf, Author: p.RepostOfAuthor, Reposter: p.Author})
		default:
			shown = append(shown, core.Shown{Post: p.ID, Author: p.Author, ReplyTo: p.ReplyTo, ReplyToAuthor: p.ReplyToAuthor})
		}
	}
	return shown
}

// pointer is the item's post, nil for a nil item.
func (f *feedItem) pointer() *content.Post {
	if f == nil {
		return nil
	}
	return f.post
}

// replyShownAlways reports whether the reply p is shown to viewer
// whatever the viewer follows: the viewer wrote it, it answers the
// viewer, or it answers its own author (a thread).
func replyShownAlways(viewer store.ID, p *content.Post) bool {
	return p.Author == viewer || p.ReplyToAuthor == viewer || p.ReplyToAuthor == p.Author
}

// ReadLinks reads what ask names, through the client-side cache, in one
// round trip when anything is not cached.
func (s *Service) ReadLinks(ctx context.Context, viewer store.ID, ask LinkReads) (*links, error) {
	ask.follows, ask.Hidden = distinct(ask.follows), distinct(ask.Hidden)
	cmds := s.cachedPostCmds(ask.posts)
	score := func(key string) func(store.ID) rueidis.CacheableTTL {
		return func(u store.ID) rueidis.CacheableTTL {
			return rueidis.CT(s.Redis.B().Zscore().Key(key).Member(store.Member(u)).Cache().ToStaticTTL(), postTTL)
		}
	}
	cmds = append(cmds, store.CmdsFor(ask.follows, score(s.Keys.Following(viewer)))...)
	cmds = append(cmds, store.CmdsFor(ask.Hidden, score(s.Keys.HiddenAuthors(viewer)))...)
	rs := s.Redis.DoMultiCache(ctx, cmds...)
	l := &links{posts: make(map[store.ID]*content.Post, len(ask.posts)), follows: make(map[store.ID]bool, len(ask.follows)),
		Hidden: make(map[store.ID]bool, len(ask.Hidden))}
	for i, id := range ask.posts {
		p, err := cachedPost(id, rs[i])
		if err != nil {
			return nil, err
		}
		l.posts[id] = p
	}
	rs = rs[len(ask.posts):]
	for i, u := range ask.follows {
		ok, err := store.IsMember(rs[i])
		if err != nil {
			return nil, err
		}
		l.follows[u] = ok
	}
	rs = rs[len(ask.follows):]
	now := s.NowMS()
	for i, u := range ask.Hidden {
		until, err := rs[i].AsFloat64()
		if err != nil && !rueidis.IsRedisNil(err) {
			return nil, err
		}
		l.Hidden[u] = err == nil && int64(until) > now // an ended mute hides no more
	}
	return l, nil
}

// distinct is ids without repeats, in first-seen order.
func distinct(ids []store.ID) []store.ID {
	if len(ids) < 2 {
		return ids
	}
	seen := make(map[store.ID]bool, len(ids))
	out := ids[:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
