// Package metrics keeps feedd's in-process counters per GraphQL operation:
// Redis round trips, request latency and error codes. WritePrometheus
// exports them in the Prometheus text format (served at /metrics).
package metrics

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
)

// TripBuckets are the upper bounds of the round-trip histogram; a last,
// implicit bucket holds everything above.
var TripBuckets = []int{0, 1, 2, 3, 4, 6, 8, 12, 16}

// LatencyBuckets are the upper bounds, in seconds, of the request latency
// histogram; a last, implicit bucket holds everything above.
var LatencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// maxOperations bounds how many distinct operations are kept: clients name
// operations, so names are not trusted to be few. Later ones share Other.
const maxOperations = 500

// Other is the name operations beyond the first maxOperations are kept under.
const Other = "(other)"

// Operation is what was observed of one GraphQL operation.
type Operation struct {
	// Type is query, mutation or subscription; Name the operation's name,
	// "" when it has none.
	Type, Name string
	// Requests is how many times it ran; RoundTrips the Redis round trips
	// they cost in all; MaxRoundTrips the most one run cost.
	Requests, RoundTrips, MaxRoundTrips int64
	// Buckets[i] counts runs that cost at most TripBuckets[i] round trips
	// (and more than TripBuckets[i-1]); the last element counts the rest.
	Buckets []int64
	// Served is how many HTTP requests carrying it were timed; Seconds
	// their total duration; Latency[i] counts those that took at most
	// LatencyBuckets[i] (and more than LatencyBuckets[i-1]), the last
	// element the rest.
	Served  int64
	Seconds float64
	Latency []int64
	// Errors counts GraphQL errors by extensions.code.
	Errors map[string]int64
}

func (op *Operation) clone() Operation {
	c := *op
	c.Buckets = slices.Clone(op.Buckets)
	c.Latency = slices.Clone(op.Latency)
	c.Errors = maps.Clone(op.Errors)
	return c
}

// Registry collects operation metrics. Safe for concurrent use.
type Registry struct {
	mu  sync.Mutex
	ops map[opKey]*Operation
}

type opKey struct{ typ, name string }

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{ops: map[opKey]*Operation{}} }

// Default is the registry the server records to.
var Default = NewRegistry()

// ObserveOperation records that an operation ran and cost trips round trips.
func (r *Registry) ObserveOperation(typ, name string, trips int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := r.op(typ, name)
	op.Requests++
	op.RoundTrips += int64(trips)
	op.MaxRoundTrips = max(op.MaxRoundTrips, int64(trips))
	i, _ := slices.BinarySearch(TripBuckets, trips)
	op.Buckets[i]++
}

// ObserveRequest records that an HTTP request running the operation took d
// and answered with GraphQL errors of the given codes. Requests that failed
// before an operation was known are kept under an empty type and name.
func (r *Registry) ObserveRequest(typ, name string, d time.Duration, codes []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := r.op(typ, name)
	sec := d.Seconds()
	op.Served++
	op.Seconds += sec
	i, _ := slices.BinarySearch(LatencyBuckets, sec)
	op.Latency[i]++
	for _, c := range codes {
		if op.Errors == nil {
			op.Errors = map[string]int64{}
		}
		if len(op.Errors) >= maxCodes {
			if _, ok := op.Errors[c]; !ok {
				c = Other
			}
		}
		op.Errors[c]++
	}
}

// maxCodes bounds the distinct error codes kept per operation; codes come
// from a fixed list, so this only guards against a bug.
const maxCodes = 32

// op returns the entry of an operation, creating it; r.mu is held.
func (r *Registry) op(typ, name string) *Operation {
	k := opKey{typ, name}
	op := r.ops[k]
	if op == nil {
		if len(r.ops) >= maxOperations {
			k.name = Other
			op = r.ops[k]
		}
		if op == nil {
			op = &Operation{Type: k.typ, Name: k.name, Buckets: make([]int64, len(TripBuckets)+1),
				Latency: make([]int64, len(LatencyBuckets)+1)}
			r.ops[k] = op
		}
	}
	return op
}

// Operations returns a copy of every operation's metrics, by type and name.
func (r *Registry) Operations() []Operation {
	r.mu.Lock()
	out := make([]Operation, 0, len(r.ops))
	for _, op := range r.ops {
		out = append(out, op.clone())
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b Operation) int {
		if c := strings.Compare(a.Type, b.Type); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Operation returns the metrics of one operation, and whether it ran.
func (r *Registry) Operation(typ, name string) (Operation, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	op := r.ops[opKey{typ, name}]
	if op == nil {
		return Operation{}, false
	}
	return op.clone(), true
}
