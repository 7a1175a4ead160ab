package main

import (
	"flag"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server"
)

// streamFlags configure subscriptions: the realtime layer's options
// (feedcore.RealtimeOptions) and the bounds of the WebSocket connections
// and event streams that carry them (server.StreamLimits). All are per
// replica.
type streamFlags struct {
	minInterval    time.Duration
	maxPerViewer   int
	maxConnections int
	initTimeout    time.Duration
	maxMessage     int64
	ping           time.Duration
	writeTimeout   time.Duration
}

// defaultSubscriptionMinInterval is --subscription-min-interval's default.
const defaultSubscriptionMinInterval = time.Second

// defaultMaxSubscriptionsPerViewer is --max-subscriptions-per-viewer's.
const defaultMaxSubscriptionsPerViewer = 10

func addStreamFlags(fs *flag.FlagSet) *streamFlags {
	s := &streamFlags{}
	fs.DurationVar(&s.minInterval, "subscription-min-interval", defaultSubscriptionMinInterval, "at most one followingFeedUpdates update per subscription in this long; notices meanwhile are folded into the next")
	fs.IntVar(&s.maxPerViewer, "max-subscriptions-per-viewer", defaultMaxSubscriptionsPerViewer, "most subscriptions one viewer may hold open on this replica; one more is refused with RATE_LIMITED")
	fs.IntVar(&s.maxConnections, "max-connections", server.DefaultMaxConnections, "most WebSocket connections and event streams (subscriptions' transports) open on this replica; one more is refused, 503 UNAVAILABLE with Retry-After")
	fs.DurationVar(&s.initTimeout, "ws-init-timeout", server.DefaultInitTimeout, "how long a WebSocket may take to send connection_init before it is closed with 4408")
	fs.Int64Var(&s.maxMessage, "ws-max-message", 0, "largest message, in bytes, a client may send over a WebSocket; a larger one closes it with 1009 (default: --max-body)")
	fs.DurationVar(&s.ping, "stream-ping-interval", server.DefaultPingInterval, "how often a WebSocket is pinged (and an event stream sent a keep-alive comment); a graphql-transport-ws client that has not answered two intervals later is dropped")
	fs.DurationVar(&s.writeTimeout, "stream-write-timeout", server.DefaultStreamWriteTimeout, "longest one write to a WebSocket or event stream may take; a client slower than this (it stopped reading) is dropped")
	return s
}

// check refuses the first broken flag value, in the order listed.
func (s *streamFlags) check() error {
	return firstBroken(
		flagRule{s.minInterval <= 0, "--subscription-min-interval must be positive"},
		flagRule{s.maxPerViewer < 1, "--max-subscriptions-per-viewer must be at least 1"},
		flagRule{s.maxConnections < 1, "--max-connections must be at least 1"},
		flagRule{s.initTimeout <= 0, "--ws-init-timeout must be positive"},
		flagRule{s.maxMessage < 0, "--ws-max-message must be 0 (--max-body) or more"},
		flagRule{s.ping <= 0, "--stream-ping-interval must be positive"},
		flagRule{s.writeTimeout <= 0, "--stream-write-timeout must be positive"},
	)
}

// limits are the streams' bounds.
func (s *streamFlags) limits() server.StreamLimits {
	return server.StreamLimits{MaxConnections: s.maxConnections, InitTimeout: s.initTimeout,
		MaxMessageBytes: s.maxMessage, PingInterval: s.ping, WriteTimeout: s.writeTimeout}
}

// realtime are the realtime layer's options.
func (s *streamFlags) realtime() feedcore.RealtimeOptions {
	return feedcore.RealtimeOptions{MinInterval: s.minInterval, MaxPerViewer: s.maxPerViewer}
}
