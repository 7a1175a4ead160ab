package nodeid

import (
	"errors"
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
