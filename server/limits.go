package server

import (
	"net/netip"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
)

// APIConfig is the production API surface of /query: query limits, rate
// limiting, CORS, introspection and persisted queries. Its zero value is
// usable: the limits take the defaults below, rate limiting is off,
// introspection is on, browsers are accepted from the same origin only and
// automatic persisted queries are on. cmd/feedd sets it from flags
// (apiflags.go), where rate limiting defaults on.
type APIConfig struct {
	// MaxDepth is the deepest selection nesting accepted (fragments
	// included); 0 means DefaultMaxDepth, negative means no limit.
	MaxDepth int
	// MaxComplexity bounds an operation's cost (connections cost their
	// page size times their children); 0 means DefaultMaxComplexity,
	// negative means no limit.
	MaxComplexity int
	// MaxTokens bounds the lexer tokens of a query document; 0 means
	// DefaultMaxTokens, negative means no limit.
	MaxTokens int
	// MaxBodyBytes bounds a POST body; 0 means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxMutations bounds the mutation fields of one operation, aliases
	// included; 0 means DefaultMaxMutations, negative means no limit.
	MaxMutations int
	// RateLimit is the allowance of points (operation costs, see
	// complexityRoot) of each signed-in viewer (shared by every replica
	// through Redis); zero Rate disables rate limiting.
	RateLimit feedcore.RateLimit
	// AnonRateLimit is the allowance of each client address, spent by
	// callers without a valid identity (anonymous, or with refused
	// credentials); zero means RateLimit's, a negative Rate no limit.
	// cmd/feedd defaults it to a tenth of RateLimit.
	AnonRateLimit feedcore.RateLimit
	// RequestBaseCost is the least a request spends from its allowance,
	// whether it runs or is refused (a parse or validation error, a depth,
	// introspection or persisted-query refusal); 0: an operation spends
	// its cost, a refused request nothing. cmd/feedd defaults it to
	// DefaultRequestBaseCost.
	RequestBaseCost int
	// TrustedProxyHeader, with TrustedProxies, names the header (like
	// X-Forwarded-For) from which the client address is taken when the
	// TCP peer is a trusted proxy; empty: the peer's address, always.
	TrustedProxyHeader string
	// TrustedProxies are the networks of the reverse proxies whose
	// TrustedProxyHeader is believed.
	TrustedProxies []netip.Prefix
	// CORSOrigins are the browser origins, like https://app.example.com,
	// that may call /query besides the server's own; "*" allows any.
	CORSOrigins []string
	// DisableIntrospection refuses __schema and __type with FORBIDDEN.
	DisableIntrospection bool
	// DisableAPQ turns automatic persisted queries off.
	DisableAPQ bool
	// APQTTL is how long a registered persisted query lives in Redis
	// without being registered again; 0 means DefaultAPQTTL.
	APQTTL time.Duration
	// APQMaxBytes bounds the query text of a persisted query registration;
	// 0 means DefaultAPQMaxBytes.
	APQMaxBytes int
	// APQRegisterLimit is each signed-in viewer's allowance of persisted
	// query registrations (anonymous callers never register); zero means
	// DefaultAPQRegisterLimit, a negative Rate no limit.
	APQRegisterLimit feedcore.RateLimit
	// ReportLimit is each signed-in viewer's allowance of reports (the
	// report mutation), kept apart from its allowance of points as
	// APQRegisterLimit is; zero means DefaultReportLimit, a negative Rate
	// no limit.
	ReportLimit feedcore.RateLimit
	// Streams bound the WebSocket connections and event streams of
	// subscriptions (streams.go).
	Streams StreamLimits
	// PersistedOnly, when not nil, is an allow-list (sha256 hex of the
	// query text -> query text): only these operations run, sent either by
	// hash alone or in full. APQ registration is off in this mode.
	PersistedOnly map[string]string
}

// DefaultRateLimit is the allowance feedd serve gives each viewer and
// client address: a budget of 10,000 points (twice the default complexity
// limit: a few large pages at once), refilled at 1,000 points a second (a
// hydrated followingFeed page of 20 posts costs about 650).
var DefaultRateLimit = feedcore.RateLimit{Rate: 1000, Burst: 10000}

// DefaultAnonRateLimit is the allowance feedd serve gives each client
// address for callers without a valid identity: a tenth of a viewer's, as
// one address may send as many anonymous requests as it likes.
var DefaultAnonRateLimit = feedcore.RateLimit{Rate: DefaultRateLimit.Rate / 10, Burst: DefaultRateLimit.Burst / 10}

// DefaultRequestBaseCost is the base cost feedd serve charges every
// request: about what parsing and validating a small document costs next
// to a hydrated page (about 650 points).
const DefaultRequestBaseCost = 10

// DefaultAPQRegisterLimit: a viewer may register 20 persisted queries at
// once, then one a minute.
var DefaultAPQRegisterLimit = feedcore.RateLimit{Rate: 1.0 / 60, Burst: 20}

// DefaultReportLimit: a viewer may file 30 reports at once, then 10 a
// minute: enough for a person going through a thread, not for a script.
var DefaultReportLimit = feedcore.RateLimit{Rate: 10.0 / 60, Burst: 30}

// Defaults of APIConfig's zero fields.
const (
	DefaultMaxDepth      = 12
	DefaultMaxComplexity = 5000
	DefaultMaxTokens     = 10000
	DefaultMaxBodyBytes  = 1 << 20
	DefaultAPQTTL        = 24 * time.Hour
	DefaultAPQMaxBytes   = 16 << 10
	// DefaultMaxMutations is how many mutation fields (aliases included)
	// one operation may carry.
	DefaultMaxMutations = 5
)

func (a APIConfig) withDefaults() APIConfig {
	if a.MaxDepth == 0 {
		a.MaxDepth = DefaultMaxDepth
	}
	if a.MaxComplexity == 0 {
		a.MaxComplexity = DefaultMaxComplexity
	}
	if a.MaxTokens == 0 {
		a.MaxTokens = DefaultMaxTokens
	}
	if a.MaxBodyBytes <= 0 {
		a.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if a.MaxMutations == 0 {
		a.MaxMutations = DefaultMaxMutations
	}
	if a.APQMaxBytes <= 0 {
		a.APQMaxBytes = DefaultAPQMaxBytes
	}
	if a.APQRegisterLimit == (feedcore.RateLimit{}) {
		a.APQRegisterLimit = DefaultAPQRegisterLimit
	}
	if a.ReportLimit == (feedcore.RateLimit{}) {
		a.ReportLimit = DefaultReportLimit
	}
	if a.APQTTL <= 0 {
		a.APQTTL = DefaultAPQTTL
	}
	return a
}

// Costs, in points, of the work a field causes besides its children's (a
// field without a weight here costs 1 plus its children). One table serves
// the complexity limit and the rate limit. A connection costs its base
// plus its page size times one edge; aliases are charged one by one, each
// being executed on its own.
const (
	// costFollowingFeed: the inbox read (and, for a reader served by merge,
	// the outboxes of its big-V followees) and the page's hydration.
	costFollowingFeed = 10
	// costFollowingFeedCursor: a page after or before a cursor may lie past
	// the inbox horizon, where every followee's outbox is pulled.
	costFollowingFeedCursor = 25
	// costLiveFirstPage: a first liveFeed page may build a snapshot (every
	// followed anchor's queue and sessions, then a write).
	costLiveFirstPage = 100
	// costLivePage: a later liveFeed page reads the snapshot.
	costLivePage = 10
	// costUserList: a page of one of the viewer's own user lists (blocked,
	// muted, hidden from): one sorted set read, then the page's hydration;
	// also the viewer's keyword filters (one hash read, no hydration).
	costUserList = 10
	// costList: a page of favorites, of a user's posts, followers or
	// followees: one sorted set read (reading past filtered entries within
	// the read bound), the posts through the cache, then the page's
	// hydration. Nested under a list it is charged per parent.
	costList = 10
	// costWrite: a mutation that writes and fans out (publish, delete,
	// follow with its backfill, unfollow, ending a live session), or that
	// settles a relation in both users' slots and queues a feed clean-up
	// or backfill (block, mute, hide and their undoing).
	costWrite = 50
	// costSmallWrite: a mutation that touches a few keys (like, unlike,
	// favorite and unfavorite, schedule and start a live session, add or
	// remove a keyword filter, report).
	costSmallWrite = 20
	// costFollowingUpdates: subscribing to followingFeedUpdates marks the
	// viewer present and counts what a page before its cursor would show,
	// as costFollowingFeedCursor; its updates, at most one per
	// --subscription-min-interval, are not charged again.
	costFollowingUpdates = costFollowingFeedCursor
	// costLiveUpdates: subscribing to liveFeedUpdates marks the viewer
	// present and reads the anchors it follows, like a later liveFeed
	// page.
	costLiveUpdates = costLivePage
)

// complexityRoot gives the fields with a cost of their own their weight
// (see the cost constants); everything else costs 1 plus its children.
func complexityRoot() graph.ComplexityRoot {
	var c graph.ComplexityRoot
	c.Query.FollowingFeed = func(child int, first *int, after *string, last *int, before *string) int {
		base := costFollowingFeed
		if (after != nil && *after != "") || (before != nil && *before != "") {
			base = costFollowingFeedCursor
		}
		return base + child*pageSize(first, last)
	}
	c.Query.LiveFeed = func(child int, first *int, after *string) int {
		base := costLiveFirstPage
		if after != nil && *after != "" {
			base = costLivePage
		}
		return base + child*pageSize(first, nil)
	}
	c.Subscription.FollowingFeedUpdates = func(child int, _ *string) int { return costFollowingUpdates + child }
	c.Subscription.LiveFeedUpdates = func(child int) int { return costLiveUpdates + child }
	write := func(child int, _ string) int { return costWrite + child }
	small := func(child int, _ string) int { return costSmallWrite + child }
	c.Mutation.PublishPost = func(child int, _ graph.PublishPostInput) int { return costWrite + child }
	c.Mutation.DeletePost = write
	c.Mutation.FollowUser = write
	c.Mutation.UnfollowUser = write
	c.Mutation.EndLive = write
	c.Mutation.LikePost = small
	c.Mutation.UnlikePost = small
	c.Mutation.StartLive = small
	c.Mutation.ScheduleLive = func(child int, _ graph.ScheduleLiveInput) int { return costSmallWrite + child }
	c.Mutation.BlockUser = write
	c.Mutation.UnblockUser = write
	c.Mutation.MuteUser = func(child int, _ string, _ *int) int { return costWrite + child }
	c.Mutation.UnmuteUser = write
	c.Mutation.HideMyPostsFrom = write
	c.Mutation.UnhideMyPostsFrom = write
	c.Mutation.Repost = write
	c.Mutation.UndoRepost = write
	c.Mutation.Report = func(child int, _ graph.ReportInput) int { return costSmallWrite + child }
	userList := func(child int, first *int, _ *string) int { return costUserList + child*pageSize(first, nil) }
	c.Query.BlockedUsers = userList
	c.Query.MutedUsers = userList
	c.Query.UsersHiddenFromMyPosts = userList
	// A post's replies: one read of its set of replies per page, like a
	// user list.
	c.Post.Replies = func(child int, first *int, _ *string) int { return costUserList + child*pageSize(first, nil) }
	// A post's media come with the post hash, at most 4 items of scalars:
	// however many of their fields are asked for, they cost the field.
	c.Post.Media = func(int) int { return 1 }
	c.Mutation.AddKeywordFilter = func(child int, _ graph.AddKeywordFilterInput) int { return costSmallWrite + child }
	c.Mutation.RemoveKeywordFilter = small
	c.Query.KeywordFilters = func(child int) int { return costUserList + child }
	list := func(child int, first *int, _ *string) int { return costList + child*pageSize(first, nil) }
	c.Query.Favorites = list
	c.User.Followers = list
	c.User.Following = list
	c.User.Posts = func(child int, first *int, after *string, _ *bool) int { return list(child, first, after) }
	c.Mutation.FavoritePost = small
	c.Mutation.UnfavoritePost = small
	return c
}

func pageSize(first, last *int) int {
	switch {
	case first != nil && *first > 0:
		return *first
	case last != nil && *last > 0:
		return *last
	}
	return feedcore.DefaultPageSize // a connection that gives neither first nor last
}
