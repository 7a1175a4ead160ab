package hostmatch

import "testing"

func TestMatch(t *testing.T) {
	l := New([]string{"cdn.example.com", " *.img.example.net ", "127.0.0.1", "::1", ""})
	for host, want := range map[string]bool{
		"cdn.example.com":        true,
		"CDN.Example.com.":       true,
		"cdn.example.com:8443":   true,
		"a.img.example.net":      true,
		"a.b.img.example.net":    true,
		"img.example.net":        false, // the suffix form is subdomains only
		"xcdn.example.com":       false,
		"cdn.example.com.evil":   false,
		"evilimg.example.net":    false,
		"127.0.0.1:8080":         true,
		"[::1]:8080":             true,
		"::1":                    true,
		"":                       false,
		"example.com":            false,
		"cdn.example.comm":       false,
		"a.img.example.net.evil": false,
	} {
		if got := l.Match(host); got != want {
			t.Errorf("Match(%q) = %v, want %v", host, got, want)
		}
	}
	if !New(nil).Empty() || !New([]string{" ", ""}).Empty() || l.Empty() {
		t.Error("Empty is wrong")
	}
	if (List{}).Match("anything") {
		t.Error("the zero List matched")
	}
}
