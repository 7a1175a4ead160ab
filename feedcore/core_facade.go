package feedcore

import (
	"context"

	"github.com/feedd/feedd/feedcore/core"
)

// Charge is core.Charge.
type Charge = core.Charge

// Edge is core.Edge.
type Edge = core.Edge

// FeedEdge is core.FeedEdge.
type FeedEdge = core.FeedEdge

// FeedPage is core.FeedPage.
type FeedPage = core.FeedPage

// FeedRequest is core.FeedRequest.
type FeedRequest = core.FeedRequest

// LivePage is core.LivePage.
type LivePage = core.LivePage

// LiveRequest is core.LiveRequest.
type LiveRequest = core.LiveRequest

// LiveSession is core.LiveSession.
type LiveSession = core.LiveSession

// Options is core.Options.
type Options = core.Options

// RateLimit is core.RateLimit.
type RateLimit = core.RateLimit

// Subject is core.Subject.
type Subject = core.Subject

// User is core.User.
type User = core.User

// Verdict is core.Verdict.
type Verdict = core.Verdict

// WithCharge is core.WithCharge.
func WithCharge(ctx context.Context, ch *core.Charge) context.Context {
	return core.WithCharge(ctx, ch)
}

// WorkerOptions is core.WorkerOptions.
type WorkerOptions = core.WorkerOptions
