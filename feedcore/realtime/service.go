package realtime

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/feedd/feedd/apierr"
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
// would also do; kept here so the layer below knows nothing of it). How
// notices travel between replicas is core.Options.Notices: every process
// that writes publishes them, not only those that serve subscriptions.
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
	// Recounts is how many subscriptions' reads (recounts, sessions) run
	// at once on this replica; the others wait their turn. Default 16.
	Recounts int
}

func (o Options) withDefaults() Options {
	core.SetDefault(&o.MinInterval, time.Second)
	core.SetDefault(&o.LiveQueue, 64)
	core.SetDefault(&o.MaxPerViewer, 10)
	core.SetDefault(&o.Recounts, 16)
	return o
}

// FollowingUpdate is what a pull-to-refresh from the subscription's
// since cursor would show now.
type FollowingUpdate struct {
	// NewPostCount is exact up to MaxCount; MaxCount means that or more.
	NewPostCount int
	// NewPostAuthors are up to MaxAuthors distinct authors of those
	// posts, newest first (a repost's reposter).
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
var ErrTooManySubscriptions error = &apierr.Error{Code: apierr.RateLimited,
	Message: "too many subscriptions for this viewer on this replica; close one first"}

// errNotStarted refuses a subscription on a replica whose realtime does
// not run (Start): another replica may serve it.
var errNotStarted error = &apierr.Error{Code: apierr.Unavailable,
	Message: "realtime updates are not running on this replica; retry, another replica may serve them"}

// Stats are a replica's realtime counters, for /metrics.
type Stats struct {
	Subscriptions    int64 // open now
	NoticesSent      int64 // updates handed to subscribers
	NoticesCoalesced int64 // notices folded into a later update
	NoticesDropped   int64 // updates lost to a full queue
	SlowDropped      int64 // subscribers dropped for a full queue
	Resubscribes     int64 // Redis subscriptions confirmed again after a loss

	Channels         int64 // channels listened to now: Redis subscriptions confirmed (or the process's own bus's)
	LinkLosses       int64 // Redis subscriptions lost (each resubscribes by itself)
	NoticesPublished int64 // notices this process published (any process that writes)
	NoticesReceived  int64 // notices heard on this replica's channels
	Recounts         int64 // following counts read
	Errors           int64 // recounts, publishes, presence reads and renewals that failed (each a hint lost or retried)
}

// counters back Stats.
type counters struct {
	subscriptions, sent, coalesced, dropped, slowDropped, resubscribes atomic.Int64
	channels, linkLosses, published, received, recounts                atomic.Int64
	recountErrors, publishErrors, presenceErrors, badNotices           atomic.Int64
}

// Service is realtime over moderation. The facade (package feedcore)
// embeds it.
type Service struct {
	*moderation.Service

	stats counters
	// hub is this replica's side while Start runs; nil otherwise.
	hub atomic.Pointer[hub]
	// starting says why Start has not got the hub running yet.
	starting atomic.Pointer[error]

	// autoMode is how notices travel under core.NoticesAuto, once known
	// (mode).
	autoMode atomic.Int32
}

// New returns realtime over m and installs its publisher in the core, so
// every layer's changes are told to the replicas that serve
// subscriptions, unless core.Options.Notices is NoticesOff.
func New(m *moderation.Service) *Service {
	s := &Service{Service: m}
	if s.Opts.Notices != core.NoticesOff {
		m.SetNotifier(publisher{s: s})
	}
	return s
}

// Start runs this replica's side of realtime (its Redis subscriptions and
// presence renewal) until ctx ends, then closes every subscription it
// serves. Only a replica that serves subscriptions starts it.
func (s *Service) Start(ctx context.Context, opts Options) (err error) {
	defer store.Wrap(&err, "run realtime")
	if s.Opts.Notices == core.NoticesOff {
		return errors.New("notices are off (core.Options.Notices): this process cannot serve subscriptions")
	}
	if !s.starting.CompareAndSwap(nil, &errStarting) {
		return errors.New("realtime is running already")
	}
	defer s.starting.Store(nil)
	mode, err := s.startMode(ctx)
	if err != nil {
		return nil // stopped while starting
	}
	h := newHub(ctx, s, opts.withDefaults())
	if mode == modeLocal {
		h.l = &localListener{key: s.localKey(), h: h, stats: &s.stats, on: map[string]bool{}}
	} else {
		h.l = newRedisListener(ctx, s.Redis, h, &s.stats)
	}
	// Suspensions concern everyone: the replica always hears them, and
	// its one subscription says whether its link works, subscribers or
	// not.
	h.mu.Lock()
	h.acquire(s.Keys.ModerationChannel())
	h.mu.Unlock()
	s.hub.Store(h)
	h.renewLoop(ctx)
	s.hub.Store(nil)
	h.close()
	return nil
}

// errStarting is RealtimeReady's answer before the transport is known.
var errStarting = errors.New("realtime: starting (asking Redis for sharded pub/sub)")

// startMode finds how notices travel, trying again until it can or ctx
// ends; meanwhile RealtimeReady says why.
func (s *Service) startMode(ctx context.Context) (int, error) {
	for {
		m, err := s.listenMode(ctx)
		if err == nil {
			return m, nil
		}
		e := fmt.Errorf("realtime: starting: %w", err)
		s.starting.Store(&e)
		if !core.SleepCtx(ctx, time.Second) {
			return modeUnknown, ctx.Err()
		}
	}
}

// joinAs takes a place for a new subscription of viewer on this replica.
func (s *Service) joinAs(viewer store.ID) (*hub, error) {
	if viewer == 0 {
		return nil, apierr.Errorf(apierr.Unauthenticated, "sign in to subscribe to updates")
	}
	h := s.hub.Load()
	if h == nil {
		return nil, errNotStarted
	}
	return h, h.join(viewer)
}

// RealtimeReady reports whether this replica's realtime link works: nil,
// or why not (for /readyz). A replica that does not run realtime is
// ready; one that does is not while it starts or while any of its Redis
// subscriptions is down (each resubscribes by itself).
func (s *Service) RealtimeReady() error {
	if h := s.hub.Load(); h != nil {
		return h.l.down()
	}
	if e := s.starting.Load(); e != nil {
		return *e
	}
	return nil
}

// RealtimeStats returns this replica's counters.
func (s *Service) RealtimeStats() Stats {
	st := &s.stats
	return Stats{
		Subscriptions: st.subscriptions.Load(), NoticesSent: st.sent.Load(), NoticesCoalesced: st.coalesced.Load(),
		NoticesDropped: st.dropped.Load(), SlowDropped: st.slowDropped.Load(), Resubscribes: st.resubscribes.Load(),
		Channels: st.channels.Load(), LinkLosses: st.linkLosses.Load(), NoticesPublished: st.published.Load(),
		NoticesReceived: st.received.Load(), Recounts: st.recounts.Load(),
		Errors: st.recountErrors.Load() + st.publishErrors.Load() + st.presenceErrors.Load() + st.badNotices.Load(),
	}
}

// RealtimeRunning reports whether Start runs and serves subscriptions on
// this replica.
func (s *Service) RealtimeRunning() bool { return s.hub.Load() != nil }
