package reqinfo

import (
	"context"
	"sync"
	"time"
)

// Outcome is what became of a request, told by whoever decided it: the
// error code of every error it answered with (the error presenter, and
// each refusal made without it), how long a refused caller should wait,
// and the operation it ran. The HTTP layer reads it once the request is
// answered, for the status, the metrics and the access log, instead of
// reading the answer back. Safe for concurrent use (fields resolve in
// parallel); the methods of a nil *Outcome do nothing.
type Outcome struct {
	mu         sync.Mutex
	codes      []string
	retryAfter time.Duration
	op         Operation
}

// maxCodes bounds the codes an Outcome keeps: a WebSocket's request lasts
// as long as the connection, and its client may send any number of
// messages that fail.
const maxCodes = 256

// Operation is the GraphQL operation a request ran.
type Operation struct {
	// Type is query, mutation or subscription; Name is its label (see the
	// server's known operations). Both are empty when the request failed
	// before an operation was known.
	Type, Name string
	// Trips is the Redis round trips it cost.
	Trips int
	// Cost is the points it was priced at (the cost limit's), 0 when it
	// was refused before it was priced.
	Cost int
}

// OutcomeOf returns the Outcome of the request ctx belongs to (see With),
// or nil outside a request.
func OutcomeOf(ctx context.Context) *Outcome {
	if in := infoOf(ctx); in != nil {
		return in.outcome
	}
	return nil
}

// AddCode records that the answer carries an error with extensions.code
// code (the first maxCodes of them).
func (o *Outcome) AddCode(code string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	if len(o.codes) < maxCodes {
		o.codes = append(o.codes, code)
	}
	o.mu.Unlock()
}

// ReplaceCodes records that the answer was replaced by one whose errors
// carry codes: the codes recorded for the answer it replaced are dropped.
func (o *Outcome) ReplaceCodes(codes ...string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.codes = append(o.codes[:0], codes...)
	o.mu.Unlock()
}

// Codes returns the codes recorded, in the order they were.
func (o *Outcome) Codes() []string {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]string(nil), o.codes...)
}

// SetRetryAfter records that the caller was refused for now and may retry
// after d: the answer becomes 429 with Retry-After.
func (o *Outcome) SetRetryAfter(d time.Duration) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.retryAfter = d
	o.mu.Unlock()
}

// RetryAfter is what SetRetryAfter recorded; 0 when the caller was not
// refused.
func (o *Outcome) RetryAfter() time.Duration {
	if o == nil {
		return 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.retryAfter
}

// RanOperation records the operation the request ran and its round trips,
// which add up over the operations of a request.
func (o *Outcome) RanOperation(op Operation) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.op.Type, o.op.Name = op.Type, op.Name
	o.op.Trips += op.Trips
	o.mu.Unlock()
}

// Priced records the points the operation was priced at.
func (o *Outcome) Priced(cost int) {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.op.Cost = cost
	o.mu.Unlock()
}

// Operation is what RanOperation and Priced recorded.
func (o *Outcome) Operation() Operation {
	if o == nil {
		return Operation{}
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.op
}
