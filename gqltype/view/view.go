// Package view holds what one GraphQL response shows of a post, a user, a
// live session and a media item: the domain object, and what the request
// read about it for its viewer (counters, the viewer's flags, the author),
// set by the resolvers before the executor reads it.
//
// gqlgen.yml binds the schema's Post, User, LiveSession and Media to these
// types, and every field of theirs that is not a paged list binds to a
// method here that takes no context. gqlgen runs such a field inline; it
// runs a field with a resolver, or a method with a context, in a goroutine
// of its own. A page of 20 posts with their authors is then a few
// goroutines instead of hundreds, and the reads the fields show were made
// by the page's hydration in one round trip anyway.
//
// A read a view was not given (the resolver's reading of the selection
// missed a field) is an error, never a silent zero.
package view

import (
	"fmt"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/gqltype"
)

// Read is one value a resolver read for a view, or the error reading it
// met. The zero Read was never read.
type Read[T any] struct {
	v   T
	err error
	set bool
}

// ReadOf is the outcome of a read.
func ReadOf[T any](v T, err error) Read[T] { return Read[T]{v: v, err: err, set: true} }

// Known is a value known without a read.
func Known[T any](v T) Read[T] { return Read[T]{v: v, set: true} }

// Set reports whether r was read.
func (r Read[T]) Set() bool { return r.set }

// get is r's value; field names the GraphQL field for the error when r
// was never read.
func (r Read[T]) get(typ, field string) (T, error) {
	if !r.set {
		var zero T
		return zero, fmt.Errorf("view: %s.%s was selected but not read", typ, field)
	}
	return r.v, r.err
}

// Post is a post as the response shows it.
type Post struct {
	Post *feedcore.Post
	// Author is the author's view; its error, a NOT_FOUND, when the
	// author has no profile.
	Author                     Read[*User]
	Counts                     Read[feedcore.PostCounts]
	Liked, Reposted, Favorited Read[bool]
	// Parent is the view of the post this one replies to: Known(nil) when
	// it is no reply, or the parent is gone or hidden from the viewer.
	Parent Read[*Post]
}

func (p *Post) ID() string         { return gqltype.Encode(gqltype.Post, p.Post.ID) }
func (p *Post) DatabaseID() string { return feedcore.FormatID(p.Post.ID) }
func (p *Post) Text() string       { return p.Post.Text }

func (p *Post) CreatedAt() time.Time { return p.Post.CreatedAt }

// ContentWarning is null, not "", when the post has none.
func (p *Post) ContentWarning() *string { return nonEmpty(p.Post.ContentWarning) }

// AuthorView, CountsView and the viewer's flags are what the resolvers read.
func (p *Post) AuthorView() (*User, error)                { return p.Author.get("Post", "author") }
func (p *Post) CountsView() (*feedcore.PostCounts, error) { return ptr(p.Counts.get("Post", "counts")) }
func (p *Post) ReplyToView() (*Post, error)               { return p.Parent.get("Post", "replyTo") }
func (p *Post) ViewerHasLiked() (bool, error)             { return p.Liked.get("Post", "viewerHasLiked") }
func (p *Post) ViewerHasReposted() (bool, error)          { return p.Reposted.get("Post", "viewerHasReposted") }
func (p *Post) ViewerHasFavorited() (bool, error) {
	return p.Favorited.get("Post", "viewerHasFavorited")
}

// Media are the post's items, in order.
func (p *Post) Media() []*Media {
	out := make([]*Media, len(p.Post.Media))
	for i := range p.Post.Media {
		out[i] = &Media{m: &p.Post.Media[i]}
	}
	return out
}

// Media is a media item: an unknown size or duration (0) and absent alt
// text or thumbnail ("") are null.
type Media struct{ m *feedcore.Media }

func (m *Media) URL() string              { return m.m.URL }
func (m *Media) Kind() feedcore.MediaKind { return m.m.Kind }
func (m *Media) Width() *int              { return nonZero(m.m.Width) }
func (m *Media) Height() *int             { return nonZero(m.m.Height) }
func (m *Media) AltText() *string         { return nonEmpty(m.m.AltText) }
func (m *Media) ThumbnailURL() *string    { return nonEmpty(m.m.ThumbnailURL) }
func (m *Media) DurationMs() *int         { return nonZero(m.m.DurationMs) }
func (m *Media) Sensitive() bool          { return m.m.Sensitive }

// User is a profile as the response shows it. The viewer's flags are
// false (and the mute's end null) for anonymous callers and for the
// viewer's own profile: the resolvers set them Known.
type User struct {
	User      *feedcore.User
	Counts    Read[feedcore.GraphCounts]
	Following Read[bool]
	Relation  Read[feedcore.RelationFlags]
}

func (u *User) ID() string          { return gqltype.Encode(gqltype.User, u.User.ID) }
func (u *User) DatabaseID() string  { return feedcore.FormatID(u.User.ID) }
func (u *User) Handle() string      { return u.User.Handle }
func (u *User) DisplayName() string { return u.User.DisplayName }

// AvatarURL is null, not "", when the user has none.
func (u *User) AvatarURL() *string { return nonEmpty(u.User.AvatarURL) }

func (u *User) FollowerCount() (int, error) {
	c, err := u.Counts.get("User", "followerCount")
	return c.Followers, err
}

func (u *User) FollowingCount() (int, error) {
	c, err := u.Counts.get("User", "followingCount")
	return c.Following, err
}

func (u *User) ViewerIsFollowing() (bool, error) { return u.Following.get("User", "viewerIsFollowing") }

func (u *User) ViewerHasBlocked() (bool, error) {
	f, err := u.Relation.get("User", "viewerHasBlocked")
	return f.Blocked, err
}

func (u *User) BlocksViewer() (bool, error) {
	f, err := u.Relation.get("User", "blocksViewer")
	return f.BlocksViewer, err
}

func (u *User) ViewerHasMuted() (bool, error) {
	f, err := u.Relation.get("User", "viewerHasMuted")
	return f.Muted, err
}

// ViewerMuteExpiresAt is null unless a mute with an end stands.
func (u *User) ViewerMuteExpiresAt() (*time.Time, error) {
	f, err := u.Relation.get("User", "viewerMuteExpiresAt")
	if err != nil || !f.Muted || f.MuteEnds.IsZero() {
		return nil, err
	}
	return &f.MuteEnds, nil
}

func (u *User) ViewerHidesMyPosts() (bool, error) {
	f, err := u.Relation.get("User", "viewerHidesMyPosts")
	return f.HidesFrom, err
}

// LiveSession is a live session as the response shows it.
type LiveSession struct {
	Session *feedcore.LiveSession
	// Anchor is the anchor's view; its error, a NOT_FOUND, when the anchor
	// has no profile.
	Anchor Read[*User]
}

func (l *LiveSession) ID() string                   { return gqltype.Encode(gqltype.LiveSession, l.Session.ID) }
func (l *LiveSession) DatabaseID() string           { return feedcore.FormatID(l.Session.ID) }
func (l *LiveSession) AnchorView() (*User, error)   { return l.Anchor.get("LiveSession", "anchor") }
func (l *LiveSession) Title() string                { return l.Session.Title }
func (l *LiveSession) State() core.LiveState        { return l.Session.State() }
func (l *LiveSession) ScheduledStartAt() *time.Time { return l.Session.ScheduledStartAt }
func (l *LiveSession) StartedAt() *time.Time        { return l.Session.StartedAt }
func (l *LiveSession) EndedAt() *time.Time          { return l.Session.EndedAt }

// CoverURL is null, not "", when the session has none.
func (l *LiveSession) CoverURL() *string { return nonEmpty(l.Session.CoverURL) }

func nonEmpty(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func nonZero(n int) *int {
	if n == 0 {
		return nil
	}
	return &n
}

func ptr[T any](v T, err error) (*T, error) {
	if err != nil {
		return nil, err
	}
	return &v, nil
}
