package feedcore

// The facade: the names callers use, defined in the layers below and
// aliased here, so a caller imports feedcore alone.

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/lists"
	"github.com/feedd/feedd/feedcore/live"
	"github.com/feedd/feedd/feedcore/moderation"
	"github.com/feedd/feedd/feedcore/ratelimit"
	"github.com/feedd/feedd/feedcore/realtime"
	"github.com/feedd/feedd/feedcore/safety"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
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

// Charge is ratelimit.Charge.
type Charge = ratelimit.Charge

// Edge is core.Edge.
type Edge = core.Edge

// FeedEdge is core.FeedEdge.
type FeedEdge = core.FeedEdge

// FeedPage is core.FeedPage.
type FeedPage = core.FeedPage

// FeedRequest is core.FeedRequest.
type FeedRequest = core.FeedRequest

// Shown is core.Shown.
type Shown = core.Shown

// LivePage is core.LivePage.
type LivePage = core.LivePage

// LiveRequest is core.LiveRequest.
type LiveRequest = core.LiveRequest

// LiveSession is core.LiveSession.
type LiveSession = core.LiveSession

// Options is core.Options.
type Options = core.Options

// RateLimit is ratelimit.RateLimit.
type RateLimit = ratelimit.RateLimit

// Subject is ratelimit.Subject.
type Subject = ratelimit.Subject

// User is core.User.
type User = core.User

// Verdict is ratelimit.Verdict.
type Verdict = ratelimit.Verdict

// WithCharge is core.WithCharge.
func WithCharge(ctx context.Context, ch *ratelimit.Charge) context.Context {
	return ratelimit.WithCharge(ctx, ch)
}

// WorkerOptions is core.WorkerOptions.
type WorkerOptions = core.WorkerOptions

// DefaultPageSize is timeline.DefaultPageSize.
const DefaultPageSize = timeline.DefaultPageSize

// GraphCounts is timeline.GraphCounts.
type GraphCounts = timeline.GraphCounts

// KeywordFilter is core.KeywordFilter.
type KeywordFilter = core.KeywordFilter

// MaxPageSize is timeline.MaxPageSize.
const MaxPageSize = timeline.MaxPageSize

// NewPost is timeline.NewPost.
type NewPost = timeline.NewPost

// AuditEntry is core.AuditEntry.
type AuditEntry = core.AuditEntry

// DeletedAccount is core.DeletedAccount.
type DeletedAccount = core.DeletedAccount

// ExportSink is core.ExportSink.
type ExportSink = core.ExportSink

// Favorite is core.Favorite.
type Favorite = core.Favorite

// PostCounts is core.PostCounts.
type PostCounts = core.PostCounts

// Relation is core.Relation.
type Relation = core.Relation

// RelationBlock is core.RelationBlock.
const RelationBlock = core.RelationBlock

// RelationHide is core.RelationHide.
const RelationHide = core.RelationHide

// RelationKind is core.RelationKind.
type RelationKind = core.RelationKind

// RelationMute is core.RelationMute.
const RelationMute = core.RelationMute

// Report is core.Report.
type Report = core.Report

// Since is core.Since.
type Since = core.Since

// Suspension is core.Suspension.
type Suspension = core.Suspension

// Target is core.Target.
type Target = core.Target

// TargetKind is core.TargetKind.
type TargetKind = core.TargetKind

// The kinds of report subjects (core.TargetPost...).
const (
	TargetPost = core.TargetPost
	TargetUser = core.TargetUser
	TargetLive = core.TargetLive
)

// ParseTarget is core.ParseTarget.
func ParseTarget(s string) (Target, error) { return core.ParseTarget(s) }

// MaxTitleLen is live.MaxTitleLen.
const MaxTitleLen = live.MaxTitleLen

// NewLive is live.NewLive.
type NewLive = live.NewLive

// MaxKeywordFilters is safety.MaxKeywordFilters.
const MaxKeywordFilters = safety.MaxKeywordFilters

// MaxKeywordLen is safety.MaxKeywordLen.
const MaxKeywordLen = safety.MaxKeywordLen

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

// MaxModOperator is moderation.MaxModOperator.
const MaxModOperator = moderation.MaxModOperator

// MaxModReason is moderation.MaxModReason.
const MaxModReason = moderation.MaxModReason

// MaxReportComment is moderation.MaxReportComment.
const MaxReportComment = moderation.MaxReportComment

// ModAction is moderation.ModAction.
type ModAction = moderation.ModAction

// ModOutcome is moderation.ModOutcome.
type ModOutcome = moderation.ModOutcome

// ParseSince is moderation.ParseSince.
func ParseSince(v string) (Since, error) { return moderation.ParseSince(v) }

// ReportReasons is moderation.ReportReasons.
var ReportReasons = moderation.ReportReasons

// ReportRequest is moderation.ReportRequest.
type ReportRequest = moderation.ReportRequest

// ValidEntryID is moderation.ValidEntryID.
func ValidEntryID(id string) bool { return moderation.ValidEntryID(id) }

// FollowingUpdate is realtime.FollowingUpdate.
type FollowingUpdate = realtime.FollowingUpdate

// LiveUpdate is realtime.LiveUpdate.
type LiveUpdate = realtime.LiveUpdate

// RealtimeOptions is realtime.Options.
type RealtimeOptions = realtime.Options

// RealtimeStats is realtime.Stats.
type RealtimeStats = realtime.Stats

// NoticeMode is core.NoticeMode: how realtime notices travel between
// replicas (Options.Notices).
type NoticeMode = core.NoticeMode

// The notice modes (core.NoticesAuto...).
const (
	NoticesAuto  = core.NoticesAuto
	NoticesRedis = core.NoticesRedis
	NoticesLocal = core.NoticesLocal
	NoticesOff   = core.NoticesOff
)

// ErrTooManySubscriptions is realtime.ErrTooManySubscriptions.
var ErrTooManySubscriptions = realtime.ErrTooManySubscriptions
