package feedcore

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/internal/hostmatch"
	"github.com/feedd/feedd/redisstore/storetest"
)

var prodURLs = URLPolicy{Hosts: hostmatch.New([]string{"cdn.example.com", "*.media.example.net"})}

func TestCheckURL(t *testing.T) {
	dev := URLPolicy{AnyHost: true}
	for _, tc := range []struct {
		name, in string
		p        URLPolicy
		err      string // "" accepted
	}{
		{"listed host", "https://cdn.example.com/a.jpg", prodURLs, ""},
		{"listed host, any case", "HTTPS://CDN.Example.COM/a.jpg", prodURLs, ""},
		{"listed host, trailing dot", "https://cdn.example.com./a.jpg", prodURLs, ""},
		{"listed host, port 443", "https://cdn.example.com:443/a.jpg", prodURLs, ""},
		{"subdomain of a suffix", "https://eu.img.media.example.net/a.jpg?w=100#x", prodURLs, ""},
		{"suffix itself", "https://media.example.net/a.jpg", prodURLs, "not in this server's --media-hosts"},
		{"other host", "https://evil.example.org/a.jpg", prodURLs, `"evil.example.org", which is not in`},
		{"look-alike suffix", "https://cdn.example.com.evil.org/a.jpg", prodURLs, "not in this server's --media-hosts"},
		{"no hosts configured", "https://cdn.example.com/a.jpg", URLPolicy{}, "--media-hosts is empty"},
		{"other port", "https://cdn.example.com:8443/a.jpg", prodURLs, "port 8443"},
		{"http", "http://cdn.example.com/a.jpg", prodURLs, "must be an https URL"},
		{"javascript", "javascript:alert(1)", prodURLs, "absolute URL"},
		{"data", "data:image/png;base64,AAAA", prodURLs, "absolute URL"},
		{"relative", "/a.jpg", prodURLs, "absolute URL"},
		{"scheme-relative", "//cdn.example.com/a.jpg", prodURLs, "absolute URL"},
		{"no host", "https:///a.jpg", prodURLs, "absolute URL"},
		{"userinfo", "https://user@cdn.example.com/a.jpg", prodURLs, "user name or password"},
		{"password", "https://u:p@cdn.example.com/a.jpg", prodURLs, "user name or password"},
		{"userinfo naming a listed host", "https://cdn.example.com@evil.org/a.jpg", prodURLs, "user name or password"},
		{"backslash", `https://evil.org\.cdn.example.com/a.jpg`, prodURLs, "backslashes"},
		{"space", "https://cdn.example.com/a b.jpg", prodURLs, "printable ASCII"},
		{"newline", "https://cdn.example.com/a\n.jpg", prodURLs, "found byte 0x0a"},
		{"NUL", "https://cdn.example.com/\x00", prodURLs, "printable ASCII"},
		{"non-ASCII", "https://cdn.example.com/é.jpg", prodURLs, "percent-encode"},
		{"percent-encoded path", "https://cdn.example.com/%C3%A9.jpg", prodURLs, ""},
		{"percent-encoded host", "https://cdn%2eexample.com/a.jpg", prodURLs, "absolute URL"},
		{"odd host characters", "https://evil.org&.cdn.example.com/a.jpg", prodURLs, "not a host name"},
		{"odd host characters, listed suffix", "https://evil.org;.x.media.example.net/a.jpg", prodURLs, "not a host name"},
		{"underscore in a host", "https://my_bucket.cdn.example.com/a.jpg", URLPolicy{AnyHost: true}, ""},
		{"overlong", "https://cdn.example.com/" + strings.Repeat("a", MaxURLLen), prodURLs, "at most 2048"},
		{"longest", "https://cdn.example.com/" + strings.Repeat("a", MaxURLLen-len("https://cdn.example.com/")), prodURLs, ""},
		{"dev: any https host", "https://anything.example.org:8443/a.jpg", dev, ""},
		{"dev: http on 127.0.0.1", "http://127.0.0.1:8080/demo/media/a.png", dev, ""},
		{"dev: http on localhost", "http://localhost/a.png", dev, ""},
		{"dev: http on ::1", "http://[::1]:8080/a.png", dev, ""},
		{"dev: http elsewhere", "http://example.org/a.png", dev, "must be an https URL"},
		{"dev: http on 127.0.0.2", "http://127.0.0.2/a.png", dev, "must be an https URL"},
		{"dev: userinfo still refused", "http://u@127.0.0.1/a.png", dev, "user name or password"},
		{"dev: ftp", "ftp://127.0.0.1/a.png", dev, "must be an https URL"},
		{"prod: http on loopback", "http://127.0.0.1:8080/a.png", prodURLs, "must be an https URL"},
	} {
		got, err := CheckURL("media[1].url", tc.in, tc.p)
		switch {
		case tc.err == "" && (err != nil || got != tc.in):
			t.Errorf("%s: CheckURL(%q) = %q, %v; want it accepted", tc.name, tc.in, got, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) ||
			!strings.HasPrefix(err.Error(), "media[1].url ") || store.CodeOf(err) != apierr.BadInput):
			t.Errorf("%s: CheckURL(%q) err = %v, want BAD_USER_INPUT naming media[1].url and saying %q", tc.name, tc.in, err, tc.err)
		}
	}
}

func TestCheckMedia(t *testing.T) {
	img := func(mod ...func(*Media)) Media {
		m := Media{URL: "https://cdn.example.com/a.jpg", Kind: MediaImage, Width: 1080, Height: 720}
		for _, f := range mod {
			f(&m)
		}
		return m
	}
	video := img(func(m *Media) { m.Kind, m.DurationMs = MediaVideo, 15_000 })
	gif := img(func(m *Media) { m.Kind, m.DurationMs = MediaGIF, 2_000 })
	for _, tc := range []struct {
		name  string
		items []Media
		err   string // "" accepted
	}{
		{"none", nil, ""},
		{"four images and GIFs", []Media{img(), gif, img(), gif}, ""},
		{"one video", []Media{video}, ""},
		{"everything set", []Media{img(func(m *Media) {
			m.AltText, m.ThumbnailURL, m.Sensitive = "a cat", "https://x.media.example.net/t.jpg", true
		})}, ""},
		{"sizes unknown", []Media{img(func(m *Media) { m.Width, m.Height = 0, 0 })}, ""},
		{"largest sizes", []Media{img(func(m *Media) { m.Width, m.Height = MaxMediaSide, MaxMediaSide })}, ""},
		{"five images", []Media{img(), img(), img(), img(), img()}, "media has 5 items"},
		{"image and video", []Media{img(), video}, "media[1].kind is VIDEO, but a video goes alone"},
		{"video and image", []Media{video, img()}, "media[0].kind is VIDEO, but a video goes alone"},
		{"two videos", []Media{video, video}, "media[0].kind is VIDEO"},
		{"unknown kind", []Media{img(func(m *Media) { m.Kind = "AUDIO" })}, "media[0].kind must be IMAGE, VIDEO or GIF"},
		{"bad url", []Media{img(), img(func(m *Media) { m.URL = "http://cdn.example.com/a.jpg" })}, "media[1].url must be an https URL"},
		{"missing url", []Media{img(func(m *Media) { m.URL = "" })}, "media[0].url must be an absolute URL"},
		{"host not allowed", []Media{img(func(m *Media) { m.URL = "https://evil.org/a.jpg" })}, "media[0].url names host"},
		{"bad thumbnail", []Media{img(), img(), img(func(m *Media) { m.ThumbnailURL = "https://u@cdn.example.com/t.jpg" })}, "media[2].thumbnailUrl must not carry"},
		{"negative width", []Media{img(func(m *Media) { m.Width = -1 })}, "media[0].width is -1"},
		{"negative height", []Media{img(func(m *Media) { m.Height = -5 })}, "media[0].height is -5"},
		{"huge height", []Media{img(func(m *Media) { m.Height = MaxMediaSide + 1 })}, "media[0].height is 100001"},
		{"negative duration", []Media{gif, img(func(m *Media) { m.Kind, m.DurationMs = MediaGIF, -1 })}, "media[1].durationMs is -1"},
		{"day-long video", []Media{img(func(m *Media) { m.Kind, m.DurationMs = MediaVideo, MaxDurationMs+1 })}, "media[0].durationMs is 86400001"},
		{"duration on an image", []Media{img(func(m *Media) { m.DurationMs = 10 })}, "media[0].durationMs is set on an IMAGE"},
		{"long alt text", []Media{img(func(m *Media) { m.AltText = strings.Repeat("é", MaxAltText+1) })}, "media[0].altText has 1501 characters"},
		{"control character in alt text", []Media{img(func(m *Media) { m.AltText = "a\x1bb" })}, "media[0].altText must not contain control characters"},
	} {
		got, err := CheckMedia(tc.items, prodURLs)
		switch {
		case tc.err == "" && (err != nil || !reflect.DeepEqual(got, tc.items) && len(tc.items) > 0):
			t.Errorf("%s: CheckMedia = %+v, %v; want it accepted as is", tc.name, got, err)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || store.CodeOf(err) != apierr.BadInput):
			t.Errorf("%s: CheckMedia err = %v, want BAD_USER_INPUT saying %q", tc.name, err, tc.err)
		}
	}
	// Alt text is trimmed; blank alt text is none.
	got, err := CheckMedia([]Media{img(func(m *Media) { m.AltText = "  a cat \n" }), img(func(m *Media) { m.AltText = " \t" })}, prodURLs)
	if err != nil || got[0].AltText != "a cat" || got[1].AltText != "" {
		t.Errorf("alt text trimmed: %+v, %v", got, err)
	}
}

// The publish rules: text or media (or both), a content warning of at
// most MaxContentWarning characters; a refused publish stores nothing.
func TestPublishPostRules(t *testing.T) {
	s := newService(t, storetest.New(t), Options{MediaHosts: []string{"cdn.example.com"}})
	ctx := context.Background()
	mustUsers(t, s, 1)
	pic := []Media{{URL: "https://cdn.example.com/a.jpg", Kind: MediaImage}}
	for _, tc := range []struct {
		name string
		in   NewPost
		err  string
	}{
		{"empty", NewPost{}, "a post needs text or media"},
		{"white space, no media", NewPost{Text: " \n\t "}, "a post needs text or media"},
		{"invisible text, with media", NewPost{Text: "\u200b", Media: pic}, "text must contain at least one visible character"},
		{"long content warning", NewPost{Text: "x", ContentWarning: strings.Repeat("w", MaxContentWarning+1)}, "contentWarning has 201 characters"},
		{"control character in the content warning", NewPost{Text: "x", ContentWarning: "a\x00"}, "contentWarning must not contain control characters"},
		{"long idempotency key", NewPost{Text: "x", IdempotencyKey: strings.Repeat("k", maxIdempotencyKey+1)}, "idempotencyKey has 129 bytes"},
		{"media host not allowed", NewPost{Media: []Media{{URL: "https://elsewhere.example.com/a.jpg", Kind: MediaImage}}}, "media[0].url names host"},
	} {
		if _, err := s.PublishPost(ctx, 1, tc.in); err == nil || !strings.Contains(err.Error(), tc.err) || store.CodeOf(err) != apierr.BadInput {
			t.Errorf("%s: PublishPost err = %v, want BAD_USER_INPUT saying %q", tc.name, err, tc.err)
		}
	}
	if got := readAll(t, s, 1, 10); len(got) != 0 {
		t.Fatalf("refused publishes left posts %v", got)
	}
	p, err := s.PublishPost(ctx, 1, NewPost{Text: "  ", Media: pic, ContentWarning: "  spoilers  "})
	if err != nil {
		t.Fatal(err)
	}
	if p.Text != "" || p.ContentWarning != "spoilers" || !reflect.DeepEqual(p.Media, pic) {
		t.Errorf("media-only post: %+v", p)
	}
}

// TestMediaStored: a post's media and content warning are stored with the
// post (the publish event carries them) and come back, equal, from every
// read: the publish's answer, a retry with its idempotency key, Posts
// (export), CachedPosts (feeds), the like's answer and a feed page; and
// from a publish the workers finish after its request died, and from
// PutPosts (import). A post without them stores no field for them.
func TestMediaStored(t *testing.T) {
	st := storetest.New(t)
	s := newService(t, st, Options{DevMediaURLs: true})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	in := NewPost{
		Text: "four of them",
		Media: []Media{
			{URL: "http://127.0.0.1:8080/demo/media/a.png", Kind: MediaImage, Width: 640, Height: 480, AltText: "a \"quoted\" cat, é 👩‍💻", Sensitive: true},
			{URL: "https://cdn.example.com/b.gif", Kind: MediaGIF, Width: 1, Height: 1, DurationMs: 1200, ThumbnailURL: "https://cdn.example.com/b.jpg"},
			{URL: "https://cdn.example.com/c.jpg?x=1&y=%20", Kind: MediaImage},
			{URL: "https://cdn.example.com/d.jpg", Kind: MediaImage, AltText: "line\nbreak"},
		},
		ContentWarning: "food",
		IdempotencyKey: "k1",
	}
	p, err := s.PublishPost(ctx, 1, in)
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, got *Post) {
		t.Helper()
		if got == nil || got.ID != p.ID || got.Text != in.Text || got.ContentWarning != in.ContentWarning || !reflect.DeepEqual(got.Media, in.Media) {
			t.Errorf("%s: %+v, want %+v", what, got, in)
		}
	}
	same("publish", p)
	retry, err := s.PublishPost(ctx, 1, NewPost{Text: "edited", IdempotencyKey: "k1"})
	if err != nil {
		t.Fatal(err)
	}
	same("retry with the key", retry)
	ps, err := s.Posts(ctx, []store.ID{p.ID})
	if err != nil {
		t.Fatal(err)
	}
	same("Posts", ps[0])
	if ps, err = s.CachedPosts(ctx, []store.ID{p.ID}); err != nil {
		t.Fatal(err)
	}
	same("CachedPosts", ps[0])
	liked, _, err := s.Like(ctx, 2, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	same("Like", liked)
	page, err := s.FollowingFeed(ctx, FeedRequest{Viewer: 1, First: 5})
	if err != nil || len(page.Edges) != 1 {
		t.Fatalf("feed: %+v, %v", page, err)
	}
	same("feed page", page.Edges[0].Post)

	// Finished by the workers from the event alone.
	logged, err := s.logPublish(ctx, 1, NewPost{Media: in.Media[:1], ContentWarning: "cw"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	startWorkers(t, s, WorkerOptions{})
	drain(t, s)
	if ps, err = s.Posts(ctx, []store.ID{logged.ID}); err != nil || ps[0] == nil {
		t.Fatalf("post finished by the workers: %v, %v", ps, err)
	}
	if !reflect.DeepEqual(ps[0].Media, in.Media[:1]) || ps[0].ContentWarning != "cw" || ps[0].Text != "" {
		t.Errorf("post finished by the workers: %+v", ps[0])
	}

	// PutPosts (import, demo).
	put := &Post{ID: 77, Author: 2, CreatedAt: time.UnixMilli(1_700_000_000_000).UTC(), Media: in.Media[1:2], ContentWarning: "x"}
	if err := s.PutPost(ctx, put); err != nil {
		t.Fatal(err)
	}
	if ps, err = s.Posts(ctx, []store.ID{77}); err != nil || !reflect.DeepEqual(ps[0], put) {
		t.Errorf("PutPost: %+v, %v; want %+v", ps[0], err, put)
	}

	plain, err := s.Publish(ctx, 2, "just text")
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.Redis.Do(ctx, s.Redis.B().Hlen().Key(s.Keys.Post(plain.ID)).Build()).AsInt64()
	if err != nil || n != 3 {
		t.Errorf("a text post's hash has %d fields (%v), want 3: a, t, x", n, err)
	}
}

// An idempotency record made before media existed ("ms count text")
// still replays as the text post it was.
func TestOldPublishRecordReplays(t *testing.T) {
	for _, rec := range []string{"hello world", "", "two  spaces"} {
		c, err := parseRecord(rec)
		if err != nil || c != (postContent{Text: rec}) {
			t.Errorf("parseRecord(%q) = %+v, %v", rec, c, err)
		}
	}
	full := postContent{Text: "t", Media: encodeMedia([]Media{{URL: "https://a/b", Kind: MediaVideo}}), CW: "cw"}
	if c, err := parseRecord(full.record()); err != nil || c != full {
		t.Errorf("record round trip: %+v, %v; want %+v", c, err, full)
	}
	if _, err := parseRecord(recordTag + "{"); err == nil {
		t.Error("a broken record parsed")
	}
}

// Media are stored compactly: one-letter keys and kinds, unset values
// left out.
func TestMediaEncoding(t *testing.T) {
	got := encodeMedia([]Media{{URL: "https://a/b.mp4", Kind: MediaVideo, DurationMs: 5}, {URL: "https://a/c", Kind: MediaGIF, Sensitive: true}})
	if want := `[{"u":"https://a/b.mp4","k":"v","d":5},{"u":"https://a/c","k":"g","s":true}]`; got != want {
		t.Errorf("encodeMedia = %s, want %s", got, want)
	}
	if encodeMedia(nil) != "" {
		t.Error("no media should store nothing")
	}
	for _, bad := range []string{"{", `[{"u":"x","k":"z"}]`} {
		if _, err := decodeMedia(bad); err == nil {
			t.Errorf("decodeMedia(%s) succeeded", bad)
		}
	}
}

// A live session's cover follows the media URL rules and is stored on the
// session.
func TestLiveCover(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := newService(t, storetest.New(t), Options{MediaHosts: []string{"cdn.example.com"}, Now: func() time.Time { return now }})
	ctx := context.Background()
	mustUsers(t, s, 1)
	at := now.Add(time.Hour)
	for _, bad := range []string{"http://cdn.example.com/c.jpg", "https://evil.org/c.jpg", "https://u@cdn.example.com/c.jpg", "cover.jpg"} {
		_, err := s.ScheduleLiveSession(ctx, 1, NewLive{Title: "t", ScheduledStartAt: at, CoverURL: bad})
		if store.CodeOf(err) != apierr.BadInput || !strings.HasPrefix(err.Error(), "coverUrl ") {
			t.Errorf("cover %q: err = %v, want BAD_USER_INPUT naming coverUrl", bad, err)
		}
	}
	l, err := s.ScheduleLiveSession(ctx, 1, NewLive{Title: "t", ScheduledStartAt: at, CoverURL: "https://cdn.example.com/c.jpg"})
	if err != nil || l.CoverURL != "https://cdn.example.com/c.jpg" {
		t.Fatalf("schedule with a cover: %+v, %v", l, err)
	}
	if l, err = s.StartLive(ctx, 1, l.ID); err != nil || l.CoverURL != "https://cdn.example.com/c.jpg" {
		t.Fatalf("started session: %+v, %v", l, err)
	}
	plain, err := s.ScheduleLive(ctx, 1, "no cover", at)
	if err != nil || plain.CoverURL != "" {
		t.Fatalf("schedule without a cover: %+v, %v", plain, err)
	}
	if ls, err := s.LiveSessions(ctx, []store.ID{plain.ID}); err != nil || ls[0].CoverURL != "" {
		t.Fatalf("session without a cover: %+v, %v", ls, err)
	}
}
