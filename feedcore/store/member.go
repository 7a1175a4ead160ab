package store

import (
	"encoding/binary"
	"fmt"
	"strconv"

	"github.com/feedd/feedd/apierr"
)

// Sorted-set members are ids as 8 big-endian bytes: lexicographic order is
// numeric order, and an 8-byte member keeps an inbox entry within the memory
// budget in a listpack-encoded set.
func Member(id ID) string {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], id)
	return string(b[:])
}

func MemberID(m string) (ID, error) {
	if len(m) != 8 {
		return 0, fmt.Errorf("sorted-set member of %d bytes, want 8", len(m))
	}
	return binary.BigEndian.Uint64([]byte(m)), nil
}

func Members(ids []ID) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = Member(id)
	}
	return out
}

// ParseID reads a decimal database id.
func ParseID(s string) (ID, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, apierr.Errorf(apierr.BadInput, "%q is not a valid id: want a positive decimal number", s)
	}
	return id, nil
}

// FormatID writes a database id in decimal.
func FormatID(id ID) string { return strconv.FormatUint(id, 10) }
