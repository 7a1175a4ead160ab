package gqltype

import (
	"errors"
	"strconv"
	"testing"
)

func TestRoundTrip(t *testing.T) {
	for _, c := range []struct {
		t  Type
		id uint64
	}{{Post, 1}, {User, 42}, {Post, 1<<64 - 1}} {
		raw := Encode(c.t, c.id)
		gt, gid, err := Decode(raw)
		if err != nil || gt != c.t || gid != c.id {
			t.Fatalf("Decode(Encode(%s, %d)) = %s, %d, %v", c.t, c.id, gt, gid, err)
		}
	}
	if got := Encode(Post, 123); got != "UG9zdDoxMjM" {
		t.Fatalf("Encode(Post, 123) = %q, want unpadded base64url of Post:123", got)
	}
}

func TestMalformed(t *testing.T) {
	for _, raw := range []string{"", "!!", "UG9zdDoxMjM=", Encode("Live", 1), "UG9zdDo", "UG9zdDowMQ" /* Post:01 */, "UG9zdDow" /* Post:0 */} {
		if _, _, err := Decode(raw); !errors.Is(err, ErrMalformed) {
			t.Errorf("Decode(%q) err = %v, want ErrMalformed", raw, err)
		}
	}
}

func TestDecodeAs(t *testing.T) {
	if id, err := DecodeAs("77", User); err != nil || id != 77 {
		t.Fatalf("DecodeAs decimal = %d, %v", id, err)
	}
	if id, err := DecodeAs(Encode(User, 9), User); err != nil || id != 9 {
		t.Fatalf("DecodeAs global = %d, %v", id, err)
	}
	if _, err := DecodeAs(Encode(Post, 9), User); !errors.Is(err, ErrMalformed) {
		t.Fatalf("DecodeAs wrong type err = %v", err)
	}
	if _, err := DecodeAs("0", User); !errors.Is(err, ErrMalformed) {
		t.Fatalf("DecodeAs zero err = %v", err)
	}
}

// TestCanonicalOnly: every spelling but Encode's is refused. The last
// base64 character carries bits that decoding ignores: "VXNlcjoxMDG"
// decodes to the bytes of "VXNlcjoxMDE" (User:101).
func TestCanonicalOnly(t *testing.T) {
	if got := Encode(User, 101); got != "VXNlcjoxMDE" {
		t.Fatalf("Encode(User, 101) = %q", got)
	}
	for _, raw := range []string{
		"VXNlcjoxMDG", "VXNlcjoxMDH", "VXNlcjoxMDF", // User:101 with other spare bits
		"VXNlcjoxMDE=", "VXNlcjoxMDE\n", " VXNlcjoxMDE", // padding, whitespace
		"VXNlcjoxMDE.", "VXNlcjoxMDE+", // another alphabet
	} {
		if _, _, err := Decode(raw); !errors.Is(err, ErrMalformed) {
			t.Errorf("Decode(%q) err = %v, want ErrMalformed", raw, err)
		}
		if _, err := DecodeAs(raw, User); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeAs(%q) err = %v, want ErrMalformed", raw, err)
		}
	}
	for _, raw := range []string{"0101", "+101", "101 ", "1_01"} {
		if _, err := DecodeAs(raw, User); !errors.Is(err, ErrMalformed) {
			t.Errorf("DecodeAs(%q) err = %v, want ErrMalformed", raw, err)
		}
	}
}

// FuzzDecode: whatever Decode accepts is exactly what Encode makes of the
// result, so one object has one id. Seeds are in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add(Encode(User, 101))
	f.Add("VXNlcjoxMDG")
	f.Fuzz(func(t *testing.T, raw string) {
		typ, id, err := Decode(raw)
		if err == nil && Encode(typ, id) != raw {
			t.Fatalf("Decode(%q) = %s %d, which encodes as %q", raw, typ, id, Encode(typ, id))
		}
		if id, err := DecodeAs(raw, User); err == nil && Encode(User, id) != raw && strconv.FormatUint(id, 10) != raw {
			t.Fatalf("DecodeAs(%q) = %d, not its canonical spelling", raw, id)
		}
	})
}
