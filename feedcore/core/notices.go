package core

import (
	"context"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// Notices tell the realtime layer (package realtime, above every feature)
// what changed, so the replicas that serve subscriptions recount the
// viewers concerned. The layers below only ask Presence and call Notify;
// realtime installs the Notifier when the service is made (SetNotifier),
// as features register their journal repairs: no feature calls up.
// Without a Notifier (Options.Notices NoticesOff: import, export,
// rebuild, benchmarks of the fan-out alone) both cost nothing.

// NoticeMode says how this process's notices travel (Options.Notices).
type NoticeMode uint8

const (
	// NoticesAuto: by sharded pub/sub when the server has it, else
	// inside this process (the embedded store has none). The first
	// notice asks the server once.
	NoticesAuto NoticeMode = iota
	// NoticesRedis: by sharded pub/sub (SPUBLISH, SSUBSCRIBE), between
	// every replica on the same Redis or Redis Cluster.
	NoticesRedis
	// NoticesLocal: inside this process only (the embedded store, where
	// one process is the whole deployment).
	NoticesLocal
	// NoticesOff: no notices, and the fan-out asks no presence.
	NoticesOff
)

// NoticeKind is what a notice says changed.
type NoticeKind uint8

const (
	// NoticePost: a post (or a repost) reached the Readers' feeds, or,
	// with Merged, the feeds of the Author's readers merged on read.
	NoticePost NoticeKind = iota + 1
	// NoticeRemoval: the post Item left those feeds (deleted, taken
	// down); Item 0 when what left is no post of its own (an undone
	// repost).
	NoticeRemoval
	// NoticeViews: what the Readers see changed otherwise (a follow, a
	// block, a mute, a hide, a keyword filter): recount them, and read
	// their follows again.
	NoticeViews
	// NoticeLive: the Author's live session Item was scheduled, started
	// or ended.
	NoticeLive
	// NoticeSuspension: the Author's account was suspended, unsuspended
	// or deleted: feeds lost or regained its posts, with no fan-out to
	// tell their readers.
	NoticeSuspension
	// NoticeAnchors: the Readers follow the Author as an anchor from now
	// on (its first live session): their live subscriptions follow its
	// channel.
	NoticeAnchors
)

// Notice is one change. Readers are told on their own bucket's channel
// (the fan-out names only those present); Merged, live and suspension
// notices travel once on the author's, anchor's or moderation channel.
type Notice struct {
	Kind    NoticeKind
	Author  store.ID
	Item    store.ID
	Readers []store.ID
	// Merged: the Author's readers merged on read (its big-V followers)
	// are told too.
	Merged bool
}

// Notifier publishes notices (package realtime implements it).
type Notifier interface {
	// Presence returns the commands that ask which of members (readers,
	// as store.Member spells them) have a subscription open, to send in
	// the pipeline that writes their inboxes, and the function that reads
	// those commands' replies into the present readers.
	Presence(members []string) ([]rueidis.Completed, func([]rueidis.RedisResult) []store.ID)
	// Notify publishes ns, in one round trip. A notice is a hint: a
	// failure is counted, never returned, and changes nothing already
	// written.
	Notify(ctx context.Context, ns ...Notice)
	// NoticeCmds is Notify riding a pipeline the caller sends anyway:
	// the commands that publish ns (none when notices travel inside the
	// process: then they are delivered at once), and the function the
	// caller hands their replies to once it has them.
	NoticeCmds(ns ...Notice) ([]rueidis.Completed, func([]rueidis.RedisResult))
}

// SetNotifier installs n: the fan-out asks it for presence and every
// change is told to it. Install it before the workers start.
func (s *Service) SetNotifier(n Notifier) { s.notifier = n }

// Notify tells the notifier of ns, if one is installed.
func (s *Service) Notify(ctx context.Context, ns ...Notice) {
	if s.notifier != nil && len(ns) > 0 {
		s.notifier.Notify(ctx, ns...)
	}
}

// NoticeCmds is the installed notifier's NoticeCmds: publishes of ns to
// send in the caller's pipeline after what they tell of, and what to do
// with their replies. None without a notifier; done is never nil.
func (s *Service) NoticeCmds(ns ...Notice) (cmds []rueidis.Completed, done func([]rueidis.RedisResult)) {
	if s.notifier == nil || len(ns) == 0 {
		return nil, func([]rueidis.RedisResult) {}
	}
	return s.notifier.NoticeCmds(ns...)
}

// PresenceCmds is the installed notifier's Presence of members; nil
// without one.
func (s *Service) PresenceCmds(members []string) ([]rueidis.Completed, func([]rueidis.RedisResult) []store.ID) {
	if s.notifier == nil || len(members) == 0 {
		return nil, nil
	}
	return s.notifier.Presence(members)
}
