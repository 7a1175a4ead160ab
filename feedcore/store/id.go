package store

// ID is a database id: users, posts and live sessions are numbered with
// 64-bit unsigned integers, written in decimal outside the store.
type ID = uint64

// Item is a position in a timeline: newer ts first, then larger id first.
type Item struct {
	TS int64 // milliseconds since the epoch
	ID ID
}

// Before reports whether a comes before b in feed order (a is newer).
func (a Item) Before(b Item) bool {
	if a.TS != b.TS {
		return a.TS > b.TS
	}
	return a.ID > b.ID
}
