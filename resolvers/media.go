package resolvers

import (
	"context"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
)

// Media turns a post's stored items into the API's: an unknown size or
// duration (0) and absent alt text or thumbnail ("") are null.
func (r *postResolver) Media(_ context.Context, p *feedcore.Post) ([]*graph.Media, error) {
	out := make([]*graph.Media, len(p.Media))
	for i, m := range p.Media {
		out[i] = &graph.Media{URL: m.URL, Kind: graph.MediaKind(m.Kind), Width: nonZero(m.Width), Height: nonZero(m.Height),
			AltText: nonEmpty(m.AltText), ThumbnailURL: nonEmpty(m.ThumbnailURL), DurationMs: nonZero(m.DurationMs), Sensitive: m.Sensitive}
	}
	return out, nil
}

func (r *postResolver) ContentWarning(_ context.Context, p *feedcore.Post) (*string, error) {
	return nonEmpty(p.ContentWarning), nil
}

func (r *liveSessionResolver) CoverURL(_ context.Context, l *feedcore.LiveSession) (*string, error) {
	return nonEmpty(l.CoverURL), nil
}

// newPost is what publishPost's input asks for; feedcore checks it.
func newPost(in graph.PublishPostInput) feedcore.NewPost {
	p := feedcore.NewPost{Text: deref(in.Text), ContentWarning: deref(in.ContentWarning), IdempotencyKey: deref(in.IdempotencyKey)}
	if len(in.Media) > 0 {
		p.Media = make([]feedcore.Media, len(in.Media))
		for i, m := range in.Media {
			p.Media[i] = feedcore.Media{URL: m.URL, Kind: feedcore.MediaKind(m.Kind), Width: deref(m.Width), Height: deref(m.Height),
				AltText: deref(m.AltText), ThumbnailURL: deref(m.ThumbnailURL), DurationMs: deref(m.DurationMs), Sensitive: deref(m.Sensitive)}
		}
	}
	return p
}

// nonZero is n, or nil for 0 (unknown).
func nonZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}
