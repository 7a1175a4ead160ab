package core

import (
	"encoding/binary"
	"fmt"

	"github.com/feedd/feedd/feedcore/store"
)

// A live feed snapshot is stored as one string: its entries in feed
// order, SnapshotRecordLen bytes each, the session id (big-endian; 0 once
// a clean-up took the entry out) then its filed score (big-endian two's
// complement). One SET stores it, where a sorted set of a hundred members
// cost Redis about 25 times the CPU to build; a page reads the records it
// needs with GETRANGE, since its cursor knows their place; and a clean-up
// overwrites an entry's id with zeros in place (SETRANGE), so no entry
// ever moves and every cursor's place stays true.

// SnapshotRecordLen is the size of one entry of a stored snapshot.
const SnapshotRecordLen = 16

// AppendSnapshot appends items, in feed order, as a stored snapshot's
// records.
func AppendSnapshot(b []byte, items []store.Item) []byte {
	for _, it := range items {
		b = binary.BigEndian.AppendUint64(b, it.ID)
		b = binary.BigEndian.AppendUint64(b, uint64(it.TS))
	}
	return b
}

// ParseSnapshot reads a stored snapshot's records (a whole snapshot or a
// range of whole records): entries cleaned up have id 0.
func ParseSnapshot(s string) ([]store.Item, error) {
	if len(s)%SnapshotRecordLen != 0 {
		return nil, fmt.Errorf("live snapshot records: %d bytes is not a whole number of records", len(s))
	}
	out := make([]store.Item, len(s)/SnapshotRecordLen)
	for i := range out {
		r := s[i*SnapshotRecordLen:]
		out[i] = store.Item{ID: binary.BigEndian.Uint64([]byte(r[:8])), TS: int64(binary.BigEndian.Uint64([]byte(r[8:16])))}
	}
	return out, nil
}
