package resolvers

import (
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
)

// newPost is what publishPost's input asks for; feedcore checks it.
func newPost(in graph.PublishPostInput) feedcore.NewPost {
	p := feedcore.NewPost{Text: deref(in.Text), ContentWarning: deref(in.ContentWarning), IdempotencyKey: deref(in.IdempotencyKey)}
	if len(in.Media) > 0 {
		p.Media = make([]feedcore.Media, len(in.Media))
		for i, m := range in.Media {
			p.Media[i] = feedcore.Media{URL: m.URL, Kind: m.Kind, Width: deref(m.Width), Height: deref(m.Height),
				AltText: deref(m.AltText), ThumbnailURL: deref(m.ThumbnailURL), DurationMs: deref(m.DurationMs), Sensitive: deref(m.Sensitive)}
		}
	}
	return p
}
