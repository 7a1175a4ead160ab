package lists

import (
	"context"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/keyword"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/redis/rueidis"
)

// Author timelines: User.posts pages the author's outbox (keys.outbox:
// every post of the author, by time), newest first, as viewer sees it.
// The outbox is read from the cursor by rank, so a page costs its own
// size, never the author's post count.
//
// Separations: the author hidden from the viewer (a block between them,
// either way, the viewer's mute of the author in force, or the author
// hiding its posts from the viewer: keys.hiddenAuthors, as the feeds)
// empties the list; the profile itself still answers, as user(handle:)
// does, with its flags (viewerHasBlocked, blocksViewer, viewerHasMuted)
// saying why, but for a hide, which is kept from its target. Posts a
// keyword filter of the viewer's matches are left out (never the
// viewer's own), and so are the posts of a suspended author (back when
// unsuspended: the marks are read with the posts).

// AuthorPosts pages author's posts as viewer (0: anonymous) sees them,
// newest first (ties by id, highest first): first per page
// (DefaultPageSize when 0), after a cursor of this list (withReplies
// makes it another list: ListAuthorPostsWithReplies). Deleted posts are
// skipped. Whether the author is hidden from the viewer, and the
// viewer's keyword filters (their version only, when this process has
// them compiled), are read in the outbox read's round trip; the posts
// come through the client-side cache.
func (s *Service) AuthorPosts(ctx context.Context, viewer, author store.ID, withReplies bool, first int, after string) (_ *core.FeedPage, err error) {
	defer store.Wrap(&err, "list the posts of user %d", author)
	q := listAt{viewer: viewer, kind: cursor.ListAuthorPosts, owner: author, first: first, after: after}
	if withReplies {
		q.kind = cursor.ListAuthorPostsWithReplies
	}
	now, compiled := s.NowMS(), s.CompiledKeywords(viewer)
	gate := viewer != 0 && viewer != author
	var reads []rueidis.Completed
	if gate {
		reads = []rueidis.Completed{s.hiddenCmd(viewer, []store.ID{author}), s.KeywordViewCmd(viewer, compiled.Version())}
	}
	// The author is the only one on the list: once it is not hidden, no
	// post's author needs a check.
	safety := &postSafety{hidden: sepSet{Complete: true}, v: &timeline.View{Viewer: viewer, Now: now}}
	key := s.Keys.Outbox(author)
	origs := map[store.ID]*content.Post{} // the originals of the author's reposts shown
	posts, cursors, more, end, err := readList(ctx, s, q, func(*store.Item) listScan[content.Post] {
		return listScan[content.Post]{
			seek:  func(from *store.Item, limit int) rueidis.Completed { return s.ListSeekCmd(key, "", "", from, limit) },
			first: reads,
			keep: func(ctx context.Context, first []rueidis.RedisResult, items []store.Item) ([]*content.Post, error) {
				if gate {
					if err := s.gateAuthor(safety, author, compiled, first); err != nil {
						return nil, err
					}
					gate = false // read once: later rounds keep what it said
				}
				ps, err := s.shownPosts(ctx, safety, items, true)
				if err != nil {
					return nil, err
				}
				for i, p := range ps {
					if p != nil && (p.Deleted || p.Author != author || !onAuthorList(p, withReplies)) {
						ps[i] = nil
					}
				}
				return ps, s.listReposts(ctx, safety, ps, origs)
			},
		}
	})
	if err != nil {
		return nil, err
	}
	pg := postPage(q, posts, cursors, more, end)
	showOriginals(pg, origs)
	return pg, nil
}

// gateAuthor reads the first round trip's replies of an author's list
// (hiddenCmd's for the author, keywordView's sent with compiled's
// version) into safety: errNothingShown when the author is hidden from
// the viewer.
func (s *Service) gateAuthor(safety *postSafety, author store.ID, compiled *keyword.Set, first []rueidis.RedisResult) error {
	hidden, err := parseHidden(first[0], []store.ID{author}, safety.v.Now)
	if err != nil {
		return err
	}
	if hidden[author] {
		return errNothingShown
	}
	safety.v.Keywords, err = s.ReadKeywordViewReply(safety.v.Viewer, compiled, first[1])
	return err
}

// onAuthorList reports whether post p belongs on its author's list: a
// reply (its hash names a parent) only withReplies.
func onAuthorList(p *content.Post, withReplies bool) bool { return withReplies || p.ReplyTo == 0 }
