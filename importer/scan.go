package importer

import (
	"encoding/json"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/internal/jsontext"
)

// An import line is a flat JSON object whose values are strings, numbers,
// booleans or null, but for a post's media: an array of flat objects
// (nestedFields; lines.go reads it). scan.go reads a line without
// encoding/json's reflection:
// field names match exactly (encoding/json would also take "ID" for "id"),
// a repeated field is an error, and a follow line costs no allocation.
// Strings with escapes or non-ASCII bytes that are not valid UTF-8 go
// through encoding/json, so their meaning is exactly the standard one.

// field names one key an import line may have, of any type.
type field uint8

const (
	fType field = iota
	fID
	fHandle
	fDisplayName
	fAvatarURL
	fFollower
	fFollowee
	fAuthor
	fText
	fCreatedAt
	fAnchor
	fTitle
	fScheduledStartAt
	fStartedAt
	fEndedAt
	fPost
	fLikes
	fComments
	fReposts
	fFavorites
	fUser
	fTarget
	fUntil
	fDeletedAt
	fMedia
	fContentWarning
	fCoverURL
	fKeyword
	fWholeWord
	fExpiresAt
	fReason
	fOperator
	fSubject
	fComment
	fResolvedAt
	fAction
	fReplyTo
	fReplyToAuthor
	numFields
)

// A line's fields are bits of a uint64 (object.set, mask): this fails to
// compile once there are more fields than bits.
const _ uint64 = 1 << (numFields - 1)

var fieldNames = [numFields]string{
	fType:             "type",
	fID:               "id",
	fHandle:           "handle",
	fDisplayName:      "displayName",
	fAvatarURL:        "avatarUrl",
	fFollower:         "follower",
	fFollowee:         "followee",
	fAuthor:           "author",
	fText:             "text",
	fCreatedAt:        "createdAt",
	fAnchor:           "anchor",
	fTitle:            "title",
	fScheduledStartAt: "scheduledStartAt",
	fStartedAt:        "startedAt",
	fEndedAt:          "endedAt",
	fPost:             "post",
	fLikes:            "likes",
	fComments:         "comments",
	fReposts:          "reposts",
	fFavorites:        "favorites",
	fUser:             "user",
	fTarget:           "target",
	fUntil:            "until",
	fDeletedAt:        "deletedAt",
	fMedia:            "media",
	fContentWarning:   "contentWarning",
	fCoverURL:         "coverUrl",
	fKeyword:          "keyword",
	fWholeWord:        "wholeWord",
	fExpiresAt:        "expiresAt",
	fReason:           "reason",
	fOperator:         "operator",
	fSubject:          "subject",
	fComment:          "comment",
	fResolvedAt:       "resolvedAt",
	fAction:           "action",
	fReplyTo:          "replyTo",
	fReplyToAuthor:    "replyToAuthor",
}

// nestedFields may hold an array (kArray): a post's media.
var nestedFields = mask(fMedia)

func (f field) String() string { return fieldNames[f] }

var fieldIndex = func() map[string]field {
	m := make(map[string]field, numFields)
	for f, name := range fieldNames {
		m[name] = field(f)
	}
	return m
}()

func mask(fs ...field) uint64 {
	var m uint64
	for _, f := range fs {
		m |= 1 << f
	}
	return m
}

type valueKind uint8

const (
	kNull valueKind = iota
	kString
	kNumber
	kBool
	kArray
)

func (k valueKind) String() string {
	return [...]string{"null", "a string", "a number", "a boolean", "an array"}[k]
}

// value is one field's raw value, pointing into the line.
type value struct {
	kind valueKind
	// raw is a string's bytes between its quotes, still escaped; a
	// number's or boolean's literal text; an array's text, brackets
	// included.
	raw []byte
	// at is the value's offset in the line, for error messages.
	at int
	// esc: the string has backslash escapes; high: it has non-ASCII bytes.
	esc, high bool
}

// object is one parsed line. It is reused from line to line.
type object struct {
	vals [numFields]value
	// set has a bit for each field present and not null.
	set uint64
	// unknown is the first field name no line type has.
	unknown string
}

func (o *object) has(f field) bool { return o.set&(1<<f) != 0 }

// syntaxError is malformed JSON, with the 1-based column of the problem.
type syntaxError struct {
	col int
	msg string
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at column %d: %s", e.col, e.msg)
}

func synErr(i int, format string, args ...any) error {
	return &syntaxError{col: i + 1, msg: fmt.Sprintf(format, args...)}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// blank reports a line of only JSON whitespace.
func blank(b []byte) bool { return skipSpace(b, 0) == len(b) }

// parse reads one line into o. Field names no line type has are recorded
// in o.unknown rather than failing at once, so the error can name the type.
func (o *object) parse(b []byte) error {
	o.set, o.unknown = 0, ""
	var seen uint64
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return synErr(i, "a line must be one JSON object")
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		i++
	} else {
		for {
			if i == len(b) || b[i] != '"' {
				return synErr(i, "want a field name in double quotes")
			}
			end, esc, high, err := scanString(b, i)
			if err != nil {
				return err
			}
			key := b[i+1 : end-1]
			if esc || high {
				s, err := unquote(b[i:end], i)
				if err != nil {
					return err
				}
				key = []byte(s)
			}
			f, known := fieldIndex[string(key)]
			if !known && o.unknown == "" {
				o.unknown = string(key)
			}
			if known {
				if seen&(1<<f) != 0 {
					return fmt.Errorf("field %q appears twice", f)
				}
				seen |= 1 << f
			}
			i = skipSpace(b, end)
			if i == len(b) || b[i] != ':' {
				return synErr(i, "want ':' after the field name")
			}
			i = skipSpace(b, i+1)
			var v value
			var next int
			if known && nestedFields&(1<<f) != 0 && i < len(b) && b[i] == '[' {
				v, next, err = scanArray(b, i)
			} else {
				v, next, err = scanValue(b, i)
			}
			if err != nil {
				if _, ok := err.(*nestedError); ok {
					if !known {
						return fmt.Errorf("unknown field %q", key)
					}
					if nestedFields&(1<<f) != 0 {
						return fmt.Errorf("%s: want an array of objects, not %s", f, err)
					}
					return fmt.Errorf("%s: want a string or number, not %s", f, err)
				}
				return err
			}
			if known && v.kind != kNull {
				o.vals[f] = v
				o.set |= 1 << f
			}
			i = skipSpace(b, next)
			if i < len(b) && b[i] == ',' {
				i = skipSpace(b, i+1)
				continue
			}
			if i < len(b) && b[i] == '}' {
				i++
				break
			}
			return synErr(i, "want ',' or '}' after a value")
		}
	}
	if i = skipSpace(b, i); i != len(b) {
		return synErr(i, "unexpected text after the object")
	}
	return nil
}

// nestedError is an object or array where a scalar belongs.
type nestedError struct{ what string }

func (e *nestedError) Error() string { return e.what }

// scanValue reads the scalar at b[i] and returns it with the index after it.
func scanValue(b []byte, i int) (value, int, error) {
	if i == len(b) {
		return value{}, i, synErr(i, "want a value")
	}
	switch c := b[i]; {
	case c == '"':
		end, esc, high, err := scanString(b, i)
		if err != nil {
			return value{}, i, err
		}
		return value{kind: kString, raw: b[i+1 : end-1], at: i, esc: esc, high: high}, end, nil
	case c == '-' || (c >= '0' && c <= '9'):
		end, err := scanNumber(b, i)
		if err != nil {
			return value{}, i, err
		}
		return value{kind: kNumber, raw: b[i:end]}, end, nil
	case c == 't':
		return literal(b, i, "true", kBool)
	case c == 'f':
		return literal(b, i, "false", kBool)
	case c == 'n':
		return literal(b, i, "null", kNull)
	case c == '{':
		return value{}, i, &nestedError{"an object"}
	case c == '[':
		return value{}, i, &nestedError{"an array"}
	default:
		return value{}, i, synErr(i, "want a value, found %q", rune(c))
	}
}

// scanArray reads the array at b[i], whatever it holds (its reader
// checks that), and returns it with the index after it. Strings are
// scanned as scanString does, so a bracket inside one is text, and the
// array's high and esc say whether any string had non-ASCII bytes or
// escapes.
func scanArray(b []byte, i int) (value, int, error) {
	v := value{kind: kArray, at: i}
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			end, esc, high, err := scanString(b, j)
			if err != nil {
				return value{}, i, err
			}
			v.esc, v.high = v.esc || esc, v.high || high
			j = end - 1
		case '[', '{':
			depth++
		case ']', '}':
			if depth--; depth == 0 {
				v.raw = b[i : j+1]
				return v, j + 1, nil
			}
		}
	}
	return value{}, i, synErr(len(b), "unterminated array")
}

func literal(b []byte, i int, lit string, k valueKind) (value, int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return value{}, i, synErr(i, "want a value")
	}
	return value{kind: k, raw: b[i : i+len(lit)]}, i + len(lit), nil
}

// scanString finds the end of the string whose opening quote is b[i] and
// returns the index after its closing quote. Escapes are checked here and
// decoded later, by unquote, only for strings that have them.
func scanString(b []byte, i int) (end int, esc, high bool, err error) {
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return j + 1, esc, high, nil
		case c == '\\':
			esc = true
			if j++; j < len(b) && !validEscape(b, j) {
				return 0, false, false, synErr(j-1, "bad escape in a string")
			}
		case c < 0x20:
			return 0, false, false, synErr(j, "control character %U in a string; escape it", rune(c))
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	return 0, false, false, synErr(len(b), "unterminated string")
}

// validEscape checks the escape whose letter is b[j].
func validEscape(b []byte, j int) bool {
	switch b[j] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if len(b)-j < 5 {
			return false
		}
		for _, h := range b[j+1 : j+5] {
			if !('0' <= h && h <= '9' || 'a' <= h && h <= 'f' || 'A' <= h && h <= 'F') {
				return false
			}
		}
		return true
	}
	return false
}

// scanNumber checks the JSON number at b[i] and returns the index after it.
func scanNumber(b []byte, i int) (int, error) {
	j := i
	if b[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(b) && b[j] >= '0' && b[j] <= '9' {
			j++
		}
		return j - k
	}
	switch {
	case j < len(b) && b[j] == '0':
		j++
	case digits() == 0:
		return 0, synErr(j, "malformed number")
	}
	if j < len(b) && b[j] == '.' {
		j++
		if digits() == 0 {
			return 0, synErr(j, "malformed number")
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if digits() == 0 {
			return 0, synErr(j, "malformed number")
		}
	}
	return j, nil
}

// unquote decodes a quoted JSON string (quotes included) the standard way:
// escapes resolved, invalid UTF-8 replaced by U+FFFD.
func unquote(quoted []byte, at int) (string, error) {
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return "", synErr(at+int(se.Offset)-1, "bad escape in a string")
		}
		return "", synErr(at, "bad string: %v", err)
	}
	return s, nil
}

// str returns field f as a string; ok is false when it is absent.
func (o *object) str(f field) (s string, ok bool, err error) {
	if !o.has(f) {
		return "", false, nil
	}
	v := &o.vals[f]
	if v.kind != kString {
		return "", false, fmt.Errorf("%s: want a string, not %s", f, v.kind)
	}
	// Checked on the raw bytes: decoding would turn invalid UTF-8 and
	// lone surrogate escapes into U+FFFD, hiding them from the content
	// rules.
	if v.high && !utf8.Valid(v.raw) {
		return "", false, fmt.Errorf("%s: not valid UTF-8", f)
	}
	if !v.esc {
		return string(v.raw), true, nil
	}
	if jsontext.LoneSurrogate(v.raw) {
		return "", false, fmt.Errorf("%s: a \\u escape of a lone UTF-16 surrogate", f)
	}
	quoted := make([]byte, 0, len(v.raw)+2)
	quoted = append(append(append(quoted, '"'), v.raw...), '"')
	s, err = unquote(quoted, v.at)
	if err != nil {
		return "", false, fmt.Errorf("%s: %w", f, err)
	}
	return s, true, nil
}

// flag returns optional field f as a boolean, def when absent.
func (o *object) flag(f field, def bool) (bool, error) {
	if !o.has(f) {
		return def, nil
	}
	v := &o.vals[f]
	if v.kind != kBool {
		return false, fmt.Errorf("%s: want true or false, not %s", f, v.kind)
	}
	return string(v.raw) == "true", nil
}

// id returns field f, which is required, as a database id: a positive
// decimal in a string or a JSON integer.
func (o *object) id(f field) (uint64, error) {
	if !o.has(f) {
		return 0, fmt.Errorf("missing field %q", f)
	}
	v := &o.vals[f]
	digits := v.raw
	switch v.kind {
	case kString:
		if v.esc || v.high {
			s, _, err := o.str(f)
			if err != nil {
				return 0, err
			}
			digits = []byte(s)
		}
	case kNumber:
	default:
		return 0, fmt.Errorf("%s: want an id, a positive decimal number, not %s", f, v.kind)
	}
	id, ok := parseDecimal(digits)
	if !ok || id == 0 {
		if v.kind == kString {
			return 0, fmt.Errorf("%s %q is not a valid id: want a positive decimal number", f, digits)
		}
		return 0, fmt.Errorf("%s %s is not a valid id: want a positive decimal number", f, digits)
	}
	return id, nil
}

// parseDecimal reads unsigned decimal digits, as strconv.ParseUint base 10.
func parseDecimal(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (1<<64-1-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// count returns optional field f as a non-negative integer, 0 when absent.
func (o *object) count(f field) (int64, error) {
	if !o.has(f) {
		return 0, nil
	}
	v := &o.vals[f]
	if v.kind != kNumber {
		return 0, fmt.Errorf("%s: want a non-negative integer, not %s", f, v.kind)
	}
	digits, neg := v.raw, false
	if digits[0] == '-' {
		digits, neg = digits[1:], true
	}
	n, ok := parseDecimal(digits)
	switch {
	case !ok && !neg:
		return 0, fmt.Errorf("%s %s is not a non-negative integer", f, v.raw)
	case neg && (!ok || n != 0):
		return 0, fmt.Errorf("%s %s is negative; counts must be 0 or more", f, v.raw)
	case n > feedcore.MaxCount:
		return 0, fmt.Errorf("%s %s is too large; counts must be at most %d (GraphQL Int)", f, v.raw, feedcore.MaxCount)
	}
	return int64(n), nil
}
