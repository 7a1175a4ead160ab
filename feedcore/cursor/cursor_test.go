package cursor

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
)

var testCursorKey = []byte("cursor-test-key-0123456789")

// TestCursorCanonicalOnly: a sealed cursor opens only as Seal spelled it.
func TestCursorCanonicalOnly(t *testing.T) {
	s, err := NewSealer(testCursorKey)
	if err != nil {
		t.Fatal(err)
	}
	c := Cursor{Session: "snap", State: StateTimeline, LastID: 101, TS: 1_700_000_000_000, Viewer: 7}
	raw := s.Seal(c)
	if got, err := s.Open(raw, 7); err != nil || got != c {
		t.Fatalf("Open(Seal(c)) = %+v, %v", got, err)
	}
	b, _ := base64.RawURLEncoding.DecodeString(raw)
	// The last character of an unpadded base64 string whose length is not a
	// multiple of 4 has spare bits: every other value of them decodes the same.
	spare := map[int]int{2: 4, 3: 2}[len(raw)%4]
	alphabet := "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	last := strings.IndexByte(alphabet, raw[len(raw)-1])
	var variants []string
	for v := 1; v < 1<<spare; v++ {
		variants = append(variants, raw[:len(raw)-1]+string(alphabet[last^v]))
	}
	variants = append(variants, raw+"=", raw+"==", " "+raw, raw+"\n", base64.URLEncoding.EncodeToString(b))
	for _, v := range variants {
		if v == raw {
			continue
		}
		if _, err := s.Open(v, 7); store.CodeOf(err) != apierr.InvalidCursor {
			t.Errorf("Open(%q) (a respelling of %q) err = %v, want INVALID_CURSOR", v, raw, err)
		}
	}
	if spare > 0 && len(variants) < 2 {
		t.Fatal("no spare-bit variants tried")
	}
}

// TestCursorStates: a feed's cursor opens in each state Seal gives it,
// the pull hint included; one of a state past StatePull does not.
func TestCursorStates(t *testing.T) {
	s, err := NewSealer(testCursorKey)
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range []uint8{StateSnapshot, StateTimeline, StatePull} {
		c := Cursor{State: state, LastID: 5, TS: 6, Viewer: 7}
		if got, err := s.Open(s.Seal(c), 7); err != nil || got != c {
			t.Errorf("state %d: Open(Seal(c)) = %+v, %v", state, got, err)
		}
	}
	if _, err := s.Open(s.Seal(Cursor{State: StatePull + 1, LastID: 5, TS: 6, Viewer: 7}), 7); store.CodeOf(err) != apierr.InvalidCursor {
		t.Errorf("a cursor of state %d: err = %v, want INVALID_CURSOR", StatePull+1, err)
	}
}

// FuzzOpenCursor: Open never panics, and accepts only what Seal spells.
// Seeds are in testdata/fuzz/FuzzOpenCursor.
func FuzzOpenCursor(f *testing.F) {
	s, err := NewSealer(testCursorKey)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(s.Seal(Cursor{State: StateTimeline, LastID: 1, TS: 2, Viewer: 7}))
	f.Add(s.Seal(Cursor{Session: "abc", State: StateSnapshot, LastID: 1 << 63, TS: -5, Viewer: 7}))
	f.Add(s.Seal(Cursor{State: StateTimeline, LastID: 3, TS: 4, Viewer: 7, List: ListFollowers, Owner: 9}))
	f.Fuzz(func(t *testing.T, raw string) {
		// Any cursor, a list's too, opens only as Seal spelled it.
		if c, err := s.OpenAny(raw, 7); err == nil && s.Seal(c) != raw {
			t.Fatalf("open(%q) = %+v, which seals as %q", raw, c, s.Seal(c))
		}
		c, err := s.Open(raw, 7)
		if err != nil {
			if store.CodeOf(err) != apierr.InvalidCursor {
				t.Fatalf("Open(%q) err = %v, want INVALID_CURSOR", raw, err)
			}
			return
		}
		if s.Seal(c) != raw || c.Viewer != 7 {
			t.Fatalf("Open(%q) = %+v, which seals as %q", raw, c, s.Seal(c))
		}
	})
}
