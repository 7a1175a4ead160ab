package main

import (
	"slices"
	"testing"
	"time"
)

func TestPhaseOrder(t *testing.T) {
	for n, want := range map[int][]int{
		2: {0, 1},
		4: {0, 1, 1, 0},
		6: {0, 1, 1, 0, 0, 1},
		8: {0, 1, 1, 0, 0, 1, 1, 0},
	} {
		got := phaseOrder(n)
		if !slices.Equal(got, want) {
			t.Errorf("phaseOrder(%d) = %v, want %v", n, got, want)
		}
		// Each server gets half the phases.
		b := 0
		for _, i := range got {
			b += i
		}
		if b != n/2 {
			t.Errorf("phaseOrder(%d) gives B %d phases, want %d", n, b, n/2)
		}
	}
}

func TestRecorder(t *testing.T) {
	var r recorder
	for i := 1; i <= 100; i++ {
		r.add("followingFeed", time.Duration(i)*time.Millisecond, true)
	}
	r.add("followingFeed", time.Hour, false) // an error: counted, no latency
	r.add("likePost", 7*time.Millisecond, true)
	iv := r.cut()
	ops, errs, lat := iv.ops, iv.errs, iv.lat
	if ops != 102 || errs != 1 {
		t.Errorf("cut: %d operations, %d errors; want 102, 1", ops, errs)
	}
	if q := lat["followingFeed"]; q.P50 != 50 || q.P95 != 95 || q.P99 != 99 || q.Samples != 100 {
		t.Errorf("followingFeed quantiles %+v", q)
	}
	if q := lat["likePost"]; q.P50 != 7 || q.P99 != 7 || q.Samples != 1 {
		t.Errorf("likePost quantiles %+v", q)
	}
	// The next interval starts empty.
	if iv := r.cut(); iv.ops != 0 || iv.errs != 0 || len(iv.lat) != 0 {
		t.Errorf("after a cut: %+v", iv)
	}

	// Past sampleCap calls, a uniform sample is kept: memory stays
	// bounded and the quantiles stay near those of every call.
	const n = 20 * sampleCap
	for i := 1; i <= n; i++ {
		r.add("followingFeed", time.Duration(i)*time.Microsecond, true)
	}
	r.mu.Lock()
	kept := len(r.lat["followingFeed"].kept)
	r.mu.Unlock()
	if kept != sampleCap {
		t.Errorf("kept %d latencies of %d, want %d", kept, n, sampleCap)
	}
	q := r.cut().lat["followingFeed"]
	// 2048 samples of a uniform 1..n µs: the median within 5% of n/2
	// fails about once in 10^5 runs.
	if q.Samples != n || q.P50 < 0.45*n/1000 || q.P50 > 0.55*n/1000 || q.P99 < 0.97*n/1000 {
		t.Errorf("quantiles of a sample of %d calls: %+v (n/2 = %v ms)", n, q, float64(n)/2000)
	}
}

func TestRecorderBucket(t *testing.T) {
	var r recorder
	for range 50 {
		r.add("liveFeed", 3*time.Millisecond, true)
	}
	before := cpuReading{feedd: 10}
	after := cpuReading{feedd: 10.05, redisErr: errNoRedis}
	b := r.cut().bucket(2500*time.Millisecond, 500*time.Millisecond, before, after)
	if b.End != 2.5 || b.Seconds != 0.5 || b.Ops != 50 || b.PerSecond() != 100 || b.Latency["liveFeed"].P50 != 3 {
		t.Errorf("bucket %+v", b)
	}
	if b.FeeddMsPerOp == nil || *b.FeeddMsPerOp < 0.999 || *b.FeeddMsPerOp > 1.001 || b.RedisMsPerOp != nil {
		t.Errorf("bucket's CPU: feedd %v, Redis %v; want 1 ms and none", b.FeeddMsPerOp, b.RedisMsPerOp)
	}
}
