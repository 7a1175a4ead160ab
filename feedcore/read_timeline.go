package feedcore

import "github.com/feedd/feedd/feedcore/store"

// timeline names the keys of one kind of timeline. Posts and live replays
// run through the same hybrid machinery: an outbox per author, an inbox
// per reader with its horizon hash, the same fan-out and the same read.
type timeline struct {
	inbox, outbox, horizon func(store.ID) string
	// eagerFollowees: a read loads the following set in its first round
	// trip (withFollowees). Only a first live page does: it may file the
	// followed anchors' sessions in a new snapshot. Other reads load it
	// only below the inbox horizon.
	eagerFollowees bool
}

func (tl timeline) withFollowees() timeline {
	tl.eagerFollowees = true
	return tl
}

func (s *Service) postsTL() timeline {
	return timeline{inbox: s.Keys.Inbox, outbox: s.Keys.Outbox, horizon: s.Keys.Reader}
}

func (s *Service) replaysTL() timeline {
	return timeline{inbox: s.Keys.ReplayInbox, outbox: s.Keys.ReplayOutbox, horizon: s.Keys.ReplayReader}
}

// timelines are every kind, for follows, unfollows and upgrades.
func (s *Service) timelines() []timeline { return []timeline{s.postsTL(), s.replaysTL()} }
