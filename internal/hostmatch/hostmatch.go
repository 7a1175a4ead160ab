// Package hostmatch matches host names against an allow-list of exact
// names and "*.example.com" suffix patterns: the one rule --allowed-hosts
// (which Host headers the server answers) and --media-hosts (which hosts
// media URLs may point at) share.
package hostmatch

import (
	"net"
	"strings"
)

// List is a compiled allow-list. The zero List matches nothing.
type List struct {
	exact    map[string]bool
	suffixes []string // ".example.com" for each "*.example.com"
}

// New compiles entries: a host name or IP address matches itself (case
// and a trailing dot aside, any port), "*.example.com" any subdomain of
// example.com at any depth, but not example.com itself. Blank entries are
// skipped.
func New(entries []string) List {
	l := List{exact: map[string]bool{}}
	for _, e := range entries {
		e = Normalize(e)
		if s, ok := strings.CutPrefix(e, "*."); ok {
			l.suffixes = append(l.suffixes, "."+s)
		} else if e != "" {
			l.exact[e] = true
		}
	}
	return l
}

// Empty reports whether l has no entries.
func (l List) Empty() bool { return len(l.exact) == 0 && len(l.suffixes) == 0 }

// Match reports whether host (a Host header or a URL's host, with or
// without a port) is on the list.
func (l List) Match(host string) bool {
	h := Normalize(host)
	if h == "" {
		return false
	}
	if l.exact[h] {
		return true
	}
	for _, s := range l.suffixes {
		if strings.HasSuffix(h, s) {
			return true
		}
	}
	return false
}

// Normalize lowercases a host, drops its port, the brackets of an IPv6
// literal and a trailing dot.
func Normalize(h string) string {
	h = strings.ToLower(strings.TrimSpace(h))
	if host, _, err := net.SplitHostPort(h); err == nil {
		h = host
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	return strings.TrimSuffix(h, ".")
}
