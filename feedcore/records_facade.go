package feedcore

import "github.com/feedd/feedd/feedcore/core"

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
