package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash"
	"sync"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
)

// Cursor states: which source a page continues from.
const (
	StateSnapshot uint8 = 0 // paging a live snapshot
	StateTimeline uint8 = 1 // paging a timeline
	// StatePull pages a timeline from below its inbox's horizon when the
	// cursor was minted: a hint that the next page will pull from every
	// followee's outbox, so it reads the following set with its view, in
	// its first round trip, not in a round trip of its own. It is only a
	// hint: a page read as StateTimeline would be the same.
	StatePull uint8 = 2
)

// Cursor is a position in a feed or list, bound to the viewer it was
// minted for and, for a list, to the list's kind and owner. Clients see it
// only sealed: base64url of a compact binary form plus an HMAC, so it can
// be neither forged nor replayed by another viewer, on another list, or
// on another owner's list.
type Cursor struct {
	Session string // live snapshot id; empty for timelines
	State   uint8
	LastID  store.ID
	TS      int64
	Viewer  store.ID
	List    ListKind // ListFeed for the feeds
	Owner   store.ID // whose list (the kind says what it is); 0 for the feeds
}

// ListKind is which list a cursor pages (feedcore's list_page.go). Its
// value is sealed in cursors: never renumber one. A list pages one way
// only (newest first, after a cursor), and what would be another
// direction of the same records is a kind of its own (followers,
// following).
type ListKind uint8

// The kinds of list.
const (
	ListFeed                   ListKind = iota // followingFeed and liveFeed: no owner
	ListFavorites                              // Query.favorites; owner: the viewer
	ListAuthorPosts                            // User.posts; owner: the author
	ListAuthorPostsWithReplies                 // User.posts(includeReplies: true); owner: the author
	ListFollowers                              // User.followers; owner: the user
	ListFollowing                              // User.following; owner: the user
	ListReplies                                // Post.replies; owner: the parent post
	ListBlocked                                // Query.blockedUsers; owner: the viewer
	ListMuted                                  // Query.mutedUsers; owner: the viewer
	ListHidden                                 // Query.usersHiddenFromMyPosts; owner: the viewer
)

// Item is the timeline position the cursor points at.
func (c Cursor) Item() store.Item { return store.Item{TS: c.TS, ID: c.LastID} }

// Cursor spellings: version 1 is a feed's (no list, no owner), as
// cursors were before lists, so feed cursors already handed out stay
// valid; version 2 adds the list's kind and owner. Each cursor has one
// spelling (OpenAny checks it is the one seal writes).
const (
	cursorVersion     = 1
	listCursorVersion = 2
)

// MacLen is how many bytes at the end of a cursor's binary form are its
// MAC: the first of its HMAC-SHA256.
const MacLen = 12

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

// Key returns a copy of the key s seals with.
func (s *Sealer) Key() []byte { return append([]byte(nil), s.key...) }

// Seal encodes c for a client.
func (s *Sealer) Seal(c Cursor) string {
	sc := s.scratch.Get().(*sealScratch)
	defer s.scratch.Put(sc)
	return string(s.seal(sc, c))
}

// seal is Seal's spelling of c, in sc's buffers when they are large
// enough: valid until sc is reused.
func (s *Sealer) seal(sc *sealScratch, c Cursor) []byte {
	list := c.List != ListFeed || c.Owner != 0
	b := append(sc.buf[:0], cursorVersion, c.State, byte(len(c.Session)))
	if list {
		b[0] = listCursorVersion
	}
	b = append(b, c.Session...)
	b = binary.AppendUvarint(b, c.LastID)
	b = binary.AppendVarint(b, c.TS)
	b = binary.AppendUvarint(b, c.Viewer)
	if list {
		b = append(b, byte(c.List))
		b = binary.AppendUvarint(b, c.Owner)
	}
	b = append(b, sc.macOf(b)...)
	return base64.RawURLEncoding.AppendEncode(sc.out[:0], b)
}

// macOf is the MAC of b: the first MacLen bytes of its HMAC, in sc.sum.
func (sc *sealScratch) macOf(b []byte) []byte {
	sc.mac.Reset()
	sc.mac.Write(b)
	return sc.mac.Sum(sc.sum[:0])[:MacLen]
}

// Open decodes a client's feed cursor and checks it was sealed here for
// viewer. Any failure is INVALID_CURSOR: the client should restart from
// the top.
func (s *Sealer) Open(raw string, viewer store.ID) (Cursor, error) {
	c, err := s.OpenAny(raw, viewer)
	if err == nil && (c.List != ListFeed || c.State > StatePull) {
		return Cursor{}, errBadCursor() // a list's (feedcore's list_page.go)
	}
	return c, err
}

func errBadCursor() error {
	return apierr.Errorf(apierr.InvalidCursor, "the cursor is not valid for this viewer; request the first page without a cursor")
}

// OpenAny is Open for a cursor of any state and any list: the caller
// checks they are those it pages (feedcore's list_page.go).
func (s *Sealer) OpenAny(raw string, viewer store.ID) (Cursor, error) {
	bad := errBadCursor()
	sc := s.scratch.Get().(*sealScratch)
	defer s.scratch.Put(sc)
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil || len(b) < 3+MacLen {
		return Cursor{}, bad
	}
	body, mac := b[:len(b)-MacLen], b[len(b)-MacLen:]
	if !hmac.Equal(mac, sc.macOf(body)) || (body[0] != cursorVersion && body[0] != listCursorVersion) {
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
	if c.Viewer, k = binary.Uvarint(rest); k <= 0 {
		return Cursor{}, bad
	}
	rest = rest[k:]
	if body[0] == listCursorVersion {
		if len(rest) < 1 {
			return Cursor{}, bad
		}
		c.List, rest = ListKind(rest[0]), rest[1:]
		if c.Owner, k = binary.Uvarint(rest); k <= 0 {
			return Cursor{}, bad
		}
		rest = rest[k:]
	}
	if len(rest) != 0 || c.Viewer != viewer {
		return Cursor{}, bad
	}
	// Only the canonical spelling: base64 decoding ignores the spare low
	// bits of the last character, so one cursor would have several.
	if string(s.seal(sc, c)) != raw {
		return Cursor{}, bad
	}
	return c, nil
}
