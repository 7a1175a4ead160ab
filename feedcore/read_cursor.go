package feedcore

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"sync"

	"github.com/feedd/feedd/apierr"
)

// Cursor states: which source a page continues from.
const (
	StateSnapshot uint8 = 0 // paging a live snapshot
	StateTimeline uint8 = 1 // paging a timeline
)

// Cursor is a position in a feed, bound to the viewer it was minted for.
// Clients see it only sealed: base64url of a compact binary form plus an
// HMAC, so it can be neither forged nor replayed by another viewer.
type Cursor struct {
	Session string // live snapshot id; empty for timelines
	State   uint8
	LastID  ID
	TS      int64
	Viewer  ID
}

// Item is the timeline position the cursor points at.
func (c Cursor) Item() Item { return Item{TS: c.TS, ID: c.LastID} }

const (
	cursorVersion = 1
	macLen        = 12
)

// Sealer seals and opens cursors with one key. A page seals a cursor per
// edge, so keyed HMAC states and buffers are kept for reuse (Reset
// restores the keyed state without hashing the key again).
type Sealer struct {
	key     []byte
	scratch sync.Pool // of *sealScratch
}

// sealScratch is one Seal's or Open's working state.
type sealScratch struct {
	mac hash.Hash // HMAC-SHA256 keyed with the Sealer's key
	sum [sha256.Size]byte
	buf [64]byte // a cursor's binary form, unless its session is long
	out [88]byte // its base64 spelling
}

// NewSealer returns a Sealer for key (at least 16 bytes).
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) < 16 {
		return nil, errors.New("cursor key must be at least 16 bytes")
	}
	s := &Sealer{key: append([]byte(nil), key...)}
	s.scratch.New = func() any { return &sealScratch{mac: hmac.New(sha256.New, s.key)} }
	return s, nil
}

// Seal encodes c for a client.
func (s *Sealer) Seal(c Cursor) string {
	sc := s.scratch.Get().(*sealScratch)
	defer s.scratch.Put(sc)
	return string(s.seal(sc, c))
}

// seal is Seal's spelling of c, in sc's buffers when they are large
// enough: valid until sc is reused.
func (s *Sealer) seal(sc *sealScratch, c Cursor) []byte {
	b := append(sc.buf[:0], cursorVersion, c.State, byte(len(c.Session)))
	b = append(b, c.Session...)
	b = binary.AppendUvarint(b, c.LastID)
	b = binary.AppendVarint(b, c.TS)
	b = binary.AppendUvarint(b, c.Viewer)
	b = append(b, sc.macOf(b)...)
	return base64.RawURLEncoding.AppendEncode(sc.out[:0], b)
}

// macOf is the MAC of b: the first macLen bytes of its HMAC, in sc.sum.
func (sc *sealScratch) macOf(b []byte) []byte {
	sc.mac.Reset()
	sc.mac.Write(b)
	return sc.mac.Sum(sc.sum[:0])[:macLen]
}

// Open decodes a client's feed cursor and checks it was sealed here for
// viewer. Any failure is INVALID_CURSOR: the client should restart from
// the top.
func (s *Sealer) Open(raw string, viewer ID) (Cursor, error) {
	c, err := s.open(raw, viewer)
	if err == nil && c.State > StateTimeline {
		return Cursor{}, errBadCursor() // a relation list's (safety_list.go)
	}
	return c, err
}

func errBadCursor() error {
	return apierr.Errorf(apierr.InvalidCursor, "the cursor is not valid for this viewer; request the first page without a cursor")
}

// open is Open for a cursor of any state.
func (s *Sealer) open(raw string, viewer ID) (Cursor, error) {
	bad := errBadCursor()
	sc := s.scratch.Get().(*sealScratch)
	defer s.scratch.Put(sc)
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || len(b) < 3+macLen {
		return Cursor{}, bad
	}
	body, mac := b[:len(b)-macLen], b[len(b)-macLen:]
	if !hmac.Equal(mac, sc.macOf(body)) || body[0] != cursorVersion {
		return Cursor{}, bad
	}
	c := Cursor{State: body[1]}
	n := int(body[2])
	rest := body[3:]
	if len(rest) < n {
		return Cursor{}, bad
	}
	c.Session, rest = string(rest[:n]), rest[n:]
	var k int
	if c.LastID, k = binary.Uvarint(rest); k <= 0 {
		return Cursor{}, bad
	}
	rest = rest[k:]
	if c.TS, k = binary.Varint(rest); k <= 0 {
		return Cursor{}, bad
	}
	rest = rest[k:]
	if c.Viewer, k = binary.Uvarint(rest); k <= 0 || k != len(rest) {
		return Cursor{}, bad
	}
	if c.Viewer != viewer {
		return Cursor{}, bad
	}
	// Only the canonical spelling: base64 decoding ignores the spare low
	// bits of the last character, so one cursor would have several.
	if string(s.seal(sc, c)) != raw {
		return Cursor{}, bad
	}
	return c, nil
}
