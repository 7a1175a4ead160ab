package feedcore

import (
	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
)

// ID is a database id (store.ID).
type ID = store.ID

// Item is a position in a timeline (store.Item).
type Item = store.Item

// CodeOf returns the client-facing code of err (store.CodeOf).
func CodeOf(err error) apierr.Code { return store.CodeOf(err) }

// ParseID reads a decimal database id (store.ParseID).
func ParseID(s string) (ID, error) { return store.ParseID(s) }

// FormatID writes a database id in decimal (store.FormatID).
func FormatID(id ID) string { return store.FormatID(id) }

// Post is a stored post (content.Post).
type Post = content.Post

// Media is an image, GIF or video attached to a post (content.Media).
type Media = content.Media

// MediaKind is what a media item is (content.MediaKind).
type MediaKind = content.MediaKind

// The kinds of media (content.MediaImage, MediaVideo, MediaGIF).
const (
	MediaImage = content.MediaImage
	MediaVideo = content.MediaVideo
	MediaGIF   = content.MediaGIF
)
