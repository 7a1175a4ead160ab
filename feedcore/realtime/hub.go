package realtime

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// hub is a replica's side of realtime while it runs (Start): its local
// subscribers, by viewer and by the authors and anchors whose channels
// they follow; how many of them need each channel, so the replica holds
// one Redis subscription per channel and drops it with its last local
// subscriber; and the routing of every notice heard to the subscribers
// it concerns.
type hub struct {
	s    *Service
	opts Options
	ctx  context.Context // the replica's
	l    listener
	run  *runner

	mu      sync.Mutex
	closed  bool
	viewers map[store.ID]*viewerSubs
	authors map[store.ID]map[*followSub]struct{}
	anchors map[store.ID]map[*liveSub]struct{}
	refs    map[string]int
	// present is how many following subscriptions each present viewer
	// has here, by bucket: the presence marks this replica renews.
	present [store.PresenceBuckets]map[store.ID]int
	// lapse is the lapse time (ms) this replica last wrote for each
	// bucket's marks; a mark it takes back must still hold it.
	lapse [store.PresenceBuckets]int64
}

// viewerSubs are one viewer's subscriptions on this replica, and how
// many more are being made (joining: counted against the limit already).
type viewerSubs struct {
	follows map[*followSub]struct{}
	lives   map[*liveSub]struct{}
	joining int
}

func (v *viewerSubs) count() int { return len(v.follows) + len(v.lives) + v.joining }

func (v *viewerSubs) has(f *followSub) bool {
	if v == nil {
		return false
	}
	_, ok := v.follows[f]
	return ok
}

func (v *viewerSubs) hasLive(l *liveSub) bool {
	if v == nil {
		return false
	}
	_, ok := v.lives[l]
	return ok
}

func newHub(ctx context.Context, s *Service, opts Options) *hub {
	h := &hub{s: s, opts: opts, ctx: ctx, run: newRunner(ctx, opts.Recounts),
		viewers: map[store.ID]*viewerSubs{}, authors: map[store.ID]map[*followSub]struct{}{},
		anchors: map[store.ID]map[*liveSub]struct{}{}, refs: map[string]int{}}
	for b := range h.present {
		h.present[b] = map[store.ID]int{}
	}
	return h
}

// join counts a new subscription of viewer, refusing one past
// Options.MaxPerViewer; add registers it once made.
func (h *hub) join(viewer store.ID) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return errNotStarted
	}
	vs := h.viewers[viewer]
	if vs == nil {
		vs = &viewerSubs{follows: map[*followSub]struct{}{}, lives: map[*liveSub]struct{}{}}
		h.viewers[viewer] = vs
	}
	if vs.count() >= h.opts.MaxPerViewer {
		h.dropIfEmpty(viewer)
		return ErrTooManySubscriptions
	}
	vs.joining++ // until the subscription is added, or given up (leave)
	return nil
}

// leave gives up a place join took.
func (h *hub) leave(viewer store.ID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if vs := h.viewers[viewer]; vs != nil {
		vs.joining--
		h.dropIfEmpty(viewer)
	}
}

func (h *hub) dropIfEmpty(viewer store.ID) {
	if vs := h.viewers[viewer]; vs != nil && vs.count() == 0 {
		delete(h.viewers, viewer)
	}
}

// addFollow registers f in the place join took, following the channels
// of its viewer and of the authors it routes; it reports whether f is
// its viewer's first following subscription here (to mark presence).
func (h *hub) addFollow(f *followSub, authors []store.ID) (first bool, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	vs := h.viewers[f.viewer]
	if h.closed || vs == nil {
		return false, errNotStarted
	}
	vs.joining--
	vs.follows[f] = struct{}{}
	h.acquire(h.s.Keys.ViewerChannel(store.RealtimeBucket(f.viewer)))
	h.routeFollow(f, nil, authors)
	f.authors = authors
	b := store.PresenceBucket(f.viewer)
	h.present[b][f.viewer]++
	return h.present[b][f.viewer] == 1, nil
}

// addLive registers l in the place join took.
func (h *hub) addLive(l *liveSub, anchors []store.ID) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	vs := h.viewers[l.viewer]
	if h.closed || vs == nil {
		return errNotStarted
	}
	vs.joining--
	vs.lives[l] = struct{}{}
	h.acquire(h.s.Keys.ViewerChannel(store.RealtimeBucket(l.viewer)))
	h.routeLive(l, nil, anchors)
	l.anchors = anchors
	return nil
}

// removeFollow unregisters f; it reports whether f was its viewer's last
// following subscription here (to take its presence back).
func (h *hub) removeFollow(f *followSub) (last bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	vs := h.viewers[f.viewer]
	if !vs.has(f) {
		return false
	}
	delete(vs.follows, f)
	h.dropIfEmpty(f.viewer)
	h.release(h.s.Keys.ViewerChannel(store.RealtimeBucket(f.viewer)))
	h.routeFollow(f, f.authors, nil)
	f.authors = nil
	b := store.PresenceBucket(f.viewer)
	if h.present[b][f.viewer]--; h.present[b][f.viewer] > 0 {
		return false
	}
	delete(h.present[b], f.viewer)
	return !h.closed // closing takes every mark back at once
}

func (h *hub) removeLive(l *liveSub) {
	h.mu.Lock()
	defer h.mu.Unlock()
	vs := h.viewers[l.viewer]
	if !vs.hasLive(l) {
		return
	}
	delete(vs.lives, l)
	h.dropIfEmpty(l.viewer)
	h.release(h.s.Keys.ViewerChannel(store.RealtimeBucket(l.viewer)))
	h.routeLive(l, l.anchors, nil)
	l.anchors = nil
}

// rerouteFollow makes f follow authors now (its big-V followees and
// pending follows, read again after its viewer's follows changed).
func (h *hub) rerouteFollow(f *followSub, authors []store.ID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.viewers[f.viewer].has(f) {
		return // closed meanwhile
	}
	h.routeFollow(f, f.authors, authors)
	f.authors = authors
}

// rerouteLive makes l follow anchors now, and returns those it did not
// follow before.
func (h *hub) rerouteLive(l *liveSub, anchors []store.ID) (added []store.ID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.viewers[l.viewer].hasLive(l) {
		return nil
	}
	for _, a := range anchors {
		if !slices.Contains(l.anchors, a) {
			added = append(added, a)
		}
	}
	h.routeLive(l, l.anchors, anchors)
	l.anchors = anchors
	return added
}

// routeFollow moves f's routes from the authors in old to those in new,
// and the channel counts with them.
func (h *hub) routeFollow(f *followSub, old, new []store.ID) {
	reroute(h, h.authors, f, old, new, h.s.Keys.AuthorChannel)
}

// routeLive moves l's routes from the anchors in old to those in new.
func (h *hub) routeLive(l *liveSub, old, new []store.ID) {
	reroute(h, h.anchors, l, old, new, h.s.Keys.AnchorChannel)
}

// reroute moves sub's routes in routes (by author or anchor) from the
// ids in old to those in new, acquiring and releasing the channels of
// their buckets (channel). Under the hub's lock.
func reroute[S comparable](h *hub, routes map[store.ID]map[S]struct{}, sub S, old, new []store.ID, channel func(int) string) {
	for _, a := range old {
		if slices.Contains(new, a) {
			continue
		}
		delete(routes[a], sub)
		if len(routes[a]) == 0 {
			delete(routes, a)
		}
		h.release(channel(store.RealtimeBucket(a)))
	}
	for _, a := range new {
		if slices.Contains(old, a) {
			continue
		}
		if routes[a] == nil {
			routes[a] = map[S]struct{}{}
		}
		routes[a][sub] = struct{}{}
		h.acquire(channel(store.RealtimeBucket(a)))
	}
}

// acquire and release count a channel's local needs; the first subscribes
// it, the last unsubscribes it.
func (h *hub) acquire(ch string) {
	if h.refs[ch]++; h.refs[ch] == 1 {
		h.l.listen(ch)
	}
}

func (h *hub) release(ch string) {
	if h.refs[ch]--; h.refs[ch] > 0 {
		return
	}
	delete(h.refs, ch)
	h.l.unlisten(ch)
}

// deliver routes a notice heard on any channel: to the subscribers of
// the viewers it names (on their bucket's channel), of the big-V author
// it is from (merged on read), of the anchor whose session changed; a
// suspension to every following subscriber. Routing never blocks: each subscriber only schedules its work.
func (h *hub) deliver(payload string) {
	n, err := decode(payload)
	if err != nil {
		h.s.stats.badNotices.Add(1)
		return
	}
	h.s.stats.received.Add(1)
	for _, s := range h.concerned(n) {
		s.notice(n)
	}
}

// concerned are the subscriptions n concerns.
func (h *hub) concerned(n core.Notice) []subscriber {
	if n.Kind == core.NoticeSuspension {
		// The account's posts may be in any feed, reposted by a followee:
		// every following subscription recounts (suspensions are rare).
		return h.subscribers(func(_ store.ID, s subscriber) bool { _, ok := s.(*followSub); return ok })
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []subscriber
	switch {
	case len(n.Readers) > 0:
		for _, r := range n.Readers {
			vs := h.viewers[r]
			if vs == nil {
				continue
			}
			if n.Kind != core.NoticeAnchors {
				for f := range vs.follows {
					out = append(out, f)
				}
			}
			if n.Kind == core.NoticeViews || n.Kind == core.NoticeAnchors {
				for l := range vs.lives {
					out = append(out, l)
				}
			}
		}
	case n.Kind == core.NoticeLive:
		for l := range h.anchors[n.Author] {
			out = append(out, l)
		}
	default:
		for f := range h.authors[n.Author] {
			out = append(out, f)
		}
	}
	return out
}

// subscriber is a following or a live subscription, as the hub sees it.
type subscriber interface {
	notice(core.Notice)
	catchUp()
	close()
	routedOn(k store.Keys, ch string) bool
}

// subscribers are the subscriptions keep keeps (it is told each one's
// viewer), collected under the hub's lock to be acted on outside it.
func (h *hub) subscribers(keep func(viewer store.ID, s subscriber) bool) []subscriber {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []subscriber
	for v, vs := range h.viewers {
		for f := range vs.follows {
			if keep(v, f) {
				out = append(out, f)
			}
		}
		for l := range vs.lives {
			if keep(v, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// confirmed catches up the subscribers channel ch serves, once its
// subscription is confirmed (again): whatever was published while it was
// down or not yet there, a recount finds.
func (h *hub) confirmed(ch string) {
	for _, s := range h.subscribers(func(v store.ID, s subscriber) bool {
		return h.s.Keys.ViewerChannel(store.RealtimeBucket(v)) == ch || s.routedOn(h.s.Keys, ch)
	}) {
		s.catchUp()
	}
}

// close ends every subscription (their channels close) and stops
// listening; the replica is stopping.
func (h *hub) close() {
	h.mu.Lock()
	h.closed = true
	h.unmarkAll()
	h.mu.Unlock()
	for _, s := range h.subscribers(func(store.ID, subscriber) bool { return true }) {
		s.close()
	}
	h.run.wait()
	h.l.stop()
}

// runner runs subscribers' work (recounts, session reads) on goroutines
// of their own, at most Options.Recounts at once, so a notice that
// concerns many subscribers (a big-V post, a reconnect's catch-up) queues
// their reads rather than sending them all at once.
type runner struct {
	ctx    context.Context
	sem    chan struct{}
	mu     sync.Mutex
	halted bool // wait ran: nothing more is scheduled
	wg     sync.WaitGroup
}

func newRunner(ctx context.Context, n int) *runner {
	return &runner{ctx: ctx, sem: make(chan struct{}, n)}
}

// after runs f after d, once a place is free; not at all once the
// replica stops or ctx (the subscription's) ends.
func (r *runner) after(ctx context.Context, d time.Duration, f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.halted {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		if d > 0 {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return
			case <-r.ctx.Done():
				return
			}
		}
		select {
		case r.sem <- struct{}{}:
		case <-ctx.Done():
			return
		case <-r.ctx.Done():
			return
		}
		defer func() { <-r.sem }()
		f()
	}()
}

// wait waits for the work scheduled (the replica's context has ended, so
// none waits long); nothing is scheduled after it.
func (r *runner) wait() {
	r.mu.Lock()
	r.halted = true
	r.mu.Unlock()
	r.wg.Wait()
}
