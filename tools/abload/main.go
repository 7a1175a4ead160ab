// Command abload compares two running feedd servers, A and B, under a load
// command that cannot compare builds itself: an older build's feedload,
// whose queries an older server answers (today's feedload --compare asks
// for fields an older schema lacks). It runs the load against A and B in
// phases A B B A (repeated for more), each with --url and --key-prefix of
// its server, and measures around each phase the server's process CPU
// (/proc/PID/stat, so Linux only), Redis's CPU (INFO cpu) and its commands
// (INFO commandstats: differences, nothing is reset). It prints, per
// server, operations per second, feedd's and Redis's CPU per operation,
// the first page's p50 and p99 in each phase, and the busiest commands;
// then B against A.
//
//	abload -a-pid PID -a-url URL -a-prefix P -b-pid PID -b-url URL -b-prefix P \
//	    [-redis ADDR] [-phases 4] -- LOADCMD [ARGS...]
//
// LOADCMD runs once a phase with ARGS and --url, --key-prefix, --seed (the
// phase's number, so phases differ and servers alike) and --json; it must
// print a feedload JSON report (reads, writes, operations with name,
// p50ms, p99ms). docs/performance.md ("Comparing with an older build")
// shows a whole run.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

type server struct {
	name, url, prefix string
	pid               int
	ops, secs         float64
	cpu, redis        float64 // seconds
	first             []string
	cmds              map[string]*cmdStat
}

type cmdStat struct{ calls, usec float64 }

func main() {
	a, b := &server{name: "A", cmds: map[string]*cmdStat{}}, &server{name: "B", cmds: map[string]*cmdStat{}}
	flag.IntVar(&a.pid, "a-pid", 0, "A's feedd process id")
	flag.StringVar(&a.url, "a-url", "", "A's GraphQL endpoint")
	flag.StringVar(&a.prefix, "a-prefix", "", "A's --key-prefix")
	flag.IntVar(&b.pid, "b-pid", 0, "B's feedd process id")
	flag.StringVar(&b.url, "b-url", "", "B's GraphQL endpoint")
	flag.StringVar(&b.prefix, "b-prefix", "", "B's --key-prefix")
	addr := flag.String("redis", "127.0.0.1:6379", "the Redis both use (a single server)")
	phases := flag.Int("phases", 4, "phases in all (even), in the order A B B A, repeated")
	flag.Parse()
	load := flag.Args()
	if a.pid == 0 || b.pid == 0 || a.url == "" || b.url == "" || len(load) == 0 || *phases%2 != 0 {
		fmt.Fprintln(os.Stderr, "abload: need -a-pid, -a-url, -b-pid, -b-url, an even -phases and a load command after --")
		os.Exit(2)
	}
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{*addr}, DisableCache: true})
	if err != nil {
		fail("connect to Redis at %s: %v", *addr, err)
	}
	defer rc.Close()
	for i := range *phases {
		s := a
		if i%4 == 1 || i%4 == 2 {
			s = b
		}
		if err := phase(rc, s, i, load); err != nil {
			fail("phase %d (%s): %v", i, s.name, err)
		}
	}
	for _, s := range []*server{a, b} {
		report(s)
	}
	fmt.Printf("B/A: operations/s %.2f, feedd CPU/op %.2f, Redis CPU/op %.2f\n",
		(b.ops/b.secs)/(a.ops/a.secs), (b.cpu/b.ops)/(a.cpu/a.ops), (b.redis/b.ops)/(a.redis/a.ops))
}

// phase runs the load once against s and adds what it cost to s.
func phase(rc rueidis.Client, s *server, i int, load []string) error {
	cpu0, err := procCPU(s.pid)
	if err != nil {
		return err
	}
	redis0, cmds0, err := redisStats(rc)
	if err != nil {
		return err
	}
	start := time.Now()
	args := append(load[1:], "--url", s.url, "--key-prefix", s.prefix, "--seed", strconv.Itoa(i+1), "--json")
	cmd := exec.Command(load[0], args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("load: %w", err)
	}
	secs := time.Since(start).Seconds()
	cpu1, err := procCPU(s.pid)
	if err != nil {
		return err
	}
	redis1, cmds1, err := redisStats(rc)
	if err != nil {
		return err
	}
	var rep struct {
		Reads, Writes int
		Operations    []struct {
			Name         string
			P50ms, P99ms float64
		}
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		return fmt.Errorf("read the load's report: %w", err)
	}
	ops := float64(rep.Reads + rep.Writes)
	s.ops, s.secs, s.cpu, s.redis = s.ops+ops, s.secs+secs, s.cpu+cpu1-cpu0, s.redis+redis1-redis0
	for _, o := range rep.Operations {
		if o.Name == "followingFeed" {
			s.first = append(s.first, fmt.Sprintf("%.1f/%.1f", o.P50ms, o.P99ms))
		}
	}
	for k, c := range cmds1 {
		d := s.cmds[k]
		if d == nil {
			d = &cmdStat{}
			s.cmds[k] = d
		}
		d.calls += c.calls - cmds0[k].calls
		d.usec += c.usec - cmds0[k].usec
	}
	fmt.Fprintf(os.Stderr, "abload: phase %d, %s: %.0f operations in %.0fs\n", i, s.name, ops, secs)
	return nil
}

func report(s *server) {
	fmt.Printf("%s: %.0f operations/s, feedd %.3f ms CPU/op, Redis %.3f ms CPU/op, first page p50/p99 ms by phase %s\n",
		s.name, s.ops/s.secs, 1000*s.cpu/s.ops, 1000*s.redis/s.ops, strings.Join(s.first, ", "))
	names := make([]string, 0, len(s.cmds))
	for k := range s.cmds {
		names = append(names, k)
	}
	sort.Slice(names, func(i, j int) bool { return s.cmds[names[i]].usec > s.cmds[names[j]].usec })
	for _, k := range names[:min(6, len(names))] {
		c := s.cmds[k]
		if c.calls > 0 {
			fmt.Printf("   %-16s %8.2f calls/op %8.1f µs/call %7.3f ms/op\n", k, c.calls/s.ops, c.usec/c.calls, c.usec/1000/s.ops)
		}
	}
}

// procCPU is the CPU time process pid has used, in seconds.
func procCPU(pid int) (float64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read the CPU time of process %d (Linux only): %w", pid, err)
	}
	// Fields after the command name in parentheses; utime and stime are
	// the 14th and 15th fields of the whole line.
	f := strings.Fields(string(raw[bytes.LastIndexByte(raw, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("process %d: short /proc stat line", pid)
	}
	ut, err1 := strconv.ParseFloat(f[11], 64)
	st, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("process %d: unreadable CPU times", pid)
	}
	return (ut + st) / clockTicks, nil
}

// clockTicks is USER_HZ, the unit of /proc's CPU times: 100 on every Linux
// this runs on.
const clockTicks = 100

// redisStats is Redis's CPU time so far (user and system) and its
// commandstats, each command's calls and microseconds.
func redisStats(rc rueidis.Client) (float64, map[string]cmdStat, error) {
	ctx := context.Background()
	cpuInfo, err := rc.Do(ctx, rc.B().Info().Section("cpu").Build()).ToString()
	if err != nil {
		return 0, nil, fmt.Errorf("INFO cpu: %w", err)
	}
	var cpu float64
	for _, line := range strings.Split(cpuInfo, "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && (k == "used_cpu_sys" || k == "used_cpu_user") {
			f, _ := strconv.ParseFloat(v, 64)
			cpu += f
		}
	}
	stats, err := rc.Do(ctx, rc.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		return 0, nil, fmt.Errorf("INFO commandstats: %w", err)
	}
	cmds := map[string]cmdStat{}
	for _, line := range strings.Split(stats, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") {
			continue
		}
		var c cmdStat
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "calls":
				c.calls, _ = strconv.ParseFloat(v, 64)
			case "usec":
				c.usec, _ = strconv.ParseFloat(v, 64)
			}
		}
		cmds[strings.TrimPrefix(name, "cmdstat_")] = c
	}
	return cpu, cmds, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "abload: "+format+"\n", args...)
	os.Exit(1)
}
