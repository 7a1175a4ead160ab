package jsontext

import "testing"

func TestLoneSurrogate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{`{"q":"plain"}`, false},
		{`{"q":"\u00e9 \ud83d\ude00"}`, false}, // a pair: 😀
		{`{"q":"\ud83d"}`, true},               // high alone
		{`{"q":"\ude00"}`, true},               // low alone
		{`{"q":"\ud83d\u0041"}`, true},         // high, then not a low
		{`{"q":"\\ud83d"}`, false},             // an escaped backslash, then text
		{`{"q":"\ud83`, false},                 // malformed: the decoder's to refuse
		{`\uD83D\uDE00`, false},                // upper-case hex, a pair
		{`\uD83D`, true},
	} {
		if got := LoneSurrogate([]byte(c.in)); got != c.want {
			t.Errorf("LoneSurrogate(%s) = %v, want %v", c.in, got, c.want)
		}
	}
}
