package feedcore

import "github.com/feedd/feedd/feedcore/lists"

// HydrateRequest is lists.HydrateRequest.
type HydrateRequest = lists.HydrateRequest

// MaxCount is lists.MaxCount.
const MaxCount = lists.MaxCount

// PostLike is lists.PostLike.
type PostLike = lists.PostLike

// RelationFlags is lists.RelationFlags.
type RelationFlags = lists.RelationFlags

// RepostResult is lists.RepostResult.
type RepostResult = lists.RepostResult

// UserPage is lists.UserPage.
type UserPage = lists.UserPage
