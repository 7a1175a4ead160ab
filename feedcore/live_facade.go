package feedcore

import "github.com/feedd/feedd/feedcore/live"

// MaxTitleLen is live.MaxTitleLen.
const MaxTitleLen = live.MaxTitleLen

// NewLive is live.NewLive.
type NewLive = live.NewLive
