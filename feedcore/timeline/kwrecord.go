package timeline

import (
	"time"

	"github.com/feedd/feedd/feedcore/store"
)

// KeywordFilter is one of a user's keyword filters.
type KeywordFilter struct {
	ID        store.ID
	User      store.ID // whose filter it is
	Keyword   string
	WholeWord bool
	ExpiresAt *time.Time // nil: never
	CreatedAt time.Time
}
