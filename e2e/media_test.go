package e2e

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
)

// mediaHosts is what the production-rule tests allow (--media-hosts).
var mediaHosts = []string{"cdn.example.com", "*.img.example.net"}

// image is an allowed image item, changed by mod.
func image(mod ...func(*client.MediaInput)) client.MediaInput {
	m := client.MediaInput{Url: "https://cdn.example.com/a.jpg", Kind: client.MediaKindImage, Width: client.Ptr(1080), Height: client.Ptr(720)}
	for _, f := range mod {
		f(&m)
	}
	return m
}

func video() client.MediaInput {
	return image(func(m *client.MediaInput) {
		m.Kind, m.Url, m.DurationMs = client.MediaKindVideo, "https://v.img.example.net/v.mp4", client.Ptr(15_000)
	})
}

// TestMediaRefusals: every media rule refuses with BAD_USER_INPUT naming
// the field at fault, and a refused publish changes nothing.
func TestMediaRefusals(t *testing.T) {
	e := newEnv(t, feedcore.Options{MediaHosts: mediaHosts})
	e.users("ann")
	ann := e.as(1)
	withMedia := func(ms ...client.MediaInput) client.PublishPostInput {
		return client.PublishPostInput{Text: "look", Media: ms}
	}
	for _, c := range []struct {
		name  string
		in    client.PublishPostInput
		field string // what the message must name
	}{
		{"too many images", withMedia(image(), image(), image(), image(), image()), "media has 5 items"},
		{"image and video", withMedia(image(), video()), "media[1].kind"},
		{"two videos", withMedia(video(), video()), "media[0].kind"},
		{"bad scheme", withMedia(image(func(m *client.MediaInput) { m.Url = "http://cdn.example.com/a.jpg" })), "media[0].url"},
		{"javascript URL", withMedia(image(), image(func(m *client.MediaInput) { m.Url = "javascript:alert(1)" })), "media[1].url"},
		{"host not allowed", withMedia(image(func(m *client.MediaInput) { m.Url = "https://evil.example.org/a.jpg" })), "media[0].url"},
		{"suffix's own host", withMedia(image(func(m *client.MediaInput) { m.Url = "https://img.example.net/a.jpg" })), "media[0].url"},
		{"other port", withMedia(image(func(m *client.MediaInput) { m.Url = "https://cdn.example.com:8443/a.jpg" })), "media[0].url"},
		{"userinfo", withMedia(image(func(m *client.MediaInput) { m.Url = "https://me@cdn.example.com/a.jpg" })), "media[0].url"},
		{"control character", withMedia(image(func(m *client.MediaInput) { m.Url = "https://cdn.example.com/a\x00.jpg" })), "media[0].url"},
		{"overlong URL", withMedia(image(func(m *client.MediaInput) { m.Url = "https://cdn.example.com/" + strings.Repeat("a", 2100) })), "media[0].url"},
		{"bad thumbnail", withMedia(image(), image(), image(func(m *client.MediaInput) {
			m.ThumbnailUrl = client.Ptr("https://elsewhere.example.org/t.jpg")
		})), "media[2].thumbnailUrl"},
		{"long alt text", withMedia(image(func(m *client.MediaInput) { m.AltText = client.Ptr(strings.Repeat("é", 1501)) })), "media[0].altText"},
		{"long content warning", client.PublishPostInput{Text: "x", ContentWarning: client.Ptr(strings.Repeat("w", 201))}, "contentWarning"},
		{"empty post", client.PublishPostInput{}, "a post needs text or media"},
		{"blank post", client.PublishPostInput{Text: " \n ", Media: []client.MediaInput{}}, "a post needs text or media"},
		{"negative width", withMedia(image(func(m *client.MediaInput) { m.Width = client.Ptr(-1) })), "media[0].width"},
		{"negative height", withMedia(image(), image(func(m *client.MediaInput) { m.Height = client.Ptr(-1) })), "media[1].height"},
		{"negative duration", withMedia(image(func(m *client.MediaInput) { m.Kind, m.DurationMs = client.MediaKindGif, client.Ptr(-1) })), "media[0].durationMs"},
		{"huge width", withMedia(image(func(m *client.MediaInput) { m.Width = client.Ptr(100_001) })), "media[0].width"},
		{"duration on an image", withMedia(image(func(m *client.MediaInput) { m.DurationMs = client.Ptr(5) })), "media[0].durationMs"},
	} {
		_, err := client.PublishPost(t.Context(), ann, c.in)
		wantCode(t, c.name, err, "BAD_USER_INPUT")
		if err != nil && !strings.Contains(err.Error(), c.field) {
			t.Errorf("%s: %v does not name %s", c.name, err, c.field)
		}
	}
	page := must(client.FollowingFeed(t.Context(), ann, client.Ptr(10), nil, nil, nil))(t).FollowingFeed
	if len(page.Edges) != 0 {
		t.Fatalf("refused publishes left %d posts", len(page.Edges))
	}
}

// TestMediaPosts: a post of media only, with a content warning, reaches
// followers whole; unknown sizes, absent alt text and thumbnails are
// null; a text post has no media and no warning.
func TestMediaPosts(t *testing.T) {
	e := newEnv(t, feedcore.Options{MediaHosts: mediaHosts})
	e.users("ann", "bob")
	e.workers()
	ann, bob := e.as(1), e.as(2)
	ctx := t.Context()
	must(client.FollowUser(ctx, bob, "1"))(t)
	in := client.PublishPostInput{
		Media: []client.MediaInput{
			image(func(m *client.MediaInput) {
				m.AltText, m.ThumbnailUrl, m.Sensitive = client.Ptr("  a cat on a mat "), client.Ptr("https://t.img.example.net/a.jpg"), client.Ptr(true)
			}),
			{Url: "https://cdn.example.com/b.gif", Kind: client.MediaKindGif, DurationMs: client.Ptr(2500)},
			{Url: "https://cdn.example.com/c.jpg", Kind: client.MediaKindImage, Width: client.Ptr(0)},
		},
		ContentWarning: client.Ptr("spoilers"),
	}
	want := []client.MediaFields{
		{Url: "https://cdn.example.com/a.jpg", Kind: client.MediaKindImage, Width: client.Ptr(1080), Height: client.Ptr(720),
			AltText: client.Ptr("a cat on a mat"), ThumbnailUrl: client.Ptr("https://t.img.example.net/a.jpg"), Sensitive: true},
		{Url: "https://cdn.example.com/b.gif", Kind: client.MediaKindGif, DurationMs: client.Ptr(2500)},
		{Url: "https://cdn.example.com/c.jpg", Kind: client.MediaKindImage},
	}
	check := func(what string, p client.PostFields) {
		t.Helper()
		got := make([]client.MediaFields, len(p.Media))
		for i, m := range p.Media {
			got[i] = m.MediaFields
		}
		if p.Text != "" || p.ContentWarning == nil || *p.ContentWarning != "spoilers" || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: text %q, warning %v, media %+v; want %+v", what, p.Text, p.ContentWarning, got, want)
		}
	}
	p := must(client.PublishPost(ctx, ann, in))(t).PublishPost.Post.PostFields
	check("publishPost", p)
	e.drain()
	page := must(client.FollowingFeed(ctx, bob, client.Ptr(10), nil, nil, nil))(t).FollowingFeed
	if len(page.Edges) != 1 {
		t.Fatalf("bob's feed has %d posts, want 1", len(page.Edges))
	}
	check("bob's feed", page.Edges[0].Node.PostFields)
	node := must(client.Node(ctx, bob, p.Id))(t).Node.(*client.NodeNodePost)
	check("node", node.PostFields)
	liked := must(client.LikePost(ctx, bob, p.Id))(t).LikePost.Post.PostFields
	check("likePost", liked)

	// A video, alone; a text post next to it has neither.
	v := must(client.PublishPost(ctx, ann, client.PublishPostInput{Text: "watch", Media: []client.MediaInput{video()}}))(t).PublishPost.Post
	if len(v.Media) != 1 || v.Media[0].Kind != client.MediaKindVideo || v.Media[0].DurationMs == nil || *v.Media[0].DurationMs != 15_000 || v.ContentWarning != nil {
		t.Errorf("video post: %+v", v.PostFields)
	}
	text := must(client.PublishPost(ctx, ann, client.PublishPostInput{Text: "words"}))(t).PublishPost.Post
	if text.Media == nil || len(text.Media) != 0 || text.ContentWarning != nil {
		t.Errorf("text post: media %v (want [] not null), warning %v", text.Media, text.ContentWarning)
	}
}

// TestDevMediaURLs: with dev auth's policy (the demo's), media on this
// machine's http listener and on any https host are accepted; http
// elsewhere still is not.
func TestDevMediaURLs(t *testing.T) {
	e := newEnv(t, feedcore.Options{DevMediaURLs: true})
	e.users("ann")
	ann := e.as(1)
	for _, u := range []string{
		e.srv.URL + "/demo/media/cat.png", // http://127.0.0.1:PORT
		"http://localhost:8080/demo/media/cat.png",
		"http://127.0.0.1/x.png",
		"https://anything.example.org:8443/x.png",
	} {
		p := must(client.PublishPost(t.Context(), ann, client.PublishPostInput{Media: []client.MediaInput{{Url: u, Kind: client.MediaKindImage}}}))(t)
		if got := p.PublishPost.Post.Media; len(got) != 1 || got[0].Url != u {
			t.Errorf("%s: media %+v", u, got)
		}
	}
	for _, u := range []string{"http://example.org/x.png", "http://u:p@127.0.0.1/x.png", "file:///etc/passwd"} {
		_, err := client.PublishPost(t.Context(), ann, client.PublishPostInput{Media: []client.MediaInput{{Url: u, Kind: client.MediaKindImage}}})
		wantCode(t, u, err, "BAD_USER_INPUT")
		if err != nil && !strings.Contains(err.Error(), "media[0].url") {
			t.Errorf("%s: %v does not name media[0].url", u, err)
		}
	}
	// Without dev auth's policy the same loopback URL is refused.
	prod := newEnv(t, feedcore.Options{MediaHosts: mediaHosts})
	prod.users("ann")
	_, err := client.PublishPost(t.Context(), prod.as(1), client.PublishPostInput{Media: []client.MediaInput{{Url: e.srv.URL + "/x.png", Kind: client.MediaKindImage}}})
	wantCode(t, "loopback http without dev auth", err, "BAD_USER_INPUT")
}

// TestLiveCover: scheduleLive takes a cover under the media URL rules;
// the session shows it in the payload, in the live feed and by id.
func TestLiveCover(t *testing.T) {
	e := newEnv(t, feedcore.Options{MediaHosts: mediaHosts})
	e.users("ann", "bob")
	ann, bob := e.as(1), e.as(2)
	ctx := t.Context()
	must(client.FollowUser(ctx, bob, "1"))(t)
	at := time.Now().Add(time.Hour)
	for _, bad := range []string{"http://cdn.example.com/c.jpg", "https://evil.example.org/c.jpg", "https://a@cdn.example.com/c.jpg", "c.jpg", "https://cdn.example.com/\x7f"} {
		_, err := client.ScheduleLive(ctx, ann, client.ScheduleLiveInput{Title: "show", ScheduledStartAt: at, CoverUrl: client.Ptr(bad)})
		wantCode(t, "cover "+bad, err, "BAD_USER_INPUT")
		if err != nil && !strings.Contains(err.Error(), "coverUrl") {
			t.Errorf("cover %q: %v does not name coverUrl", bad, err)
		}
	}
	const cover = "https://cdn.example.com/cover.jpg"
	s := must(client.ScheduleLive(ctx, ann, client.ScheduleLiveInput{Title: "show", ScheduledStartAt: at, CoverUrl: client.Ptr(cover)}))(t).ScheduleLive.Session
	if s.CoverUrl == nil || *s.CoverUrl != cover {
		t.Fatalf("scheduled session's cover: %v", s.CoverUrl)
	}
	plain := must(client.ScheduleLive(ctx, ann, client.ScheduleLiveInput{Title: "plain", ScheduledStartAt: at.Add(time.Minute)}))(t).ScheduleLive.Session
	if plain.CoverUrl != nil {
		t.Fatalf("session without a cover shows %q", *plain.CoverUrl)
	}
	started := must(client.StartLive(ctx, ann, s.Id))(t).StartLive.Session
	if started.CoverUrl == nil || *started.CoverUrl != cover {
		t.Fatalf("started session's cover: %v", started.CoverUrl)
	}
	page := must(client.LiveFeed(ctx, bob, client.Ptr(10), nil))(t).LiveFeed
	covers := map[string]*string{}
	for _, ed := range page.Edges {
		covers[ed.Node.Title] = ed.Node.CoverUrl
	}
	if len(covers) != 2 || covers["show"] == nil || *covers["show"] != cover || covers["plain"] != nil {
		t.Fatalf("live feed covers: %v", covers)
	}
	node := must(client.Node(ctx, bob, s.Id))(t).Node.(*client.NodeNodeLiveSession)
	if node.CoverUrl == nil || *node.CoverUrl != cover {
		t.Fatalf("node's cover: %v", node.CoverUrl)
	}
}
