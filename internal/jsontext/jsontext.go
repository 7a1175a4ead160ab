// Package jsontext reads JSON text more strictly than encoding/json: it
// finds what encoding/json would decode silently into U+FFFD, \u escapes
// of lone UTF-16 surrogates (invalid UTF-8 is the other such case;
// utf8.Valid finds it), and walks one object's members with nothing after
// it, for callers that refuse what encoding/json lets through (a member
// named twice, a name in another case).
package jsontext

import "strconv"

// LoneSurrogate reports whether b, JSON text or the body of a JSON string,
// has a \u escape of a UTF-16 surrogate that is not half of a high-low
// pair. Malformed escapes are left to the decoder, which refuses them.
func LoneSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		i++ // the escaped character: "\\u0041" is a backslash, then text
		if i >= len(b) || b[i] != 'u' {
			continue
		}
		r, ok := hex4(b, i+1)
		if !ok {
			continue
		}
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if i+2 < len(b) && b[i+1] == '\\' && b[i+2] == 'u' {
				if lo, ok := hex4(b, i+3); ok && lo >= 0xDC00 && lo <= 0xDFFF {
					i += 6
					continue
				}
			}
			return true
		}
	}
	return false
}

// hex4 reads four hex digits at b[i:].
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	v, err := strconv.ParseUint(string(b[i:i+4]), 16, 16)
	return rune(v), err == nil
}
