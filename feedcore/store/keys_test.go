package store

import (
	"strconv"
	"strings"
	"testing"
)

// TestTaggedKeys: tagged builds the same names as prefix + kind + tag,
// whatever the prefix's length.
func TestTaggedKeys(t *testing.T) {
	for _, p := range []string{"", "feedd:", strings.Repeat("x", 200)} {
		k := Keys{Prefix: p}
		for _, id := range []ID{0, 7, 1<<64 - 1} {
			want := p + "p:{" + strconv.FormatUint(id, 10) + "}"
			if got := k.Post(id); got != want {
				t.Errorf("post(%d) with prefix %q = %q, want %q", id, p, got, want)
			}
			if got, want := k.Likers(id), p+"pl:"+k.Tag(id); got != want {
				t.Errorf("likers(%d) = %q, want %q", id, got, want)
			}
		}
	}
}
