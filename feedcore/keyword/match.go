package keyword

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Normalize is s as matching compares it: NFKC, then case folded.
// ASCII, most texts, is its own NFKC form and folds to lower case.
func Normalize(s string) string {
	if isASCII(s) {
		return strings.ToLower(s)
	}
	return cases.Fold().String(norm.NFKC.String(s))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// wordRune reports whether r is part of a word: a letter, a digit or a
// mark.
func wordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r)
}

// anyWord reports whether fn holds for one of the words of t: its
// maximal runs of word runes.
func anyWord(t string, fn func(string) bool) bool {
	start := -1
	for i := 0; i < len(t); {
		r, size := rune(t[i]), 1
		if r >= utf8.RuneSelf {
			r, size = utf8.DecodeRuneInString(t[i:])
		}
		switch {
		case wordRune(r):
			if start < 0 {
				start = i
			}
		case start >= 0:
			if fn(t[start:i]) {
				return true
			}
			start = -1
		}
		i += size
	}
	return start >= 0 && fn(t[start:])
}

// spacelessScripts write words without spaces between them.
var spacelessScripts = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai}

// spaceless reports whether s has a rune of a script written without
// spaces between words.
func spaceless(s string) bool {
	for _, r := range s {
		if r >= 0x0E00 && unicode.IsOneOf(spacelessScripts, r) { // Thai, the first of them, starts at U+0E00
			return true
		}
	}
	return false
}

// byteSet is a set of byte values.
type byteSet [4]uint64

func (b *byteSet) addString(s string) {
	for i := 0; i < len(s); i++ {
		b[s[i]>>6] |= 1 << (s[i] & 63)
	}
}

// covers reports whether b holds every byte o holds.
func (b *byteSet) covers(o *byteSet) bool {
	return o[0]&^b[0]|o[1]&^b[1]|o[2]&^b[2]|o[3]&^b[3] == 0
}

// Rule is one filter as a page applies it.
type Rule struct {
	word string // the normalized keyword
	// bytes are the bytes of word: a text without one of them cannot
	// hold it, which most texts show at the cost of four ANDs.
	bytes byteSet
	// start and end: a match needs a word boundary before it, after it
	// (whole word, and that edge of the keyword is a word rune).
	start, end bool
	// oneWord: the keyword is one whole word (whole word, and all of it
	// word runes). It matches exactly the words of a text equal to it,
	// which a Set looks up rather than searches.
	oneWord bool
	until   int64 // ms, when the filter stops applying; 0: never
}

// NewRule is the rule of a filter of keyword (as given), whole word
// or not, applying until (ms, 0: no end).
func NewRule(keyword string, wholeWord bool, until int64) Rule {
	r := Rule{word: Normalize(keyword), until: until}
	r.bytes.addString(r.word)
	if wholeWord && r.word != "" && !spaceless(r.word) {
		first, _ := utf8.DecodeRuneInString(r.word)
		last, _ := utf8.DecodeLastRuneInString(r.word)
		r.start, r.end = wordRune(first), wordRune(last)
		r.oneWord = !strings.ContainsFunc(r.word, func(c rune) bool { return !wordRune(c) })
	}
	return r
}

// activeAt reports whether the rule applies at now (ms).
func (r *Rule) activeAt(now int64) bool { return r.until == 0 || now < r.until }

// in reports whether the rule matches t, a normalized text. It tries
// every occurrence of the keyword until one sits at the boundaries the
// rule needs.
func (r *Rule) in(t string) bool {
	if r.word == "" {
		return false
	}
	for from := 0; from < len(t); {
		i := strings.Index(t[from:], r.word)
		if i < 0 {
			return false
		}
		i += from
		if r.bounded(t, i, i+len(r.word)) {
			return true
		}
		_, size := utf8.DecodeRuneInString(t[i:])
		from = i + size
	}
	return false
}

// bounded reports whether t[i:j] has the word boundaries the rule needs.
func (r *Rule) bounded(t string, i, j int) bool {
	if r.start && i > 0 {
		if before, _ := utf8.DecodeLastRuneInString(t[:i]); wordRune(before) {
			return false
		}
	}
	if r.end && j < len(t) {
		if after, _ := utf8.DecodeRuneInString(t[j:]); wordRune(after) {
			return false
		}
	}
	return true
}

// Set is a viewer's filters compiled for matching, as of version (the
// token feedcore's safety_keyword.go changes on every change of them). It
// is never changed once made, so pages share it.
type Set struct {
	version string
	rules   []Rule
	// words indexes the one-word rules by their word, searched (in
	// Matches) as the text's words are looked up in it: most filters are
	// one word, and then a text costs one pass and a lookup a word,
	// however many filters there are.
	words map[string]int
}

// NewSet compiles rules, as of version.
func NewSet(version string, rules []Rule) *Set {
	ks := &Set{version: version, rules: rules}
	for i, r := range rules {
		if r.oneWord {
			if ks.words == nil {
				ks.words = map[string]int{}
			}
			ks.words[r.word] = i
		}
	}
	return ks
}

// Version is ks's version, empty for none.
func (ks *Set) Version() string {
	if ks == nil {
		return ""
	}
	return ks.version
}

// Matches reports whether any of the rules that apply at now (ms) matches
// text. The text is normalized once, and only when a rule applies.
func (ks *Set) Matches(text string, now int64) bool {
	if ks == nil || !slices.ContainsFunc(ks.rules, func(r Rule) bool { return r.activeAt(now) }) {
		return false
	}
	t := Normalize(text)
	if len(ks.words) > 0 && anyWord(t, func(w string) bool {
		i, ok := ks.words[w]
		return ok && ks.rules[i].activeAt(now)
	}) {
		return true
	}
	var has byteSet
	has.addString(t)
	for i := range ks.rules {
		r := &ks.rules[i]
		if !r.oneWord && r.activeAt(now) && has.covers(&r.bytes) && r.in(t) {
			return true
		}
	}
	return false
}
