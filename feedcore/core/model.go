package core

import (
	"context"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
)

// User is a profile.
type User struct {
	ID          store.ID
	Handle      string
	DisplayName string
	AvatarURL   string
	// Suspended is set while an operator's suspension stands (and its job
	// has marked the profile): lists of users leave the account out.
	Suspended bool
}

// FeedRequest asks for one page of a viewer's following feed. Set First
// (with After) to page toward older posts, or Last (with Before) for posts
// newer than a cursor. Zero First and Last means First = 20.
type FeedRequest struct {
	Viewer store.ID
	First  int
	After  string
	Last   int
	Before string
	// Alongside, when set, runs in the round trip of one of a page's
	// reads, given what the page may show, so that a caller hydrating
	// the page reads what it shows then and not in a round trip after.
	// Only a page toward older posts calls it, at most twice: with the
	// read of its items' posts, on a replica that has not pulled for the
	// viewer, when every item's author is known (each read from an
	// outbox); and with the read of what its items link to (the originals
	// of reposts, the follows and hides that decide its replies) when
	// the items were read from Redis (on a warm replica the links cost no
	// round trip to share). A second call may repeat what the first gave.
	Alongside func(ctx context.Context, shown []Shown) error
}

// Shown is an item a page may show, as known before its links are read:
// the post shown (a repost shows its original, known by its ID and author
// from the repost's record), what that post replies to (0 for a repost's
// original, not read yet), and who reposted it (0: not a repost).
type Shown struct {
	Post, Author, ReplyTo, ReplyToAuthor, Reposter store.ID
}

// FeedPage is one page of a feed, in feed order (newest first).
type FeedPage struct {
	Edges       []FeedEdge
	HasNext     bool
	HasPrevious bool
	StartCursor string
	EndCursor   string
}

// FeedEdge is a post with its cursor. When a followee's repost put the
// post there, Repost is that repost's record (its Author reposted it at
// its CreatedAt) and the cursor is the repost's position; else nil.
type FeedEdge struct {
	Post   *content.Post
	Repost *content.Post
	Cursor string
}

// LiveState is a live session's state.
type LiveState string

const (
	StateLive    LiveState = "LIVE"
	StatePreview LiveState = "PREVIEW"
	StateReplay  LiveState = "REPLAY"
)

// LiveSession is an anchor's live stream. Its state follows from which
// times are set: ended is REPLAY, started is LIVE, else PREVIEW. A session
// ended without starting was cancelled: REPLAY with no StartedAt, shown in
// no feed.
type LiveSession struct {
	ID               store.ID
	Anchor           store.ID
	Title            string
	ScheduledStartAt *time.Time
	StartedAt        *time.Time
	EndedAt          *time.Time
	// CoverURL is the session's cover image, "" for none.
	CoverURL string
	// AnchorSuspended: the anchor's account is suspended; the session is
	// shown in no feed until it is unsuspended (safety_moderation.go).
	AnchorSuspended bool
}

// State is the session's current state.
func (l *LiveSession) State() LiveState {
	switch {
	case l.EndedAt != nil:
		return StateReplay
	case l.StartedAt != nil:
		return StateLive
	}
	return StatePreview
}

// Cancelled reports a session ended before it started.
func (l *LiveSession) Cancelled() bool { return l.EndedAt != nil && l.StartedAt == nil }

// LivePage is one page of a live feed.
type LivePage struct {
	Edges       []LiveEdge
	HasNext     bool
	HasPrevious bool
	StartCursor string
	EndCursor   string
}

// LiveEdge is a session with its cursor and the state it had in the
// snapshot the page came from.
type LiveEdge struct {
	Session *LiveSession
	State   LiveState
	Cursor  string
}

// LiveRequest asks for a page of a viewer's live feed.
type LiveRequest struct {
	Viewer store.ID
	First  int
	After  string
	// Device names the viewer's device (app install, browser): a first
	// page replaces that device's snapshot only. Empty is DefaultDevice.
	Device string
}

// Edge is one follow: Follower follows Followee.
type Edge struct{ Follower, Followee store.ID }
