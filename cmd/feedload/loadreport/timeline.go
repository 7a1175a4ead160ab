package loadreport

// Timeline is one server's run in fixed intervals, which the HTML
// report charts. Times are seconds of load on that server: in a
// comparison, its phases back to back.
type Timeline struct {
	Interval float64 `json:"intervalSeconds"`
	// PhaseStarts are where each of the server's phases began, after the
	// first (none for a run without --compare).
	PhaseStarts []float64  `json:"phaseStarts,omitempty"`
	Buckets     []Bucket   `json:"buckets"`
	Lag         []LagPoint `json:"lag,omitempty"`
}

// Bucket is one interval: the operations that ended in it, the latency
// quantiles of each operation's successful calls (at most a bounded sample
// of them), and the CPU an operation cost feedd and Redis over it (nil
// when not measured).
type Bucket struct {
	End          float64              `json:"end"`
	Seconds      float64              `json:"seconds"`
	Ops          int                  `json:"ops"`
	Errors       int                  `json:"errors"`
	Latency      map[string]Quantiles `json:"latency,omitempty"`
	FeeddMsPerOp *float64             `json:"feeddCpuMsPerOp,omitempty"`
	RedisMsPerOp *float64             `json:"redisCpuMsPerOp,omitempty"`
}

// PerSecond is the bucket's throughput.
func (b Bucket) PerSecond() float64 {
	if b.Seconds <= 0 {
		return 0
	}
	return float64(b.Ops) / b.Seconds
}

// Quantiles are latencies in milliseconds, of Samples calls.
type Quantiles struct {
	P50     float64 `json:"p50ms"`
	P95     float64 `json:"p95ms"`
	P99     float64 `json:"p99ms"`
	Samples int     `json:"samples"`
}

// LagPoint is one fan-out lag sample: when it was taken (seconds of load)
// and the lag.
type LagPoint struct {
	At float64 `json:"at"`
	Ms float64 `json:"ms"`
}
