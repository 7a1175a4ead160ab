package lists

import (
	"context"
	"slices"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// A list of an author's items (User.posts) holds its reposts too: each is
// shown as its original, with the repost as the edge's reason, when the
// viewer may see the original (live, its author not suspended nor hidden
// from the viewer, its text not matched by a keyword filter of the
// viewer's, as the list's own author and posts).

// listReposts keeps, among the items ps of a list (nil: left out), the
// reposts whose original the viewer of safety may see, noting each
// original in origs (by the repost's id); the others become nil.
func (s *Service) listReposts(ctx context.Context, safety *postSafety, ps []*content.Post, origs map[store.ID]*content.Post) error {
	viewer := safety.v.Viewer
	var ids, authors []store.ID
	for _, p := range ps {
		if p != nil && p.IsRepost() {
			ids = append(ids, p.RepostOf)
			if p.RepostOfAuthor != viewer && !slices.Contains(authors, p.RepostOfAuthor) {
				authors = append(authors, p.RepostOfAuthor)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	os, err := s.CachedPosts(ctx, ids)
	if err != nil {
		return err
	}
	sep := map[store.ID]bool{}
	if viewer != 0 && len(authors) > 0 {
		if sep, err = parseHidden(s.Do(ctx, s.hiddenCmd(viewer, authors)), authors, safety.v.Now); err != nil {
			return err
		}
	}
	j := 0
	for i, p := range ps {
		if p == nil || !p.IsRepost() {
			continue
		}
		o := os[j]
		j++
		if o == nil || o.Deleted || o.AuthorSuspended || o.IsRepost() || o.Author == 0 || sep[o.Author] ||
			(o.Author != viewer && safety.v.Filtered(o.Text)) {
			ps[i] = nil
			continue
		}
		origs[p.ID] = o
	}
	return nil
}

// showOriginals turns the edges of pg that are reposts into edges of their
// originals (origs, by repost id) with the repost as Repost.
func showOriginals(pg *core.FeedPage, origs map[store.ID]*content.Post) {
	for i, e := range pg.Edges {
		if o := origs[e.Post.ID]; o != nil && e.Post.IsRepost() {
			pg.Edges[i].Repost, pg.Edges[i].Post = e.Post, o
		}
	}
}
