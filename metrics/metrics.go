// Package metrics keeps feedd's in-process counters: for now, Redis round
// trips per GraphQL operation. Exporting them (Prometheus text at /metrics)
// reads them through Operations.
package metrics

import (
	"slices"
	"strings"
	"sync"
)

// TripBuckets are the upper bounds of the round-trip histogram; a last,
// implicit bucket holds everything above.
var TripBuckets = []int{0, 1, 2, 3, 4, 6, 8, 12, 16}

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
	k := opKey{typ, name}
	op := r.ops[k]
	if op == nil {
		if len(r.ops) >= maxOperations {
			k.name = Other
			op = r.ops[k]
		}
		if op == nil {
			op = &Operation{Type: k.typ, Name: k.name, Buckets: make([]int64, len(TripBuckets)+1)}
			r.ops[k] = op
		}
	}
	op.Requests++
	op.RoundTrips += int64(trips)
	op.MaxRoundTrips = max(op.MaxRoundTrips, int64(trips))
	i, _ := slices.BinarySearch(TripBuckets, trips)
	op.Buckets[i]++
}

// Operations returns a copy of every operation's metrics, by type and name.
func (r *Registry) Operations() []Operation {
	r.mu.Lock()
	out := make([]Operation, 0, len(r.ops))
	for _, op := range r.ops {
		c := *op
		c.Buckets = slices.Clone(op.Buckets)
		out = append(out, c)
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
	c := *op
	c.Buckets = slices.Clone(op.Buckets)
	return c, true
}
