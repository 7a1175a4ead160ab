package content

import (
	"reflect"
	"strings"
	"testing"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/internal/hostmatch"
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

// An idempotency record made before media existed ("ms count text")
// still replays as the text post it was.
func TestOldPublishRecordReplays(t *testing.T) {
	for _, rec := range []string{"hello world", "", "two  spaces"} {
		c, err := ParseRecord(rec)
		if err != nil || c != (Encoded{Text: rec}) {
			t.Errorf("ParseRecord(%q) = %+v, %v", rec, c, err)
		}
	}
	full := Encoded{Text: "t", Media: EncodeMedia([]Media{{URL: "https://a/b", Kind: MediaVideo}}), CW: "cw"}
	if c, err := ParseRecord(full.Record()); err != nil || c != full {
		t.Errorf("record round trip: %+v, %v; want %+v", c, err, full)
	}
	if _, err := ParseRecord(recordTag + "{"); err == nil {
		t.Error("a broken record parsed")
	}
}

// Media are stored compactly: one-letter keys and kinds, unset values
// left out.
func TestMediaEncoding(t *testing.T) {
	got := EncodeMedia([]Media{{URL: "https://a/b.mp4", Kind: MediaVideo, DurationMs: 5}, {URL: "https://a/c", Kind: MediaGIF, Sensitive: true}})
	if want := `[{"u":"https://a/b.mp4","k":"v","d":5},{"u":"https://a/c","k":"g","s":true}]`; got != want {
		t.Errorf("EncodeMedia = %s, want %s", got, want)
	}
	if EncodeMedia(nil) != "" {
		t.Error("no media should store nothing")
	}
	for _, bad := range []string{"{", `[{"u":"x","k":"z"}]`} {
		if _, err := DecodeMedia(bad); err == nil {
			t.Errorf("DecodeMedia(%s) succeeded", bad)
		}
	}
}
