package realtime

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// publisher is the core.Notifier realtime installs: the lower layers ask
// it for presence and tell it what changed, and it publishes notices, by
// sharded pub/sub or inside this process. Every process that writes
// (replicas serving requests, workers) has one; only those that serve
// subscriptions listen (Start).
type publisher struct{ s *Service }

// Presence asks, per presence set the members fall in, which of them
// have a following feed subscription open: one ZMSCORE per set, sent
// in the caller's pipeline. A mark past its lapse time is no presence
// (its replica died without taking it back).
func (p publisher) Presence(members []string) ([]rueidis.Completed, func([]rueidis.RedisResult) []store.ID) {
	var byBucket [store.PresenceBuckets][]string
	for _, m := range members {
		id, err := store.MemberID(m)
		if err != nil {
			continue
		}
		b := store.PresenceBucket(id)
		byBucket[b] = append(byBucket[b], m)
	}
	var cmds []rueidis.Completed
	var asked [][]string
	for b, ms := range byBucket {
		if len(ms) > 0 {
			cmds = append(cmds, p.s.Redis.B().Zmscore().Key(p.s.Keys.Presence(b)).Member(ms...).Build())
			asked = append(asked, ms)
		}
	}
	now := float64(p.s.NowMS())
	return cmds, func(rs []rueidis.RedisResult) []store.ID {
		var present []store.ID
		for i, r := range rs {
			scores, err := r.ToArray()
			if err != nil || len(scores) != len(asked[i]) {
				p.s.stats.presenceErrors.Add(1)
				continue
			}
			for j, sc := range scores {
				if lapse, err := sc.AsFloat64(); err == nil && lapse > now {
					id, _ := store.MemberID(asked[i][j])
					present = append(present, id)
				}
			}
		}
		return present
	}
}

// Notify publishes ns: one message per viewer bucket their readers fall
// in, and one on an author's, anchor's or the moderation channel, all in
// one round trip (none inside the process). A notice is a hint: a
// failure is counted, never returned.
func (p publisher) Notify(ctx context.Context, ns ...core.Notice) {
	cmds, done := p.NoticeCmds(ns...)
	if len(cmds) > 0 {
		done(p.s.Redis.DoMulti(ctx, cmds...))
	}
}

// NoticeCmds returns the SPUBLISHes of ns for the caller's pipeline, and
// what reads their replies; inside the process it delivers them at once
// and returns none. Until the transport is known (core.NoticesAuto) it
// assumes sharded pub/sub: a server that does not know SPUBLISH (the
// embedded store) answers so, and from then on notices stay in the
// process, this first one delivered there too. So no request waits for a
// question to the server.
func (p publisher) NoticeCmds(ns ...core.Notice) ([]rueidis.Completed, func([]rueidis.RedisResult)) {
	msgs := messages(p.s.Keys, ns)
	none := func([]rueidis.RedisResult) {}
	switch p.s.mode() {
	case modeOff:
		return nil, none
	case modeLocal:
		p.s.deliverLocally(msgs)
		return nil, none
	}
	cmds := make([]rueidis.Completed, len(msgs))
	for i, m := range msgs {
		cmds[i] = p.s.Redis.B().Spublish().Channel(m.channel).Message(m.payload).Build()
	}
	return cmds, func(rs []rueidis.RedisResult) {
		for i, r := range rs {
			switch err := r.Error(); {
			case err == nil:
				p.s.stats.published.Add(1)
			case unknownCommand(err) && p.s.Opts.Notices == core.NoticesAuto:
				p.s.setMode(modeLocal)
				p.s.deliverLocally(msgs[i : i+1])
			default:
				p.s.stats.publishErrors.Add(1)
			}
		}
	}
}

// Transport modes: how this process's notices travel, once known.
const (
	modeUnknown = iota // core.NoticesAuto, not asked yet: assume Redis
	modeRedis
	modeLocal
	modeOff
)

// mode is how notices travel, as far as known.
func (s *Service) mode() int {
	switch s.Opts.Notices {
	case core.NoticesOff:
		return modeOff
	case core.NoticesLocal:
		return modeLocal
	case core.NoticesRedis:
		return modeRedis
	}
	return int(s.autoMode.Load())
}

func (s *Service) setMode(m int) { s.autoMode.Store(int32(m)) }

// deliverLocally hands msgs to the listeners of this process that share
// the store (localBus).
func (s *Service) deliverLocally(msgs []message) {
	if b := localBusOf(s.localKey()); b != nil {
		for _, m := range msgs {
			b.deliver(m)
			s.stats.published.Add(1)
		}
	}
}

// listenMode is how a replica that starts listening hears notices: it
// asks the server, by a publish on a channel nobody listens to, unless
// told (core.Options.Notices) or known already; an answer of another
// kind (Redis down) is an error, to ask again.
func (s *Service) listenMode(ctx context.Context) (int, error) {
	if m := s.mode(); m != modeUnknown {
		return m, nil
	}
	err := s.Redis.Do(ctx, s.Redis.B().Spublish().Channel(s.Keys.ModerationChannel()+":probe").Message("").Build()).Error()
	switch {
	case err == nil:
		s.setMode(modeRedis)
	case unknownCommand(err):
		s.setMode(modeLocal)
	default:
		return modeUnknown, fmt.Errorf("ask the server for sharded pub/sub: %w", err)
	}
	return s.mode(), nil
}

// unknownCommand reports a server's refusal of a command it does not have.
func unknownCommand(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	return ok && strings.Contains(strings.ToLower(re.Error()), "unknown command")
}

// localKey names this store among those of the process: its key prefix
// and its server's address, so the services of one store (replicas
// side by side in a test) share one bus, and tests on stores of their
// own never hear one another.
func (s *Service) localKey() string {
	addrs := make([]string, 0, 1)
	for a := range s.Redis.Nodes() {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	return s.Keys.Prefix + "@" + strings.Join(addrs, ",")
}

// localBus carries notices inside the process, for the embedded store,
// which has no pub/sub of the kind replicas share: it calls the hubs
// listening to a message's channel, as Redis would send it them.
type localBus struct {
	mu        sync.RWMutex
	listeners map[string]map[*hub]struct{}
}

// localBuses are the process's buses, by localKey; a bus leaves it with
// its last listener. Listening and unlistening hold its lock, so a bus is
// never joined after it left.
var localBuses = struct {
	mu sync.Mutex
	m  map[string]*localBus
}{m: map[string]*localBus{}}

// localBusOf returns the bus of key; nil when nobody listens.
func localBusOf(key string) *localBus {
	localBuses.mu.Lock()
	defer localBuses.mu.Unlock()
	return localBuses.m[key]
}

// deliver hands m to the hubs listening to its channel, outside the
// bus's lock: a hub may stop listening meanwhile.
func (b *localBus) deliver(m message) {
	b.mu.RLock()
	hubs := make([]*hub, 0, len(b.listeners[m.channel]))
	for h := range b.listeners[m.channel] {
		hubs = append(hubs, h)
	}
	b.mu.RUnlock()
	for _, h := range hubs {
		h.deliver(m.payload)
	}
}

// localListen makes h hear channel on the bus of key.
func localListen(key string, h *hub, channel string) {
	localBuses.mu.Lock()
	defer localBuses.mu.Unlock()
	b := localBuses.m[key]
	if b == nil {
		b = &localBus{listeners: map[string]map[*hub]struct{}{}}
		localBuses.m[key] = b
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.listeners[channel] == nil {
		b.listeners[channel] = map[*hub]struct{}{}
	}
	b.listeners[channel][h] = struct{}{}
}

// localUnlisten stops h hearing channel, and drops the bus once nobody
// listens to it.
func localUnlisten(key string, h *hub, channel string) {
	localBuses.mu.Lock()
	defer localBuses.mu.Unlock()
	b := localBuses.m[key]
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.listeners[channel], h)
	if len(b.listeners[channel]) == 0 {
		delete(b.listeners, channel)
	}
	if len(b.listeners) == 0 {
		delete(localBuses.m, key)
	}
}
