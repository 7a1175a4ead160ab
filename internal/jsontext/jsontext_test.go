package jsontext

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

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

func TestMembers(t *testing.T) {
	r := Refusals{NotObject: errors.New("not object"), Malformed: errors.New("malformed"), Trailing: errors.New("trailing")}
	stop := errors.New("member refused")
	for _, c := range []struct {
		in    string
		names string
		err   error
	}{
		{`{"a": 1, "b": {"c": [2]}, "a": "x"}`, "a,b,a", nil},
		{` {} `, "", nil},
		{`[1]`, "", r.NotObject},
		{``, "", r.NotObject},
		{`{"a": 1,}`, "a", r.Malformed},
		{`{"a": 1`, "a", r.Malformed},
		{`{"a": 1} {}`, "a", r.Trailing},
		{`{"a": 1, "stop": 2, "b": 3}`, "a,stop", stop},
	} {
		var names []string
		err := r.Members([]byte(c.in), func(name string, dec *json.Decoder) error {
			names = append(names, name)
			var v json.RawMessage
			if err := dec.Decode(&v); err != nil {
				return err
			}
			if name == "stop" {
				return stop
			}
			return nil
		})
		if got := strings.Join(names, ","); err != c.err || got != c.names {
			t.Errorf("Members(%s): names %q, err %v; want %q, %v", c.in, got, err, c.names, c.err)
		}
	}
}
