package core

import "github.com/feedd/feedd/feedcore/store"

// Timeline names the keys of one kind of timeline. Posts and live replays
// run through the same hybrid machinery: an outbox per author, an inbox
// per reader with its horizon hash, the same fan-out and the same read.
type Timeline struct {
	Inbox, Outbox, Horizon func(store.ID) string
	// Followees is the zset of a reader's accounts whose outboxes feed the
	// timeline: the following set for posts, the followed anchors for
	// replays (only anchors have replays or queues).
	Followees func(store.ID) string
	// EagerFollowees: a read loads Followees in its first round trip
	// (withFollowees). Only a first live page does: it may file the
	// followed anchors' sessions in a new snapshot. Other reads load it
	// only below the inbox horizon.
	EagerFollowees bool
}

func (tl Timeline) WithFollowees() Timeline {
	tl.EagerFollowees = true
	return tl
}

func (s *Service) PostsTL() Timeline {
	return Timeline{Inbox: s.Keys.Inbox, Outbox: s.Keys.Outbox, Horizon: s.Keys.Reader, Followees: s.Keys.Following}
}

func (s *Service) ReplaysTL() Timeline {
	return Timeline{Inbox: s.Keys.ReplayInbox, Outbox: s.Keys.ReplayOutbox, Horizon: s.Keys.ReplayReader, Followees: s.Keys.FollowedAnchors}
}

// Timelines are every kind, for follows, unfollows and upgrades.
func (s *Service) Timelines() []Timeline { return []Timeline{s.PostsTL(), s.ReplaysTL()} }
