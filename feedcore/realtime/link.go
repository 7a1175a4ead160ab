package realtime

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/feedcore/core"
)

// listener holds the channel subscriptions a hub asks for, each once
// however many local subscribers need it (the hub counts them).
type listener interface {
	listen(channel string)
	unlisten(channel string)
	// down says which subscriptions are down now, nil when none is.
	down() error
	// stop ends every subscription and waits for them to end.
	stop()
}

// localListener hears the process's own bus (the embedded store): a
// subscription is there at once and is never lost.
type localListener struct {
	key    string
	h      *hub
	stats  *counters
	mu     sync.Mutex
	on     map[string]bool
	halted bool // stop ran
}

func (l *localListener) listen(ch string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.halted || l.on[ch] {
		return
	}
	l.on[ch] = true
	localListen(l.key, l.h, ch)
	l.stats.channels.Add(1)
}

func (l *localListener) unlisten(ch string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.on[ch] {
		return
	}
	delete(l.on, ch)
	localUnlisten(l.key, l.h, ch)
	l.stats.channels.Add(-1)
}

func (l *localListener) down() error { return nil }

func (l *localListener) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.halted = true
	for ch := range l.on {
		delete(l.on, ch)
		localUnlisten(l.key, l.h, ch)
		l.stats.channels.Add(-1)
	}
}

// redisListener holds one SSUBSCRIBE per channel, each looped by a
// receiver of its own: rueidis's Receive returns when the link drops (a
// reconnect, a failover, a slot that moved), and the receiver backs off
// and subscribes again. Every confirmation (rueidis.WithOnSubscriptionHook)
// after the first is a resubscription: it is counted, and the hub
// recounts every subscriber the channel serves, which catches up with
// whatever was published in the gap. Between a loss (the receive's
// return, rueidis.WithOnReceiveReturnHook) and the next confirmation the
// subscription is down, and down says so (RealtimeReady, /readyz).
type redisListener struct {
	client rueidis.Client
	h      *hub
	ctx    context.Context // the replica's: its end stops every receiver
	stats  *counters
	mu     sync.Mutex
	chans  map[string]*receiver
	// stopping are receivers being stopped, which a new subscription of
	// their channel waits for.
	stopping map[string]*receiver
	halted   bool // stop ran: no subscription starts or ends any more
	wg       sync.WaitGroup
}

// receiver is one channel's subscription.
type receiver struct {
	ch     string
	cancel context.CancelFunc
	done   chan struct{}
	// Under the listener's lock: confirmed now, ever confirmed, since
	// when it has not been (asked for, or lost), and being stopped (its
	// end is no loss).
	confirmed, ever, stopping bool
	since                     time.Time
}

// confirmGrace is how long a subscription may wait for its first
// confirmation before down counts it.
const confirmGrace = 2 * time.Second

// Backoff between attempts to subscribe again.
const (
	minBackoff = 50 * time.Millisecond
	maxBackoff = 2 * time.Second
)

func newRedisListener(ctx context.Context, client rueidis.Client, h *hub, st *counters) *redisListener {
	return &redisListener{client: client, h: h, ctx: ctx, stats: st, chans: map[string]*receiver{}, stopping: map[string]*receiver{}}
}

func (l *redisListener) listen(ch string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.chans[ch] != nil || l.halted || l.ctx.Err() != nil {
		return
	}
	ctx, cancel := context.WithCancel(l.ctx)
	r := &receiver{ch: ch, cancel: cancel, done: make(chan struct{}), since: time.Now()}
	l.chans[ch] = r
	prev := l.stopping[ch]
	l.wg.Add(1)
	go l.run(ctx, r, prev)
}

// unlisten stops ch's subscription: SUNSUBSCRIBE first, so the server
// stops sending it, then the receiver's end. After stop, nothing: stop
// stopped them all.
func (l *redisListener) unlisten(ch string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.halted {
		l.drop(ch)
	}
}

// drop stops ch's subscription on a goroutine of its own, counted before
// the lock is let go (stop waits for it). Under l.mu.
func (l *redisListener) drop(ch string) {
	r := l.chans[ch]
	if r == nil {
		return
	}
	delete(l.chans, ch)
	l.stopping[ch] = r
	r.stopping = true
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(l.ctx), confirmGrace)
		_ = l.client.Do(ctx, l.client.B().Sunsubscribe().Channel(ch).Build()).Error()
		cancel()
		r.cancel()
		<-r.done
		l.mu.Lock()
		if l.stopping[ch] == r {
			delete(l.stopping, ch)
		}
		l.mu.Unlock()
	}()
}

// run receives ch until ctx ends, subscribing again whenever the receive
// returns. prev, when set, is the channel's subscription being stopped:
// its SUNSUBSCRIBE must not cancel this one.
func (l *redisListener) run(ctx context.Context, r *receiver, prev *receiver) {
	defer l.wg.Done()
	defer close(r.done)
	if prev != nil {
		select {
		case <-prev.done:
		case <-ctx.Done():
			return
		}
	}
	backoff := minBackoff
	for !l.stopped(r) {
		hooked := rueidis.WithOnSubscriptionHook(ctx, func(s rueidis.PubSubSubscription) {
			if s.Channel == r.ch && s.Kind == "ssubscribe" {
				l.up(r)
			}
		})
		hooked = rueidis.WithOnReceiveReturnHook(hooked, func(err error, _ rueidis.CommandClient) error {
			l.lost(r)
			return err
		})
		err := l.client.Receive(hooked, l.client.B().Ssubscribe().Channel(r.ch).Build(), func(m rueidis.PubSubMessage) {
			l.h.deliver(m.Message)
		})
		if l.lost(r) {
			return
		}
		if err == nil {
			// Unsubscribed by the server (its slot moved) or by a
			// SUNSUBSCRIBE racing ours: subscribe again at once.
			backoff = minBackoff
			continue
		}
		if !core.SleepCtx(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// up marks r confirmed; the hub catches its subscribers up. It runs in
// rueidis's pipeline goroutine, so it only counts and schedules.
func (l *redisListener) up(r *receiver) {
	l.mu.Lock()
	again := r.ever
	fresh := !r.confirmed
	r.confirmed, r.ever = true, true
	l.mu.Unlock()
	if !fresh {
		return
	}
	l.stats.channels.Add(1)
	if again {
		l.stats.resubscribes.Add(1)
	}
	l.h.confirmed(r.ch)
}

// stopped reports whether r is being stopped.
func (l *redisListener) stopped(r *receiver) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return r.stopping || l.ctx.Err() != nil
}

// lost marks r down, from now, and reports whether it is being stopped
// (then its end is no loss, and it must not subscribe again).
func (l *redisListener) lost(r *receiver) (stopped bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	stopped = r.stopping || l.ctx.Err() != nil
	if r.confirmed {
		r.confirmed, r.since = false, time.Now()
		l.stats.channels.Add(-1)
		if !stopped {
			l.stats.linkLosses.Add(1)
		}
	}
	return stopped
}

func (l *redisListener) down() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var n int
	var first *receiver
	for _, r := range l.chans {
		if r.confirmed || !r.ever && time.Since(r.since) < confirmGrace {
			continue
		}
		n++
		if first == nil || r.since.Before(first.since) {
			first = r
		}
	}
	if n == 0 {
		return nil
	}
	return fmt.Errorf("realtime: %d of %d Redis subscriptions down, the oldest (%s) since %s; they resubscribe by themselves",
		n, len(l.chans), first.ch, first.since.UTC().Format(time.RFC3339))
}

// stop unsubscribes every channel and waits for the receivers, which the
// replica's context ending stops anyway: the client may serve on (other
// services share it in tests), and must not keep subscriptions nobody
// hears. Subscriptions closing meanwhile change nothing after it.
func (l *redisListener) stop() {
	l.mu.Lock()
	l.halted = true
	for ch := range l.chans {
		l.drop(ch)
	}
	l.mu.Unlock()
	l.wg.Wait()
}
