package content

import (
	"strings"
	"testing"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
)

func TestCheckText(t *testing.T) {
	for _, tc := range []struct{ name, in, want, err string }{
		{"plain", "hello", "hello", ""},
		{"trimmed", "  hi\n", "hi", ""},
		{"newline and tab inside", "a\n\tb", "a\n\tb", ""},
		{"emoji with ZWJ", "👩\u200d💻", "👩\u200d💻", ""},
		{"zero width inside visible", "a\u200bb", "a\u200bb", ""},
		{"NUL", "a\x00b", "", "control characters"},
		{"escape", "a\x1b[31mb", "", "U+001B at character 2"},
		{"carriage return", "a\r\nb", "", "control characters"},
		{"DEL", "a\x7f", "", "control characters"},
		{"C1 control", "a\u0085b", "", "control characters"},
		{"invalid UTF-8", "caf\xe9", "", "valid UTF-8"},
		{"empty", "", "", "visible"},
		{"spaces", " \t\n ", "", "visible"},
		{"zero width only", "\u200b\u200c\u200d\u2060\ufeff", "", "visible"},
		{"zero width and spaces", " \u200b \u3000 \u00a0", "", "visible"},
		{"Hangul filler", "\u3164\u3164", "", "visible"},
		{"direction marks", "\u200e\u200f\u202e", "", "visible"},
		{"too long", strings.Repeat("é", 11), "", "11 characters; at most 10"},
		{"long before trimming", strings.Repeat(" ", 20) + "ok", "ok", ""},
	} {
		got, err := CheckText("text", tc.in, 10)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: CheckText(%q) = %q, %v; want %q", tc.name, tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || store.CodeOf(err) != apierr.BadInput):
			t.Errorf("%s: CheckText(%q) err = %v, want BAD_USER_INPUT mentioning %q", tc.name, tc.in, err, tc.err)
		}
	}
}
