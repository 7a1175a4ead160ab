package feedcore

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/live"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/redisstore/storetest"
)

// The content rules as the service applies them: what a publish or a
// schedule refuses stores nothing, and what it takes comes back whole.

// TestContentRulesChangeNothing: a refused publish or schedule stores
// nothing.
func TestContentRulesChangeNothing(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := newService(t, storetest.New(t), Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	mustUsers(t, s, 1)
	for _, text := range []string{"\x00", "\u200b", "a\x07"} {
		if _, err := s.Publish(ctx, 1, text); store.CodeOf(err) != apierr.BadInput {
			t.Errorf("Publish(%q) err = %v", text, err)
		}
	}
	page, err := s.FollowingFeed(ctx, FeedRequest{Viewer: 1, First: 10})
	if err != nil || len(page.Edges) != 0 {
		t.Fatalf("feed after refused publishes: %+v, %v", page, err)
	}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(-live.ScheduleGrace - time.Second), "in the past"},
		{time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), "in the past"},
		{now.Add(live.ScheduleHorizon + time.Second), "a year ahead"},
		{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), "a year ahead"},
	} {
		if _, err := s.ScheduleLive(ctx, 1, "t", tc.at); store.CodeOf(err) != apierr.BadInput || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ScheduleLive(%v) err = %v, want %q", tc.at, err, tc.want)
		}
	}
	if _, err := s.ScheduleLive(ctx, 1, "\u200b", now.Add(time.Hour)); store.CodeOf(err) != apierr.BadInput {
		t.Errorf("zero-width title: err = %v", err)
	}
	lp, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 10})
	if err != nil || len(lp.Edges) != 0 {
		t.Fatalf("live feed after refused schedules: %+v, %v", lp, err)
	}
	// The edges of the window are in.
	for _, at := range []time.Time{now.Add(-live.ScheduleGrace), now.Add(live.ScheduleHorizon)} {
		if _, err := s.ScheduleLive(ctx, 1, "edge", at); err != nil {
			t.Errorf("ScheduleLive(%v): %v", at, err)
		}
	}
}

// The publish rules: text or media (or both), a content warning of at
// most content.MaxContentWarning characters; a refused publish stores
// nothing.
func TestPublishPostRules(t *testing.T) {
	s := newService(t, storetest.New(t), Options{MediaHosts: []string{"cdn.example.com"}})
	ctx := context.Background()
	mustUsers(t, s, 1)
	pic := []content.Media{{URL: "https://cdn.example.com/a.jpg", Kind: content.MediaImage}}
	for _, tc := range []struct {
		name string
		in   NewPost
		err  string
	}{
		{"empty", NewPost{}, "a post needs text or media"},
		{"white space, no media", NewPost{Text: " \n\t "}, "a post needs text or media"},
		{"invisible text, with media", NewPost{Text: "\u200b", Media: pic}, "text must contain at least one visible character"},
		{"long content warning", NewPost{Text: "x", ContentWarning: strings.Repeat("w", content.MaxContentWarning+1)}, "contentWarning has 201 characters"},
		{"control character in the content warning", NewPost{Text: "x", ContentWarning: "a\x00"}, "contentWarning must not contain control characters"},
		{"long idempotency key", NewPost{Text: "x", IdempotencyKey: strings.Repeat("k", timeline.MaxIdempotencyKey+1)}, "idempotencyKey has 129 bytes"},
		{"media host not allowed", NewPost{Media: []content.Media{{URL: "https://elsewhere.example.com/a.jpg", Kind: content.MediaImage}}}, "media[0].url names host"},
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
		Media: []content.Media{
			{URL: "http://127.0.0.1:8080/demo/media/a.png", Kind: content.MediaImage, Width: 640, Height: 480, AltText: "a \"quoted\" cat, é 👩‍💻", Sensitive: true},
			{URL: "https://cdn.example.com/b.gif", Kind: content.MediaGIF, Width: 1, Height: 1, DurationMs: 1200, ThumbnailURL: "https://cdn.example.com/b.jpg"},
			{URL: "https://cdn.example.com/c.jpg?x=1&y=%20", Kind: content.MediaImage},
			{URL: "https://cdn.example.com/d.jpg", Kind: content.MediaImage, AltText: "line\nbreak"},
		},
		ContentWarning: "food",
		IdempotencyKey: "k1",
	}
	p, err := s.PublishPost(ctx, 1, in)
	if err != nil {
		t.Fatal(err)
	}
	same := func(what string, got *content.Post) {
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
	logged, err := s.LogPublish(ctx, 1, NewPost{Media: in.Media[:1], ContentWarning: "cw"}, 0)
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
	put := &content.Post{ID: 77, Author: 2, CreatedAt: time.UnixMilli(1_700_000_000_000).UTC(), Media: in.Media[1:2], ContentWarning: "x"}
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
