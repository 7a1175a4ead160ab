package content

import (
	"encoding/json"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/internal/hostmatch"
)

// Content rules for what a post shows besides its text (media, a content
// warning) and for the URLs that point at media and live covers. The app
// uploads to its own storage and hands feedd the URLs: feedd never fetches
// them, so what it checks is what every reader's app will fetch.

// MediaKind is what a media item is.
type MediaKind string

const (
	MediaImage MediaKind = "IMAGE"
	MediaVideo MediaKind = "VIDEO"
	MediaGIF   MediaKind = "GIF"
)

// Media is an image, GIF or video attached to a post. A zero Width,
// Height or DurationMs is unknown; an empty AltText or ThumbnailURL is
// absent.
type Media struct {
	URL           string
	Kind          MediaKind
	Width, Height int // pixels
	AltText       string
	ThumbnailURL  string
	DurationMs    int // VIDEO and GIF only
	// Sensitive asks apps to blur the item until it is tapped.
	Sensitive bool
}

// Bounds of a post's media and of the URLs media and covers point at.
const (
	// MaxImages images or GIFs a post may carry, or MaxVideos video.
	MaxImages = 4
	MaxVideos = 1
	// MaxAltText is the longest alt text, in characters.
	MaxAltText = 1500
	// MaxContentWarning is the longest content warning, in characters.
	MaxContentWarning = 200
	// MaxURLLen is the longest URL, in bytes: what browsers and CDNs
	// reliably take, and it bounds what a post costs to store and cache.
	MaxURLLen = 2048
	// MaxMediaSide is the largest width or height, in pixels: beyond
	// any camera's panorama, and far inside GraphQL's Int.
	MaxMediaSide = 100_000
	// MaxDurationMs is the longest video or GIF, 24 hours.
	MaxDurationMs = 24 * 60 * 60 * 1000
)

// URLPolicy says which URLs media and live covers may point at.
type URLPolicy struct {
	// Hosts are the hosts https URLs may name (--media-hosts): exact
	// names, or "*.example.com" for any subdomain (hostmatch), on the
	// default port.
	Hosts hostmatch.List
	// AnyHost accepts https URLs on any host and port, and http ones on
	// this machine (localhost, 127.0.0.1, ::1; any port): dev auth, where
	// the demo serves its media from feedd's own listener.
	AnyHost bool
}

// ImportURLs is the policy of imported posts and sessions: the operator
// vouches for the file's hosts, which --media-hosts need not list (a
// store's history may name hosts no longer used for new uploads); a
// dev-auth store's export, with its loopback URLs, loads again.
var ImportURLs = URLPolicy{AnyHost: true}

// loopback are the host names of this machine that http URLs may name
// under AnyHost.
var loopback = hostmatch.New([]string{"localhost", "127.0.0.1", "::1"})

// CheckURL applies p to the URL raw in the field named what: printable
// ASCII without spaces or backslashes (other characters percent-encoded)
// of at most MaxURLLen bytes, an absolute https URL whose host is a host
// name or an IP address that p allows, and no user name or password
// (https://user@host/ shows one host and may fetch another in some
// clients). It returns the URL as given, or a BAD_USER_INPUT error naming
// the field.
func CheckURL(what, raw string, p URLPolicy) (string, error) {
	bad := func(format string, args ...any) error {
		return apierr.Errorf(apierr.BadInput, "%s %s", what, fmt.Sprintf(format, args...))
	}
	if len(raw) > MaxURLLen {
		return "", bad("has %d bytes; at most %d are allowed", len(raw), MaxURLLen)
	}
	for i := 0; i < len(raw); i++ {
		if c := raw[i]; c <= ' ' || c >= 0x7f || c == '\\' {
			return "", bad("must be printable ASCII without spaces or backslashes (found byte %#02x at %d); percent-encode other characters", c, i)
		}
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" || u.Host == "" {
		return "", bad("must be an absolute URL like https://cdn.example.com/a.jpg")
	}
	if u.User != nil {
		return "", bad("must not carry a user name or password")
	}
	host, port := u.Hostname(), u.Port()
	if !validHost(host) {
		return "", bad("names host %q, which is not a host name or IP address", host)
	}
	switch {
	case u.Scheme == "http" && p.AnyHost && loopback.Match(host):
		return raw, nil
	case u.Scheme != "https":
		return "", bad("must be an https URL")
	case p.AnyHost:
		return raw, nil
	case p.Hosts.Empty():
		return "", bad("names host %q, but this server takes no media URLs (its --media-hosts is empty)", host)
	case !p.Hosts.Match(host):
		return "", bad("names host %q, which is not in this server's --media-hosts", host)
	case port != "" && port != "443":
		return "", bad("names port %s; media hosts are served on 443", port)
	}
	return raw, nil
}

// validHost reports whether host is an IP address or made of the
// characters of host names: the host every client reads out of the URL
// is then the one matched here. (A backslash, which browsers read as a
// slash and Go's parser as part of the host, is refused before.)
func validHost(host string) bool {
	if host == "" {
		return false
	}
	if strings.Contains(host, ":") {
		return net.ParseIP(host) != nil
	}
	for i := 0; i < len(host); i++ {
		c := host[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// CheckMedia applies the media rules to a post's items: at most
// MaxImages images and GIFs, or one video alone; every URL under p;
// sizes and durations within bounds (a duration only for a video or a
// GIF); alt text under the content rules, at most MaxAltText characters.
// It returns the items with their alt text trimmed (blank is absent), or
// a BAD_USER_INPUT error naming the field, media[i].name.
func CheckMedia(items []Media, p URLPolicy) ([]Media, error) {
	if len(items) == 0 {
		return nil, nil
	}
	if len(items) > MaxImages {
		return nil, apierr.Errorf(apierr.BadInput, "media has %d items; a post carries at most %d images or GIFs, or %d video", len(items), MaxImages, MaxVideos)
	}
	out := make([]Media, len(items))
	for i, m := range items {
		field := func(name string) string { return fmt.Sprintf("media[%d].%s", i, name) }
		switch m.Kind {
		case MediaImage, MediaGIF:
		case MediaVideo:
			if len(items) > MaxVideos {
				return nil, apierr.Errorf(apierr.BadInput, "%s is VIDEO, but a video goes alone: a post carries at most %d images or GIFs, or %d video", field("kind"), MaxImages, MaxVideos)
			}
		default:
			return nil, apierr.Errorf(apierr.BadInput, "%s must be IMAGE, VIDEO or GIF", field("kind"))
		}
		var err error
		if m.URL, err = CheckURL(field("url"), m.URL, p); err != nil {
			return nil, err
		}
		if m.ThumbnailURL != "" {
			if m.ThumbnailURL, err = CheckURL(field("thumbnailUrl"), m.ThumbnailURL, p); err != nil {
				return nil, err
			}
		}
		for _, n := range []struct {
			name   string
			v, max int
		}{{"width", m.Width, MaxMediaSide}, {"height", m.Height, MaxMediaSide}, {"durationMs", m.DurationMs, MaxDurationMs}} {
			if n.v < 0 || n.v > n.max {
				return nil, apierr.Errorf(apierr.BadInput, "%s is %d; it must be 0 (unknown) to %d", field(n.name), n.v, n.max)
			}
		}
		if m.DurationMs != 0 && m.Kind == MediaImage {
			return nil, apierr.Errorf(apierr.BadInput, "%s is set on an IMAGE; only a VIDEO or a GIF has a duration", field("durationMs"))
		}
		if m.AltText, err = optionalText(field("altText"), m.AltText, MaxAltText); err != nil {
			return nil, err
		}
		out[i] = m
	}
	return out, nil
}

// CheckContentWarning applies the content rules to a content warning of
// at most MaxContentWarning characters, and returns it trimmed; blank is
// none.
func CheckContentWarning(cw string) (string, error) {
	return optionalText("contentWarning", cw, MaxContentWarning)
}

// optionalText is CheckText for a field that may be left blank: white
// space alone is "" (absent).
func optionalText(what, text string, max int) (string, error) {
	if strings.TrimSpace(text) == "" {
		return "", nil
	}
	return CheckText(what, text, max)
}

// Stored media: the post hash's field m (and the publish event's) holds a
// post's items as a JSON array with one-letter keys and kinds, empty
// values left out: about 60 bytes plus the URLs and alt text an item.

// mediaRecord is one stored item.
type mediaRecord struct {
	U string `json:"u"`
	K string `json:"k"` // i, v or g
	W int    `json:"w,omitempty"`
	H int    `json:"h,omitempty"`
	A string `json:"a,omitempty"`
	T string `json:"t,omitempty"`
	D int    `json:"d,omitempty"`
	S bool   `json:"s,omitempty"`
}

var kindCodes = map[MediaKind]string{MediaImage: "i", MediaVideo: "v", MediaGIF: "g"}

var codeKinds = map[string]MediaKind{"i": MediaImage, "v": MediaVideo, "g": MediaGIF}

// EncodeMedia is items as stored: "" for none.
func EncodeMedia(items []Media) string {
	if len(items) == 0 {
		return ""
	}
	rs := make([]mediaRecord, len(items))
	for i, m := range items {
		rs[i] = mediaRecord{U: m.URL, K: kindCodes[m.Kind], W: m.Width, H: m.Height, A: m.AltText, T: m.ThumbnailURL, D: m.DurationMs, S: m.Sensitive}
	}
	b, err := json.Marshal(rs)
	if err != nil { // strings and numbers only: cannot happen
		panic(fmt.Sprintf("encode media: %v", err))
	}
	return string(b)
}

// DecodeMedia reads what EncodeMedia stored.
func DecodeMedia(s string) ([]Media, error) {
	if s == "" {
		return nil, nil
	}
	var rs []mediaRecord
	if err := json.Unmarshal([]byte(s), &rs); err != nil {
		return nil, fmt.Errorf("stored media: %w", err)
	}
	out := make([]Media, len(rs))
	for i, r := range rs {
		k, ok := codeKinds[r.K]
		if !ok {
			return nil, fmt.Errorf("stored media: kind %q", r.K)
		}
		out[i] = Media{URL: r.U, Kind: k, Width: r.W, Height: r.H, AltText: r.A, ThumbnailURL: r.T, DurationMs: r.D, Sensitive: r.S}
	}
	return out, nil
}

// Encoded is a post's content as its publish event and idempotency
// record carry it, media encoded (EncodeMedia).
type Encoded struct {
	Text, Media, CW string
}

// Encode is p's content, encoded.
func Encode(p *Post) Encoded {
	return Encoded{Text: p.Text, Media: EncodeMedia(p.Media), CW: p.ContentWarning}
}

// EventFields appends c's fields to fv as an event carries them: x (text),
// m (media) and cw (content warning), each when set.
func (c Encoded) EventFields(fv ...string) []string {
	for _, f := range [...]struct{ name, v string }{{"x", c.Text}, {"m", c.Media}, {"cw", c.CW}} {
		if f.v != "" {
			fv = append(fv, f.name, f.v)
		}
	}
	return fv
}

// recordTag starts an idempotency record's content that is more than a
// text. No text starts with it: the content rules refuse control
// characters.
const recordTag = "\x01"

// contentRecord is an idempotency record's content beyond a text, JSON.
type contentRecord struct {
	X  string `json:"x,omitempty"`
	M  string `json:"m,omitempty"`
	CW string `json:"cw,omitempty"`
}

// Record is c as an idempotency record keeps it after "ms count ": the
// text alone for a post of text only (as records made before media
// existed), else recordTag and JSON.
func (c Encoded) Record() string {
	if c.Media == "" && c.CW == "" {
		return c.Text
	}
	b, err := json.Marshal(contentRecord{X: c.Text, M: c.Media, CW: c.CW})
	if err != nil { // strings only: cannot happen
		panic(fmt.Sprintf("encode a publish record: %v", err))
	}
	return recordTag + string(b)
}

// ParseRecord reads what Record wrote.
func ParseRecord(s string) (Encoded, error) {
	rest, ok := strings.CutPrefix(s, recordTag)
	if !ok {
		return Encoded{Text: s}, nil
	}
	var r contentRecord
	if err := json.Unmarshal([]byte(rest), &r); err != nil {
		return Encoded{}, fmt.Errorf("publish record: %w", err)
	}
	return Encoded{Text: r.X, Media: r.M, CW: r.CW}, nil
}

// Post is the post of id by author at ts (ms) with content c.
func (c Encoded) Post(id, author store.ID, ts int64) (*Post, error) {
	media, err := DecodeMedia(c.Media)
	if err != nil {
		return nil, fmt.Errorf("post %d: %w", id, err)
	}
	return &Post{ID: id, Author: author, Text: c.Text, CreatedAt: time.UnixMilli(ts).UTC(), Media: media, ContentWarning: c.CW}, nil
}

// CheckCoverURL applies p to a live session's cover URL, optional: ""
// is none.
func CheckCoverURL(raw string, p URLPolicy) (string, error) {
	if raw == "" {
		return "", nil
	}
	return CheckURL("coverUrl", raw, p)
}
