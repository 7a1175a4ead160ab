package keyword_test

import (
	"testing"
	"unicode/utf8"

	"github.com/feedd/feedd/feedcore/keyword"
	"github.com/feedd/feedd/feedcore/keyword/keywordtest"
)

// matchOne runs the matcher with one filter of keyword.
func matchOne(kw string, wholeWord bool, text string) bool {
	return keyword.NewSet("", []keyword.Rule{keyword.NewRule(kw, wholeWord, 0)}).Matches(text, 0)
}

// keywordCases are one case per rule: normalization, whole word against
// substring, the scripts written without spaces.
var keywordCases = []struct {
	keyword   string
	wholeWord bool
	text      string
	want      bool
}{
	{"football", true, "ＦＯＯＴＢＡＬＬ tonight", true}, // fullwidth letters
	{"ｆｏｏｔｂａｌｌ", true, "Football tonight", true}, // a fullwidth keyword
	{"café", true, "un cafe\u0301 noir", true},   // composed keyword, decomposed text
	{"cafe\u0301", true, "un café noir", true},   // decomposed keyword, composed text
	{"cafe", true, "un café noir", false},        // an accent is not nothing
	{"final", true, "the ﬁnal score", true},      // the ligature
	{"ﬁnal", true, "FINAL SCORE", true},          // a ligature in the keyword, capitals in the text
	{"straße", true, "STRASSE closed", true},     // full case folding
	{"cat", true, "my cat sleeps", true},         // whole word
	{"cat", true, "Cat.", true},                  // punctuation is a boundary
	{"cat", true, "concatenate", false},          // inside a word
	{"cat", true, "cats", false},                 // a longer word
	{"cat", false, "concatenate", true},          // substring
	{"cat", true, "a concat, then a cat", true},  // the second occurrence stands alone
	{"new york", true, "I love New York!", true}, // a phrase
	{"c++", true, "c++11 is old", true},          // an edge that is not a word rune needs no boundary
	{"#tag", true, "see#tag", true},              // so is this
	{"#tag", true, "#tagged", false},             // but a word edge still does
	{"東京", true, "我在東京旅行", true},                 // Han: a substring, whole word or not
	{"ネコ", true, "うちのネコがかわいい", true},             // Katakana
	{"ねこ", true, "うちのねこがかわいい", true},             // Hiragana
	{"ｶﾀｶﾅ", true, "カタカナです", true},               // halfwidth Katakana normalizes
	{"사과", true, "사과를 먹었다", true},                // Hangul: a particle attached to the noun
	{"แมว", true, "ฉันรักแมวมาก", true},          // Thai
	{"tokyo", true, "東京tokyo旅行", false},          // a Latin keyword still needs boundaries
	{"e\u0301", true, "e\u0301\u0332x", false},   // a mark after it is part of the word
	{"ab", true, "", false},                      // empty text
	{"x", true, "x", true},                       // the whole text
	{"ǰ", true, "J\u030C", true},                 // folding yields a decomposed form both ways
	{"İstanbul", true, "i\u0307stanbul", true},   // capital I with dot above folds to i and a dot
	{"a", true, "bab a", true},                   // a one-letter keyword
	{"aa", true, "aaa aa", true},                 // overlapping occurrences
	{"aa", true, "aaa", false},                   // none alone
	{"ℌ", true, "h", true},                       // a compatibility letter
	{"x²", true, "x2", true},                     // a superscript digit
	{"tab", true, "one\ttab\nnewline", true},     // white space is a boundary
	{"emoji", true, "emoji😀", true},              // a symbol is a boundary
	{"😀", true, "so 😀😀 happy", true},             // a symbol keyword matches anywhere
}

func TestKeywordMatching(t *testing.T) {
	for _, c := range keywordCases {
		if got := matchOne(c.keyword, c.wholeWord, c.text); got != c.want {
			t.Errorf("keyword %q (whole word %v) in %q: %v, want %v", c.keyword, c.wholeWord, c.text, got, c.want)
		}
		if got := keywordtest.Match(c.keyword, c.wholeWord, c.text); got != c.want {
			t.Errorf("oracle: keyword %q (whole word %v) in %q: %v, want %v", c.keyword, c.wholeWord, c.text, got, c.want)
		}
	}
}

// FuzzKeywordMatch: the matcher never panics and agrees with the oracle
// on every valid text and keyword, alone and in a set with another
// keyword (whole word when the first is not, so both of a set's ways of
// matching meet).
//
//	go test ./feedcore/keyword -run '^$' -fuzz FuzzKeywordMatch -fuzztime 60s
func FuzzKeywordMatch(f *testing.F) {
	for i, c := range keywordCases {
		f.Add(c.keyword, c.wholeWord, c.text, keywordCases[(i+1)%len(keywordCases)].keyword)
	}
	f.Add("a", false, "\xff", "b")
	f.Fuzz(func(t *testing.T, kw string, wholeWord bool, text, other string) {
		got := matchOne(kw, wholeWord, text)
		set := keyword.NewSet("", []keyword.Rule{keyword.NewRule(kw, wholeWord, 0), keyword.NewRule(other, !wholeWord, 0)})
		gotSet := set.Matches(text, 0)
		if !utf8.ValidString(kw) || !utf8.ValidString(other) || !utf8.ValidString(text) {
			return // refused before they reach a filter or a feed; only no panic
		}
		if want := keywordtest.Match(kw, wholeWord, text); got != want {
			t.Fatalf("keyword %q (whole word %v) in %q: %v, oracle says %v", kw, wholeWord, text, got, want)
		}
		if want := keywordtest.Match(kw, wholeWord, text) || keywordtest.Match(other, !wholeWord, text); gotSet != want {
			t.Fatalf("keywords %q (whole word %v), %q in %q: %v, oracle says %v", kw, wholeWord, other, text, gotSet, want)
		}
	})
}
