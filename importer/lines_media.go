package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/internal/jsontext"
)

// A post line's media is an array of flat objects with publishPost's
// MediaInput fields:
//
//	"media":[{"url":"https://cdn.example.com/a.jpg","kind":"IMAGE","width":1080,"height":720,"altText":"...","sensitive":true}]
//
// read as strictly as the line: names match exactly and once each,
// strings are valid UTF-8 without lone surrogate escapes, numbers are
// integers. The media rules (content.CheckMedia) then apply, under
// content.ImportURLs.

// mediaField is one key a media object may have, and where its value goes.
type mediaField struct {
	name string
	dst  func(m *content.Media) any
}

var mediaFields = []mediaField{
	{"url", func(m *content.Media) any { return &m.URL }},
	{"kind", func(m *content.Media) any { return (*string)(&m.Kind) }},
	{"width", func(m *content.Media) any { return &m.Width }},
	{"height", func(m *content.Media) any { return &m.Height }},
	{"altText", func(m *content.Media) any { return &m.AltText }},
	{"thumbnailUrl", func(m *content.Media) any { return &m.ThumbnailURL }},
	{"durationMs", func(m *content.Media) any { return &m.DurationMs }},
	{"sensitive", func(m *content.Media) any { return &m.Sensitive }},
}

// media returns a post line's optional media, checked.
func (o *object) media() ([]content.Media, error) {
	if !o.has(fMedia) {
		return nil, nil
	}
	v := &o.vals[fMedia]
	if v.kind != kArray {
		return nil, fmt.Errorf("media: want an array of objects, not %s", v.kind)
	}
	// Checked on the raw bytes, as str does: decoding would turn them into
	// U+FFFD.
	if v.high && !utf8.Valid(v.raw) {
		return nil, errors.New("media: not valid UTF-8")
	}
	if v.esc && jsontext.LoneSurrogate(v.raw) {
		return nil, errors.New("media: a \\u escape of a lone UTF-16 surrogate")
	}
	dec := json.NewDecoder(bytes.NewReader(v.raw))
	if err := expectDelim(dec, '[', "media: want an array of objects"); err != nil {
		return nil, err
	}
	var items []content.Media
	for dec.More() {
		if len(items) == content.MaxImages {
			return nil, fmt.Errorf("media has more than %d items; a post carries at most %d images or GIFs, or %d video", content.MaxImages, content.MaxImages, content.MaxVideos)
		}
		m, err := mediaItem(dec, len(items))
		if err != nil {
			return nil, err
		}
		items = append(items, m)
	}
	if err := expectDelim(dec, ']', "media: want an array of objects"); err != nil {
		return nil, err
	}
	return content.CheckMedia(items, content.ImportURLs)
}

// mediaItem reads the object of media[i] from dec.
func mediaItem(dec *json.Decoder, i int) (content.Media, error) {
	var m content.Media
	if err := expectDelim(dec, '{', fmt.Sprintf("media[%d]: want an object", i)); err != nil {
		return m, err
	}
	var seen uint
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return m, fmt.Errorf("media[%d]: %w", i, err)
		}
		name, _ := tok.(string)
		f := -1
		for k, mf := range mediaFields {
			if mf.name == name {
				f = k
			}
		}
		switch {
		case f < 0:
			return m, fmt.Errorf("media[%d]: unknown field %q", i, name)
		case seen&(1<<f) != 0:
			return m, fmt.Errorf("media[%d]: field %q appears twice", i, name)
		}
		seen |= 1 << f
		if err := dec.Decode(mediaFields[f].dst(&m)); err != nil {
			return m, fmt.Errorf("media[%d].%s: %w", i, name, unmarshalError(err))
		}
	}
	_, err := dec.Token() // the object's end, which More saw
	return m, err
}

// expectDelim reads the delimiter want from dec, or fails with msg.
func expectDelim(dec *json.Decoder, want json.Delim, msg string) error {
	tok, err := dec.Token()
	if d, ok := tok.(json.Delim); err != nil || !ok || d != want {
		return errors.New(msg)
	}
	return nil
}

// unmarshalError says in the import's words what a value of the wrong
// type is.
func unmarshalError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("want %s, not %s", typeName(te.Type.Kind().String()), te.Value)
	}
	return err
}

func typeName(kind string) string {
	switch kind {
	case "int":
		return "an integer"
	case "bool":
		return "a boolean"
	}
	return "a " + kind
}
