// Package keyword is what a viewer's keyword filters do to a text:
// normalization and matching, with no storage (feedcore keeps the
// filters' records, in safety_keyword.go, and compiles them into a [Set]).
//
// The rules of matching:
//
//   - A keyword and a text are compared after the same normalization
//     ([Normalize]): NFKC, then full case folding, so fullwidth letters,
//     composed and decomposed accents, compatibility ligatures ("ﬁ") and
//     case all meet.
//   - A whole-word keyword matches only where it is not part of a longer
//     word: the rune before it and the rune after it are not word runes
//     (letters, digits or marks). Only the keyword's edges that are word
//     runes themselves need a boundary, so "c++" or "#tag" match as
//     written.
//   - A keyword with any Han, Hiragana, Katakana, Hangul or Thai rune
//     matches anywhere, as a substring, whole word or not: those scripts
//     do not put spaces between words (a Korean particle is written onto
//     its noun), as Bluesky matches them.
//   - A keyword that normalizes to nothing matches nothing.
//   - A [Rule] applies until its end (ms; 0: never), compared with the
//     time each [Set.Matches] is given.
//   - A nil *Set holds no rules: it matches nothing, and its version is
//     empty.
//
// A Set is never changed once made, so pages share it; it costs a text
// one normalization (none when no rule applies), one pass over its words
// for the one-word rules, and a search for each other rule whose bytes
// the text holds.
package keyword
