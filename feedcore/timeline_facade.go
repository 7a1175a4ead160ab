package feedcore

import (
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/timeline"
)

// DefaultPageSize is timeline.DefaultPageSize.
const DefaultPageSize = timeline.DefaultPageSize

// GraphCounts is timeline.GraphCounts.
type GraphCounts = timeline.GraphCounts

// KeywordFilter is timeline.KeywordFilter.
type KeywordFilter = core.KeywordFilter

// MaxPageSize is timeline.MaxPageSize.
const MaxPageSize = timeline.MaxPageSize

// NewPost is timeline.NewPost.
type NewPost = timeline.NewPost
