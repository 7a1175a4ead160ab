package main

import (
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/feedd/feedd/cmd/feedload/loadreport"
)

// sampleCap bounds the latencies an interval keeps of each operation: past
// it, a uniform sample of them (reservoir sampling), so memory does not
// grow with throughput and the quantiles stay those of the interval.
const sampleCap = 2048

// recorder collects the calls of the current interval, from every worker.
type recorder struct {
	mu        sync.Mutex
	ops, errs int
	lat       map[string]*reservoir
}

type reservoir struct {
	seen int
	kept []time.Duration
}

// add records one call of op: its latency when it succeeded.
func (r *recorder) add(op string, d time.Duration, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops++
	if !ok {
		r.errs++
		return
	}
	if r.lat == nil {
		r.lat = map[string]*reservoir{}
	}
	s := r.lat[op]
	if s == nil {
		s = &reservoir{}
		r.lat[op] = s
	}
	s.seen++
	if len(s.kept) < sampleCap {
		s.kept = append(s.kept, d)
	} else if i := rand.IntN(s.seen); i < sampleCap {
		s.kept[i] = d
	}
}

// interval is what the recorder collected between two cuts.
type interval struct {
	ops, errs int
	lat       map[string]loadreport.Quantiles
}

// cut ends the interval: its operations, errors and each operation's
// latency quantiles; the recorder starts the next one empty.
func (r *recorder) cut() interval {
	r.mu.Lock()
	iv, kept := interval{ops: r.ops, errs: r.errs}, r.lat
	r.ops, r.errs, r.lat = 0, 0, nil
	r.mu.Unlock()
	iv.lat = map[string]loadreport.Quantiles{}
	for op, s := range kept {
		slices.Sort(s.kept)
		iv.lat[op] = loadreport.Quantiles{P50: ms(quantile(s.kept, 0.50)), P95: ms(quantile(s.kept, 0.95)),
			P99: ms(quantile(s.kept, 0.99)), Samples: s.seen}
	}
	return iv
}

// bucket is the interval that ended at end (time of load on the server)
// after length, with the CPU readings at its start and its end.
func (iv interval) bucket(end, length time.Duration, before, after cpuReading) loadreport.Bucket {
	b := loadreport.Bucket{End: end.Seconds(), Seconds: length.Seconds(), Ops: iv.ops, Errors: iv.errs, Latency: iv.lat}
	b.FeeddMsPerOp, b.RedisMsPerOp = perOp(before, after, iv.ops)
	return b
}
