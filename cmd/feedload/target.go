package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/cmd/feedload/loadreport"
	"github.com/feedd/feedd/internal/redisinfo"
)

// target is one feedd under load: its workers, which keep their state
// from one phase to the next (a comparison runs several), and what its
// phases added up to.
type target struct {
	name     string // "A" or "B" in a comparison
	cfg      loadConfig
	probe    *costProbe
	cl       *clients
	pop      *population
	workers  []*worker
	ops      atomic.Int64
	errs     atomic.Int64
	rec      recorder
	progress *progress

	elapsed  time.Duration // load so far, over its phases
	timeline loadreport.Timeline
	lag      lagRun // samples at times of load (elapsed)
	spent    spent
}

// newTarget checks that the server answers (failing fast on one that is
// not there or refuses us) and makes the workers.
func newTarget(ctx context.Context, name string, cfg loadConfig) (*target, error) {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	hc := cfg.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			MaxIdleConns: 2 * cfg.Concurrency, MaxIdleConnsPerHost: 2 * cfg.Concurrency, IdleConnTimeout: time.Minute}}
	}
	t := &target{name: name, cfg: cfg, progress: newProgress(cfg.Progress),
		probe: &costProbe{hc: hc, metricsURL: cfg.MetricsURL, redis: cfg.Redis},
		cl:    &clients{cfg: &cfg, http: hc, shared: &tokens{tok: map[int]string{}}}}
	t.timeline.Interval = cfg.Interval.Seconds()
	var err error
	if t.pop, err = newPopulation(cfg.Users, cfg.Dormant); err != nil {
		return nil, err
	}
	probe, err := t.cl.as(1)
	if err != nil {
		return nil, err
	}
	if _, err := client.Viewer(ctx, probe); err != nil {
		return nil, fmt.Errorf("feedd at %s: %w (is it running, with --dev-auth or --jwt-secret?)", cfg.URL, err)
	}
	t.workers = make([]*worker, cfg.Concurrency)
	for i := range t.workers {
		device := fmt.Sprintf("feedload-%s%d", name, i)
		t.workers[i] = &worker{cfg: &t.cfg, r: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1)), stats: map[string]*opStats{},
			clients: t.cl.device(device), device: device, ops: &t.ops, errs: &t.errs, rec: &t.rec, pop: t.pop}
	}
	return t, nil
}

// phase runs the workload and the fan-out lag probe (lagSamples of them)
// for d, reading the CPU at its start, every interval and its end, and
// Redis's command statistics at its start and end.
func (t *target) phase(ctx context.Context, d time.Duration, lagSamples int, label string) error {
	if t.elapsed > 0 {
		t.timeline.PhaseStarts = append(t.timeline.PhaseStarts, t.elapsed.Seconds())
	}
	before := t.read(ctx)
	rctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var wg sync.WaitGroup
	start := time.Now()
	for _, w := range t.workers {
		wg.Go(func() { w.run(rctx) })
	}
	var lag lagRun
	wg.Go(func() { lag = probeLag(rctx, t.cl.device("feedload-lag"+t.name), t.pop, t.cfg, d, lagSamples) })
	wg.Go(func() { t.showProgress(rctx, start, d, label) })
	last := t.buckets(ctx, rctx, start, before.cpu)
	wg.Wait()
	t.progress.done()
	took := time.Since(start)
	if err := ctx.Err(); err != nil {
		return err
	}
	t.endPhase(d, took, last, before, t.read(ctx), lag)
	return nil
}

// readings are the cost figures read at a phase's start or end.
type readings struct {
	cpu    cpuReading
	cmds   redisinfo.Commands
	cmdErr error
}

func (t *target) read(ctx context.Context) readings {
	r := readings{cpu: t.probe.cpu(ctx)}
	r.cmds, r.cmdErr = t.probe.commands(ctx)
	return r
}

// endPhase adds a phase of d, which took took (its calls in flight at d
// were cancelled), to the server's figures: its last interval, from last
// to d (with the calls that finished after d), charted unless it is a
// sliver (its calls count in the totals all the same); its cost; and its
// lag samples.
func (t *target) endPhase(d, took time.Duration, last mark, before, after readings, lag lagRun) {
	end := min(took, d)
	if b := t.rec.cut().bucket(t.elapsed+end, end-last.at, last.cpu, after.cpu); end-last.at >= t.cfg.Interval/10 {
		t.timeline.Buckets = append(t.timeline.Buckets, b)
	}
	t.spent.add(before.cpu, after.cpu, before.cmds, after.cmds, firstErr(before.cmdErr, after.cmdErr))
	t.lag.author, t.lag.followers = lag.author, lag.followers
	t.lag.timeouts += lag.timeouts
	t.lag.posts += lag.posts
	for _, s := range lag.samples {
		t.lag.samples = append(t.lag.samples, lagSample{at: t.elapsed + s.at, lag: s.lag})
	}
	t.elapsed += took
}

// mark is where an interval ended: time into the phase, and the CPU
// readings then.
type mark struct {
	at  time.Duration
	cpu cpuReading
}

// buckets closes an interval every cfg.Interval from start until the
// phase (phaseCtx) ends, and returns the end of the last one closed. The
// readings use ctx: one taken as the phase ends is finished all the same.
func (t *target) buckets(ctx, phaseCtx context.Context, start time.Time, cpu0 cpuReading) mark {
	prev := mark{cpu: cpu0}
	for i := 1; ; i++ {
		timer := time.NewTimer(time.Until(start.Add(time.Duration(i) * t.cfg.Interval)))
		select {
		case <-phaseCtx.Done():
			timer.Stop()
			return prev
		case <-timer.C:
		}
		// The interval's calls end here; its readings follow within
		// milliseconds.
		at, iv := time.Since(start), t.rec.cut()
		cpu := t.probe.cpu(ctx)
		t.timeline.Buckets = append(t.timeline.Buckets, iv.bucket(t.elapsed+at, at-prev.at, prev.cpu, cpu))
		prev = mark{at: at, cpu: cpu}
	}
}

// showProgress updates the status line until ctx ends.
func (t *target) showProgress(ctx context.Context, start time.Time, d time.Duration, label string) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	ops0, errs0 := t.ops.Load(), t.errs.Load()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t.progress.update(func() string {
				el := time.Since(start)
				n := t.ops.Load() - ops0
				return fmt.Sprintf("%s: %v of %v, %d operations (%.0f/s), %d errors",
					label, el.Round(time.Second), d, n, float64(n)/el.Seconds(), t.errs.Load()-errs0)
			})
		}
	}
}

// report fills rep with what the phases found.
func (t *target) report(rep *loadreport.Report) {
	secs := t.elapsed.Seconds()
	rep.Name, rep.URL, rep.Users, rep.Concurrency, rep.Seconds = t.name, t.cfg.URL, t.cfg.Users, t.cfg.Concurrency, secs
	rep.Errors = map[string]int{}
	posts, returns := t.lag.posts, 0
	for _, name := range t.opNames() {
		o := t.opReport(name, secs)
		for c, n := range o.Errors {
			rep.Errors[c] += n
		}
		if isWrite(name) {
			rep.Writes += o.Count
		} else {
			rep.Reads += o.Count
		}
		switch name {
		case opPublish:
			posts += o.Count - o.ErrorCount
		case opFeedReturn:
			returns = o.Count
		}
		rep.Ops = append(rep.Ops, o)
	}
	rep.PerSecond = float64(rep.Reads+rep.Writes) / secs
	tl := t.timeline
	rep.FanoutLag, tl.Lag = t.lagReport()
	rep.Cost = t.spent.cost(rep.Reads+rep.Writes, posts, t.cfg.MetricsURL)
	rep.Timeline = &tl
	rep.Workload = t.cfg.Workload
	if t.cfg.Workload == workloadLive {
		rep.Live = liveReport(rep, t.cfg.PageSize)
	}
	if t.cfg.DormantShare > 0 {
		if rep.Dormant == nil {
			rep.Dormant = &loadreport.DormantReport{}
		}
		d := rep.Dormant
		d.Share, d.ReturnRatio, d.Users = t.cfg.DormantShare, t.cfg.ReturnRatio, len(t.cfg.Dormant)
		d.Returned, d.Left = returns, t.pop.asleep()
	}
}

// opNames are the operations the report lists: a returning reader's first
// page after the first page's, with a dormant share; the live workload's
// one operation.
func (t *target) opNames() []string {
	if t.cfg.Workload == workloadLive {
		return []string{opLiveFresh}
	}
	if t.cfg.DormantShare <= 0 {
		return allOps
	}
	return slices.Insert(slices.Clone(allOps), slices.Index(allOps, opFeed)+1, opFeedReturn)
}

// opReport is one operation's figures over every worker and phase.
func (t *target) opReport(name string, secs float64) loadreport.OpReport {
	o := loadreport.OpReport{Name: name, Errors: map[string]int{}}
	var lat []time.Duration
	for _, w := range t.workers {
		if s := w.stats[name]; s != nil {
			lat = append(lat, s.lat...)
			for c, n := range s.errors {
				o.Errors[c] += n
				o.ErrorCount += n
			}
		}
	}
	o.Count = len(lat) + o.ErrorCount
	o.PerSecond = float64(o.Count) / secs
	slices.Sort(lat)
	o.P50, o.P95, o.P99 = ms(quantile(lat, 0.50)), ms(quantile(lat, 0.95)), ms(quantile(lat, 0.99))
	return o
}

// liveReport is the live workload's figures from its report, whose every
// operation is a first live page (opLiveFresh): its cost per operation is
// the cost per page.
func liveReport(rep *loadreport.Report, pageSize int) *loadreport.LiveReport {
	l := &loadreport.LiveReport{PageSize: pageSize}
	for _, o := range rep.Ops {
		if o.Name == opLiveFresh {
			l.Pages, l.Errors, l.PerSecond = o.Count, o.ErrorCount, o.PerSecond
		}
	}
	if c := rep.Cost; c != nil && l.Pages > 0 {
		if c.FeeddError == "" {
			v := c.FeeddMsPerOp
			l.FeeddMsPerPage = &v
		}
		if c.RedisError == "" {
			v := c.RedisMsPerOp
			l.RedisMsPerPage = &v
		}
		l.LoadMsPerPage = c.LoadMsPerOp
	}
	return l
}

// lagReport is the fan-out lag over every phase, and its samples to chart.
func (t *target) lagReport() (loadreport.LagReport, []loadreport.LagPoint) {
	l := loadreport.LagReport{Author: t.lag.author, Followers: t.lag.followers, Samples: len(t.lag.samples), Timeouts: t.lag.timeouts}
	var points []loadreport.LagPoint
	lags := make([]time.Duration, 0, len(t.lag.samples))
	for _, s := range t.lag.samples {
		lags = append(lags, s.lag)
		points = append(points, loadreport.LagPoint{At: s.at.Seconds(), Ms: ms(s.lag)})
	}
	slices.Sort(lags)
	l.P50, l.Max = ms(quantile(lags, 0.5)), ms(quantile(lags, 1))
	return l, points
}

// runLoad drives one server for cfg.Duration and fills rep.
func runLoad(ctx context.Context, cfg loadConfig, rep *loadreport.Report) error {
	t, err := newTarget(ctx, "", cfg)
	if err != nil {
		return err
	}
	if rep.Warm, err = t.warm(ctx); err != nil {
		return err
	}
	// With --subscribers, the load runs with them open.
	var rt *realtimeRun
	if cfg.Realtime.Subscribers > 0 {
		if rt, err = t.startRealtime(ctx); err != nil {
			return err
		}
		defer rt.close()
	}
	if cfg.Backlog != nil {
		rep.BacklogStart, _ = cfg.Backlog(ctx)
	}
	if err := t.phase(ctx, cfg.Duration, cfg.LagSamples, "load"); err != nil {
		return err
	}
	if cfg.Backlog != nil {
		rep.BacklogEnd, _ = cfg.Backlog(ctx)
	}
	t.report(rep)
	if rt != nil {
		rt.finish(ctx, rep)
	}
	return nil
}
