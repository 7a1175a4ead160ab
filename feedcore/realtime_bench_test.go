package feedcore

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// rtBenchModes are the fan-out's realtime settings measured: off (no
// notifier: the fan-out asks no presence), on with no follower
// subscribed (each chunk asks its readers' presence, one ZMSCORE per
// presence set touched), and on with 1% of followers subscribed (each chunk
// also publishes to the buckets of those present; nobody listens to the
// channels here, so the serving replicas' recounts are not in it).
var rtBenchModes = []struct {
	name    string
	notices core.NoticeMode
	present int // one follower in present is subscribed; 0: none
}{{"off", core.NoticesOff, 0}, {"on", core.NoticesAuto, 0}, {"on-1pct-present", core.NoticesAuto, 100}}

// markPresent marks one follower in every n present, as a replica with
// their subscriptions open would, for an hour.
func markPresent(tb testing.TB, s *Service, followers []store.ID, n int) {
	tb.Helper()
	if n == 0 {
		return
	}
	var present []store.ID
	for i := 0; i < len(followers); i += n {
		present = append(present, followers[i])
	}
	if err := s.MarkPresent(context.Background(), present, time.Now().Add(time.Hour)); err != nil {
		tb.Fatal(err)
	}
}

// cpuMeter reads the CPU time this process and the Redis server have
// used: on a machine others share, the fan-out's wall-clock rate swings
// with their load, while the CPU a write costs barely moves. The server's
// counts only when the benchmark has it to itself (a Redis of its own).
type cpuMeter struct {
	s           *Service
	self, srv0  time.Duration
	calls0, us0 int64
}

// polling are the commands workers and the drain send whatever the
// work, as often as time passes: left out of the commands a write costs.
var polling = map[string]bool{"xreadgroup": true, "xpending": true, "xlen": true, "xautoclaim": true, "info": true,
	"ping": true, "hello": true, "client|tracking": true, "client|setname": true, "client|setinfo": true}

// commands reads the server's commands so far, and the microseconds it
// spent in them, polling left out.
func (m *cpuMeter) commands(tb testing.TB) (calls, usec int64) {
	info, err := m.s.Redis.Do(context.Background(), m.s.Redis.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":")
		if !ok || polling[name] {
			continue
		}
		for _, kv := range strings.Split(stats, ",") {
			k, v, _ := strings.Cut(kv, "=")
			n, _ := strconv.ParseInt(v, 10, 64)
			switch k {
			case "calls":
				calls += n
			case "usec":
				usec += n
			}
		}
	}
	return calls, usec
}

func (m *cpuMeter) read(tb testing.TB) (self, server time.Duration) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	self = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	info, err := m.s.Redis.Do(context.Background(), m.s.Redis.B().Info().Section("cpu").Build()).ToString()
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if f, err := strconv.ParseFloat(v, 64); ok && err == nil && (k == "used_cpu_sys" || k == "used_cpu_user") {
			server += time.Duration(f * float64(time.Second))
		}
	}
	return self, server
}

func (m *cpuMeter) start(tb testing.TB) {
	m.self, m.srv0 = m.read(tb)
	m.calls0, m.us0 = m.commands(tb)
}

// report reports, per inbox write since start, the CPU microseconds of
// this process (workers, and the benchmark's own publishing and polling)
// and of the server, and the commands the server ran and the
// microseconds it spent in them, polling left out: the last two depend
// on the work alone, not on the machine's other load.
func (m *cpuMeter) report(b *testing.B, writes int) {
	self, srv := m.read(b)
	calls, us := m.commands(b)
	b.ReportMetric(float64((self-m.self).Microseconds())/float64(writes), "self-cpu-us/write")
	b.ReportMetric(float64((srv-m.srv0).Microseconds())/float64(writes), "redis-cpu-us/write")
	b.ReportMetric(float64(calls-m.calls0)/float64(writes), "cmds/write")
	b.ReportMetric(float64(us-m.us0)/float64(writes), "cmd-us/write")
}

// BenchmarkFanoutRealtime is BenchmarkFanout (one post to 50,000
// followers) and BenchmarkFanoutSmallPosts (1 worker) with realtime off,
// on, and on with 1% of the followers subscribed: issue 29 allows the
// fan-out 10% less throughput with realtime on.
//
//	FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./feedcore -run '^$' -bench FanoutRealtime -benchtime 3x -count 3
//
// (the small posts with -benchtime 1000x: BenchmarkFanoutRealtime/small).
// Besides the rates it reports the CPU a write costs, in this process and
// in Redis: on a shared machine, run it against a Redis of its own
// (redis-server --port 7410 --save ”), whose CPU is then the fan-out's.
func BenchmarkFanoutRealtime(b *testing.B) {
	storetest.RequireReal(b)
	for _, size := range []string{"big", "small"} {
		for _, m := range rtBenchModes {
			b.Run(size+"/realtime="+m.name, func(b *testing.B) {
				o := Options{BigVThreshold: 1 << 30, Notices: m.notices}
				measure := func(s *Service, followers []store.ID) func(int) {
					markPresent(b, s, followers, m.present)
					cpu := &cpuMeter{s: s}
					cpu.start(b)
					return func(writes int) {
						cpu.report(b, writes)
						b.ReportMetric(float64(s.RealtimeStats().NoticesPublished)/float64(b.N), "notices/post")
					}
				}
				if size == "big" {
					benchFanout(b, o, measure)
				} else {
					benchSmallPosts(b, 1, o, measure)
				}
			})
		}
	}
}
