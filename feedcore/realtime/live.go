package realtime

import (
	"context"
	"slices"
	"sync"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/ratelimit"
	"github.com/feedd/feedd/feedcore/store"
)

// A live feed subscription hears, on the channels of the anchors its
// viewer follows (and those whose follow has yet to settle), that a
// session changed; it reads the session and sends it, in the state it is
// in now, when the viewer's live feed would show it (live's
// ShownSessions: the rule of every live page) and its state is not the
// one last sent. A session cancelled before it started arrives as
// REPLAY without a start time: it is gone from every live feed.

// maxRemembered bounds the sessions a live subscription remembers the
// state it sent of; past it, it starts over (a session may then be sent
// again in the state it was sent in).
const maxRemembered = 1024

// liveSub is one liveFeedUpdates subscription.
type liveSub struct {
	h      *hub
	viewer store.ID
	ctx    context.Context // the subscriber's, without its rate charge
	out    chan LiveUpdate

	// anchors are the anchors whose channels it follows; under the
	// hub's lock.
	anchors []store.ID

	mu        sync.Mutex
	closed    bool
	scheduled bool
	queue     []store.ID // sessions heard of, not yet read
	refresh   bool       // the viewer's follows changed: read them again
	catchup   bool       // its channels were (re)subscribed: read every queued session
	last      map[store.ID]core.LiveState
}

// LiveFeedUpdates subscribes viewer to the sessions of the anchors it
// follows. The channel closes when ctx ends or the subscriber is dropped:
// one that lets Options.LiveQueue updates wait is.
func (s *Service) LiveFeedUpdates(ctx context.Context, viewer store.ID) (_ <-chan LiveUpdate, err error) {
	defer store.Wrap(&err, "subscribe user %d to its live feed's updates", viewer)
	h, err := s.joinAs(viewer)
	if err != nil {
		return nil, err
	}
	l := &liveSub{h: h, viewer: viewer, ctx: ratelimit.WithoutCharge(ctx), out: make(chan LiveUpdate, h.opts.LiveQueue),
		last: map[store.ID]core.LiveState{}}
	_, pending, anchors, err := s.Followed(ctx, viewer)
	if err != nil {
		h.leave(viewer)
		return nil, err
	}
	if err := h.addLive(l, union(anchors, pending)); err != nil {
		h.leave(viewer)
		return nil, err
	}
	s.stats.subscriptions.Add(1)
	context.AfterFunc(ctx, l.close)
	return l.out, nil
}

// notice takes a notice for l: a session of an anchor it follows changed,
// or its viewer's follows did. Sessions heard of wait in a queue as long
// as the channel's: one that overflows drops the subscriber.
func (l *liveSub) notice(n core.Notice) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return
	}
	switch n.Kind {
	case core.NoticeLive:
		if len(l.queue) >= cap(l.out) {
			l.dropLocked(len(l.queue) + 1)
			return
		}
		l.queue = append(l.queue, n.Item)
	case core.NoticeViews, core.NoticeAnchors:
		l.refresh = true
	default:
		return
	}
	l.kick()
}

func (l *liveSub) catchUp() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.closed {
		l.catchup = true
		l.kick()
	}
}

// kick schedules a run unless one is waiting. Under l.mu.
func (l *liveSub) kick() {
	if !l.scheduled {
		l.scheduled = true
		l.h.run.after(l.ctx, 0, l.run)
	}
}

// run reads the sessions heard of and sends those the viewer is shown in
// a state not sent yet, in the order heard.
func (l *liveSub) run() {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return
	}
	queue, refresh, catchup := l.queue, l.refresh, l.catchup
	l.queue, l.refresh, l.catchup = nil, false, false
	var known []store.ID
	if catchup {
		for id, st := range l.last {
			if st != core.StateReplay {
				known = append(known, id)
			}
		}
	}
	l.mu.Unlock()

	shown, err := l.read(queue, known, refresh, catchup)
	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil && l.ctx.Err() == nil {
		l.h.s.stats.recountErrors.Add(1)
		l.queue = append(queue, l.queue...)
		l.refresh, l.catchup = l.refresh || refresh, l.catchup || catchup
	}
	for i, ls := range shown {
		if l.closed {
			break
		}
		if ls == nil || l.last[ls.ID] == ls.State() {
			continue
		}
		select {
		case l.out <- LiveUpdate{Session: ls, State: ls.State()}:
			l.h.s.stats.sent.Add(1)
		default:
			l.dropLocked(len(shown) - i)
			continue
		}
		if len(l.last) >= maxRemembered {
			clear(l.last)
		}
		l.last[ls.ID] = ls.State()
	}
	if !l.closed && l.ctx.Err() == nil && (len(l.queue) > 0 || l.refresh || l.catchup) {
		l.h.run.after(l.ctx, 0, l.run)
		return
	}
	l.scheduled = false
}

// read reads the viewer's follows again when refresh asks, the sessions
// queue (and known, and with catchup those queued by the anchors it
// follows) and returns them, nil where the viewer is not shown one.
func (l *liveSub) read(queue, known []store.ID, refresh, catchup bool) ([]*core.LiveSession, error) {
	s := l.h.s
	var added []store.ID
	if refresh {
		_, pending, anchors, err := s.Followed(l.ctx, l.viewer)
		if err != nil {
			return nil, err
		}
		added = l.h.rerouteLive(l, union(anchors, pending))
	}
	ids := dedupe(queue)
	if catchup || len(added) > 0 {
		// Caught up: the sessions of every anchor, after its channels
		// were (re)subscribed; of the anchors just added, whose notices
		// may have come before their route.
		if catchup {
			l.h.mu.Lock()
			added = slices.Clone(l.anchors)
			l.h.mu.Unlock()
		}
		queued, err := s.QueuedSessions(l.ctx, added)
		if err != nil {
			return nil, err
		}
		ids = dedupe(append(append(ids, known...), queued...))
	}
	if len(ids) == 0 {
		return nil, nil
	}
	ls, err := s.LiveSessions(l.ctx, ids)
	if err != nil {
		return nil, err
	}
	return s.ShownSessions(l.ctx, l.viewer, ls)
}

// dropLocked drops a subscriber too slow for its queue: lost updates are
// counted, its channel closes. Under l.mu.
func (l *liveSub) dropLocked(lost int) {
	l.h.s.stats.dropped.Add(int64(lost))
	l.h.s.stats.slowDropped.Add(1)
	l.closeLocked()
	go l.h.removeLive(l) // takes the hub's lock, which routing may hold while waiting for l.mu
}

func (l *liveSub) close() {
	l.mu.Lock()
	closing := !l.closed
	l.closeLocked()
	l.mu.Unlock()
	if closing {
		l.h.removeLive(l)
	}
}

func (l *liveSub) closeLocked() {
	if l.closed {
		return
	}
	l.closed = true
	close(l.out)
	l.h.s.stats.subscriptions.Add(-1)
}

// routedOn reports whether l follows channel ch as an anchor's. Under the
// hub's lock.
func (l *liveSub) routedOn(k store.Keys, ch string) bool {
	for _, a := range l.anchors {
		if k.AnchorChannel(store.RealtimeBucket(a)) == ch {
			return true
		}
	}
	return false
}
