package content

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/feedd/feedd/apierr"
)

// Content rules for what users write and everyone reads (post texts, live
// titles). Invalid UTF-8 must be caught where the raw bytes are: the HTTP
// server refuses request bodies that are not valid UTF-8 and the importer
// refuses such strings, because decoding JSON turns them into U+FFFD
// before this code could see them. The check here catches what other
// callers pass.

// invisible are characters that render as nothing (or as blank space)
// without being Unicode white space: text made only of them and white
// space looks empty in every feed.
var invisible = map[rune]bool{
	0x00AD: true, // soft hyphen
	0x034F: true, // combining grapheme joiner
	0x115F: true, // Hangul choseong filler
	0x1160: true, // Hangul jungseong filler
	0x180E: true, // Mongolian vowel separator
	0x200B: true, // zero width space
	0x200C: true, // zero width non-joiner
	0x200D: true, // zero width joiner
	0x200E: true, // left-to-right mark
	0x200F: true, // right-to-left mark
	0x2060: true, // word joiner
	0x2800: true, // braille pattern blank
	0x3164: true, // Hangul filler
	0xFEFF: true, // zero width no-break space (BOM)
	0xFFA0: true, // halfwidth Hangul filler
}

// visible reports whether r shows as something: not white space, not a
// format character (Cf: zero-width and direction marks), not one of the
// blank fillers above, and not a variation selector.
func visible(r rune) bool {
	return !unicode.IsSpace(r) && !invisible[r] && !unicode.Is(unicode.Cf, r) &&
		!unicode.Is(unicode.Variation_Selector, r)
}

// CheckText applies the content rules to a text field named what (post
// texts, live titles; the importer uses it too): valid
// UTF-8; no control characters but newline and tab; at most max
// characters once trimmed of white space; at least one visible character.
// It returns the trimmed text, or a BAD_USER_INPUT error that says which
// rule failed (and where, for a control character).
func CheckText(what, text string, max int) (string, error) {
	if !utf8.ValidString(text) {
		return "", apierr.Errorf(apierr.BadInput, "%s must be valid UTF-8", what)
	}
	n := 0
	for _, r := range text {
		n++
		if unicode.IsControl(r) && r != '\n' && r != '\t' {
			return "", apierr.Errorf(apierr.BadInput, "%s must not contain control characters other than newline and tab (found %U at character %d)", what, r, n)
		}
	}
	text = strings.TrimSpace(text)
	if n := utf8.RuneCountInString(text); n > max {
		return "", apierr.Errorf(apierr.BadInput, "%s has %d characters; at most %d are allowed", what, n, max)
	}
	if strings.IndexFunc(text, visible) < 0 {
		return "", apierr.Errorf(apierr.BadInput, "%s must contain at least one visible character", what)
	}
	return text, nil
}

// CheckPostText applies the content rules to a post's text of at most
// max characters. A post needs text or media: a blank text is refused
// when the post has no media (hasMedia), and is "" (none) when it has.
func CheckPostText(text string, hasMedia bool, max int) (string, error) {
	switch {
	case strings.TrimSpace(text) == "" && !hasMedia:
		return "", apierr.Errorf(apierr.BadInput, "a post needs text or media: text is empty and there is no media")
	case strings.TrimSpace(text) == "":
		return "", nil
	}
	return CheckText("text", text, max)
}
