package demo

import (
	"context"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/content"
)

// The media files stay small: the repository carries them.
func TestMediaFilesAreSmall(t *testing.T) {
	total := int64(0)
	err := fs.WalkDir(mediaFiles, "media", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("demo media: %d bytes", total)
	if total == 0 || total > 200<<10 {
		t.Errorf("demo media take %d bytes, want some and under 200 KiB", total)
	}
}

// Every media URL of the demo (avatars too) names a file MediaHandler serves, with the
// type its kind says; the video answers range requests (players seek);
// directories are not listed.
func TestMediaServed(t *testing.T) {
	srv := httptest.NewServer(http.StripPrefix("/demo/media/", MediaHandler()))
	defer srv.Close()
	base := srv.URL + "/demo/media/"
	people := newPeople(t)
	var urls []string
	for _, p := range showcase(people, clock, base) {
		for _, m := range p.Media {
			urls = append(urls, m.URL)
			if m.ThumbnailURL != "" {
				urls = append(urls, m.ThumbnailURL)
			}
		}
	}
	for _, c := range covers {
		urls = append(urls, base+c)
	}
	avatared := 0
	for _, p := range people {
		if p.AvatarURL != "" {
			urls = append(urls, base+p.AvatarURL)
			avatared++
		}
	}
	if avatared == 0 || avatared == len(people) {
		t.Errorf("%d of %d people have an avatar; want most, not all (avatarUrl is nullable)", avatared, len(people))
	}
	want := map[string]string{".png": "image/png", ".gif": "image/gif", ".mp4": "video/mp4"}
	for _, u := range urls {
		res, err := srv.Client().Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		ext := u[strings.LastIndex(u, "."):]
		if res.StatusCode != http.StatusOK || len(body) == 0 || res.Header.Get("Content-Type") != want[ext] {
			t.Errorf("GET %s: %d, %d bytes, type %q; want 200 and %s", u, res.StatusCode, len(body), res.Header.Get("Content-Type"), want[ext])
		}
	}
	req, _ := http.NewRequest(http.MethodGet, base+"waves.mp4", nil)
	req.Header.Set("Range", "bytes=0-99")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusPartialContent || res.ContentLength != 100 {
		t.Errorf("range request: %d, %d bytes", res.StatusCode, res.ContentLength)
	}
	for _, u := range []string{base, base + "nope.png", srv.URL + "/demo/media/../demo.go"} {
		res, err := srv.Client().Get(u)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == http.StatusOK {
			t.Errorf("GET %s: 200", u)
		}
	}
}

func newPeople(t *testing.T) []person {
	t.Helper()
	return makePeople(rand.New(rand.NewPCG(1, 0xfeedd)), numUsers)
}

// TestShowcase: the demo's first suggested viewer opens on a page with
// the media posts (the four pictures, the GIF, the video) and a content
// warning; the media are valid under dev auth's rules, as if published.
func TestShowcase(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	r, err := Load(ctx, svc, 1, testMediaBase)
	if err != nil {
		t.Fatal(err)
	}
	page, err := svc.FollowingFeed(ctx, feedcore.FeedRequest{Viewer: r.Viewers[0].ID, First: 20})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]bool{}
	for _, e := range page.Edges {
		p := e.Post
		if len(p.Media) == 4 {
			kinds["4 pictures"] = true
		}
		for _, m := range p.Media {
			kinds[string(m.Kind)] = true
			if m.Sensitive {
				kinds["sensitive"] = true
			}
		}
		if p.ContentWarning != "" {
			kinds["content warning"] = true
		}
		if _, err := content.CheckMedia(p.Media, content.URLPolicy{AnyHost: true}); err != nil {
			t.Errorf("post %d: %v", p.ID, err)
		}
	}
	for _, want := range []string{"4 pictures", "GIF", "VIDEO", "sensitive", "content warning"} {
		if !kinds[want] {
			t.Errorf("%s's first page has no %s: %v", r.Viewers[0].Handle, want, kinds)
		}
	}
}
