package core

import (
	"sync"

	"github.com/feedd/feedd/feedcore/store"
)

// throttle remembers, per user, when this process last did something, so
// a write that only needs to happen now and then (recording a read, asking
// for an upgrade) is not repeated on every request.
type throttle struct {
	every int64 // milliseconds
	mu    sync.Mutex
	last  map[store.ID]int64
}

func newThrottle(everyMS int64) *throttle {
	return &throttle{every: everyMS, last: map[store.ID]int64{}}
}

// Due reports whether id's action is due at now, and if so records it.
func (t *throttle) Due(id store.ID, now int64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	last, ok := t.last[id]
	if ok && now-last < t.every && now >= last {
		return false
	}
	if len(t.last) > 1<<20 { // forget everyone rather than grow without bound
		t.last = map[store.ID]int64{}
	}
	t.last[id] = now
	return true
}

// Forget makes id's action due again.
func (t *throttle) Forget(id store.ID) {
	t.mu.Lock()
	delete(t.last, id)
	t.mu.Unlock()
}
