// Package keywordtest is an oracle for tests of keyword filters: the
// matching rules of package keyword read plainly, apart from its matcher.
package keywordtest

import (
	"slices"
	"unicode"

	"github.com/feedd/feedd/feedcore/keyword"
)

// Match is the matching rules read plainly, apart from the matcher:
// the normalized keyword is tried at every rune of the normalized text;
// a whole-word keyword (unless it has a rune of a script written without
// spaces) needs, at each of its edges that is a letter, digit or mark,
// a neighbour that is none of those, or the end of the text.
func Match(kw string, wholeWord bool, text string) bool {
	k, t := []rune(keyword.Normalize(kw)), []rune(keyword.Normalize(text))
	if len(k) == 0 {
		return false
	}
	word := func(r rune) bool { return unicode.In(r, unicode.L, unicode.Nd, unicode.M) }
	anywhere := !wholeWord
	for _, r := range k {
		anywhere = anywhere || unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul, unicode.Thai)
	}
	for i := 0; i+len(k) <= len(t); i++ {
		if !slices.Equal(t[i:i+len(k)], k) {
			continue
		}
		j := i + len(k)
		if anywhere || (!word(k[0]) || i == 0 || !word(t[i-1])) && (!word(k[len(k)-1]) || j == len(t) || !word(t[j])) {
			return true
		}
	}
	return false
}
