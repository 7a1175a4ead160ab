package feedcore

import "github.com/feedd/feedd/feedcore/safety"

// MaxKeywordFilters is safety.MaxKeywordFilters.
const MaxKeywordFilters = safety.MaxKeywordFilters

// MaxKeywordLen is safety.MaxKeywordLen.
const MaxKeywordLen = safety.MaxKeywordLen
