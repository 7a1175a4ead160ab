package content

import (
	"time"

	"github.com/feedd/feedd/feedcore/store"
)

// Post is a stored post. Deleted posts are kept as tombstones and never
// served in feeds.
type Post struct {
	ID        store.ID
	Author    store.ID
	Text      string
	CreatedAt time.Time // millisecond precision
	Deleted   bool
	// Media are the post's images, GIFs or video, in order.
	Media []Media
	// ContentWarning, when set, asks apps to hide the post behind it.
	ContentWarning string
	// AuthorSuspended: the author's account is suspended; the post is
	// shown nowhere until it is unsuspended (safety_moderation.go).
	AuthorSuspended bool
	// TakenDown is when an operator took the post down (zero: never), and
	// TakedownReason why; a post taken down is Deleted too.
	TakenDown      time.Time
	TakedownReason string
	// ReplyTo is the post this one replies to (0: none), and
	// ReplyToAuthor that post's author, kept with the reply so the rule
	// of who sees it (read_items.go) needs no read of the parent.
	ReplyTo, ReplyToAuthor store.ID
	// RepostOf, set, makes this the record of a repost (repost_write.go):
	// Author reposted the post RepostOf, by RepostOfAuthor, at CreatedAt.
	// A record is an item of feeds, never shown or addressed as a post.
	RepostOf, RepostOfAuthor store.ID
}

// IsRepost reports whether p is a repost's record, not a post.
func (p *Post) IsRepost() bool { return p.RepostOf != 0 }
