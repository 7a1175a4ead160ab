package realtime

import (
	"context"
	"errors"
	"time"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/moderation"
	"github.com/feedd/feedd/feedcore/store"
)

// MaxCount is the most new posts a following update counts exactly: a
// count of MaxCount means MaxCount or more.
const MaxCount = 100

// MaxAuthors is the most authors a following update names, for the pill's
// avatars.
const MaxAuthors = 3

// Options configure a replica's realtime (RealtimeOptions in core.Options
// would also do; kept here so the layer below knows nothing of it).
type Options struct {
	// MinInterval: at most one following update per subscription in this
	// long (--subscription-min-interval). Default 1s.
	MinInterval time.Duration
	// LiveQueue is how many live updates wait for a slow subscriber
	// before it is dropped. Default 64.
	LiveQueue int
	// MaxPerViewer is the most subscriptions one viewer holds on this
	// replica (--max-subscriptions-per-viewer). Default 10.
	MaxPerViewer int
}

// FollowingUpdate is what a pull-to-refresh from the subscription's
// since cursor would show now.
type FollowingUpdate struct {
	// NewPostCount is exact up to MaxCount; MaxCount means that or more.
	NewPostCount int
	// NewPostAuthors are up to MaxAuthors distinct authors of those
	// posts, newest first.
	NewPostAuthors []store.ID
	// DeletedPostIDs are posts that left the feed (deleted, taken down or
	// newly hidden) since the last update.
	DeletedPostIDs []store.ID
}

// LiveUpdate is a followed anchor's session that went live, was
// scheduled or ended.
type LiveUpdate struct {
	Session *core.LiveSession
	State   core.LiveState
}

// ErrTooManySubscriptions refuses a subscription past
// Options.MaxPerViewer; its code is RATE_LIMITED.
var ErrTooManySubscriptions = errors.New("too many subscriptions for this viewer on this replica; close one first")

// Stats are a replica's realtime counters, for /metrics.
type Stats struct {
	Subscriptions    int64 // open now
	NoticesSent      int64 // updates handed to subscribers
	NoticesCoalesced int64 // notices folded into a later update
	NoticesDropped   int64 // updates lost to a full queue
	SlowDropped      int64 // subscribers dropped for a full queue
	Resubscribes     int64 // Redis subscriptions confirmed again after a loss
}

// Service is realtime over moderation. The facade (package feedcore)
// embeds it.
type Service struct {
	*moderation.Service
}

// New returns realtime over m.
func New(m *moderation.Service) *Service {
	return &Service{Service: m}
}

// Start runs this replica's side of realtime (its Redis subscriptions and
// presence renewal) until ctx ends. Only a replica that serves
// subscriptions starts it.
func (s *Service) Start(ctx context.Context, opts Options) error {
	return errors.New("realtime: not built yet")
}

// FollowingFeedUpdates subscribes viewer to its following feed's updates
// from the cursor since (empty: the top as it is now). The channel closes
// when ctx ends or the subscriber is dropped.
func (s *Service) FollowingFeedUpdates(ctx context.Context, viewer store.ID, since string) (<-chan FollowingUpdate, error) {
	return nil, errors.New("realtime: not built yet")
}

// LiveFeedUpdates subscribes viewer to the sessions of the anchors it
// follows. The channel closes when ctx ends or the subscriber is dropped.
func (s *Service) LiveFeedUpdates(ctx context.Context, viewer store.ID) (<-chan LiveUpdate, error) {
	return nil, errors.New("realtime: not built yet")
}

// RealtimeReady reports whether this replica's realtime link works: nil,
// or why not (for /readyz).
func (s *Service) RealtimeReady() error { return nil }

// RealtimeStats returns this replica's counters.
func (s *Service) RealtimeStats() Stats { return Stats{} }
