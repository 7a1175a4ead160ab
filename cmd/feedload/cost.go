package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/redis/rueidis"

	"github.com/feedd/feedd/cmd/feedload/loadreport"
	"github.com/feedd/feedd/internal/redisinfo"
)

// cpuMetric is the process collector's counter that feedd's /metrics
// serves (client_golang's collectors.NewProcessCollector).
const cpuMetric = "process_cpu_seconds_total"

// processedMetric{kind="inbox_writes"} is the inbox writes of the fan-out
// workers of the process serving the /metrics (feedcore's Stats).
const (
	processedMetric = "feedd_fanout_processed_total"
	inboxWritesKind = "inbox_writes"
	inboxWritesName = processedMetric + `{kind="` + inboxWritesKind + `"}`
)

// errNoInboxWrites: a feedd from before the metric, or not feedd.
var errNoInboxWrites = errors.New("no " + inboxWritesName + " on feedd's /metrics (an older feedd?)")

// feeddMetrics are the figures read from one scrape of feedd's /metrics:
// its CPU time, its workers' inbox writes (inboxErr when absent), and the
// gauges --subscribers reads, where it serves them (summed over labels).
type feeddMetrics struct {
	cpu         float64
	inboxWrites float64
	inboxErr    error
	gauges      map[string]float64
}

// The gauges --subscribers reads: feedd's memory (the process collector's
// and the Go collector's) and its open subscriptions.
const (
	rssMetric           = "process_resident_memory_bytes"
	heapInuseMetric     = "go_memstats_heap_inuse_bytes"
	subscriptionsMetric = "feedd_realtime_subscriptions"
)

// metricsURL is where feedd's CPU is read: ops, feedd's ops listener
// (serve --ops-addr; a base URL, /metrics added, or the full URL), when
// given, else /metrics beside the GraphQL endpoint.
func metricsURL(graphqlURL, ops string) (string, error) {
	raw := graphqlURL
	if ops != "" {
		raw = ops
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", fmt.Errorf("metrics URL from %q: not an absolute URL", raw)
	}
	if ops == "" || u.Path == "" || u.Path == "/" {
		u.Path = "/metrics"
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

// scrapeMetrics reads the /metrics at u: the CPU time of the process
// serving it (an error without it), and its inbox writes.
func scrapeMetrics(ctx context.Context, hc *http.Client, u string) (feeddMetrics, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return feeddMetrics{}, fmt.Errorf("scrape %s: %w", u, err)
	}
	res, err := hc.Do(req)
	if err != nil {
		return feeddMetrics{}, fmt.Errorf("scrape %s: %w", u, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return feeddMetrics{}, fmt.Errorf("scrape %s: status %s", u, res.Status)
	}
	m, err := parseMetrics(res.Body, expfmt.ResponseFormat(res.Header))
	if err != nil {
		return feeddMetrics{}, fmt.Errorf("scrape %s: %w", u, err)
	}
	return m, nil
}

// parseMetrics finds process_cpu_seconds_total (an error without it) and
// feedd_fanout_processed_total{kind="inbox_writes"} (inboxErr without it)
// in a metrics exposition.
func parseMetrics(r io.Reader, format expfmt.Format) (feeddMetrics, error) {
	m := feeddMetrics{inboxErr: errNoInboxWrites, gauges: map[string]float64{}}
	cpu := false
	dec := expfmt.NewDecoder(r, format)
	for {
		var mf dto.MetricFamily
		if err := dec.Decode(&mf); err != nil {
			if !errors.Is(err, io.EOF) {
				return feeddMetrics{}, fmt.Errorf("parse the exposition: %w", err)
			}
			if !cpu {
				return feeddMetrics{}, fmt.Errorf("no %s (is it feedd's /metrics?)", cpuMetric)
			}
			return m, nil
		}
		switch mf.GetName() {
		case cpuMetric:
			if len(mf.GetMetric()) == 1 {
				m.cpu, cpu = value(mf.GetMetric()[0])
			}
		case rssMetric, heapInuseMetric, subscriptionsMetric:
			for _, s := range mf.GetMetric() {
				if v, ok := value(s); ok {
					m.gauges[mf.GetName()] += v
				}
			}
		case processedMetric:
			for _, s := range mf.GetMetric() {
				if label(s, "kind") != inboxWritesKind {
					continue
				}
				if v, ok := value(s); ok {
					m.inboxWrites, m.inboxErr = v, nil
				}
			}
		}
	}
}

// value is a counter's, a gauge's or an untyped sample's value.
func value(m *dto.Metric) (float64, bool) {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue(), true
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue(), true
	case m.GetUntyped() != nil:
		return m.GetUntyped().GetValue(), true
	}
	return 0, false
}

// label is m's label name, or "".
func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// costProbe reads what feedd and Redis have spent so far; redis nil
// (no --redis): no Redis figures.
type costProbe struct {
	hc         *http.Client
	metricsURL string
	redis      rueidis.Client
}

var errNoRedis = errors.New("no --redis to read INFO from")

// cpuReading is feedd's and Redis's CPU time at one moment, and feedd's
// inbox writes so far; an error says why a figure is missing.
type cpuReading struct {
	feedd    float64
	feeddErr error
	inbox    float64
	inboxErr error
	redis    redisinfo.CPU
	masters  redisinfo.Masters
	redisErr error
	self     float64 // feedload's own CPU
	selfErr  error
}

func (p *costProbe) cpu(ctx context.Context) cpuReading {
	var r cpuReading
	m, err := scrapeMetrics(ctx, p.hc, p.metricsURL)
	r.feedd, r.feeddErr, r.inbox, r.inboxErr = m.cpu, err, m.inboxWrites, firstErr(err, m.inboxErr)
	r.self, r.selfErr = selfCPU()
	r.redisErr = errNoRedis
	if p.redis != nil {
		r.redis, r.masters, r.redisErr = redisinfo.ReadCPU(ctx, p.redis)
	}
	return r
}

func (p *costProbe) commands(ctx context.Context) (redisinfo.Commands, error) {
	if p.redis == nil {
		return nil, errNoRedis
	}
	c, _, err := redisinfo.ReadCommands(ctx, p.redis)
	return c, err
}

// perOp is the CPU an operation cost feedd and Redis between two
// readings, in milliseconds; nil where a reading failed or no operation ran.
func perOp(before, after cpuReading, ops int) (feedd, redis *float64) {
	if ops == 0 {
		return nil, nil
	}
	ms := func(s float64) *float64 { v := 1000 * s / float64(ops); return &v }
	if before.feeddErr == nil && after.feeddErr == nil {
		feedd = ms(after.feedd - before.feedd)
	}
	if before.redisErr == nil && after.redisErr == nil {
		redis = ms(after.redis.Sub(before.redis).Total())
	}
	return feedd, redis
}

// spent adds up what a server's phases cost; the first error of each kind
// is kept and marks the figure as not measured.
type spent struct {
	feedd                                float64
	inbox                                float64 // feedd's inbox writes
	redis                                redisinfo.CPU
	masters                              redisinfo.Masters
	commands                             redisinfo.Commands
	self                                 float64 // feedload's own CPU
	feeddErr, inboxErr, redisErr, cmdErr error
	selfErr                              error
	phases                               int
}

func (s *spent) add(before, after cpuReading, cmdBefore, cmdAfter redisinfo.Commands, cmdErr error) {
	s.feeddErr = firstErr(s.feeddErr, before.feeddErr, after.feeddErr)
	s.inboxErr = firstErr(s.inboxErr, before.inboxErr, after.inboxErr)
	s.inbox += after.inbox - before.inbox
	s.redisErr = firstErr(s.redisErr, before.redisErr, after.redisErr)
	s.cmdErr = firstErr(s.cmdErr, cmdErr)
	s.feedd += after.feedd - before.feedd
	s.selfErr = firstErr(s.selfErr, before.selfErr, after.selfErr)
	s.self += after.self - before.self
	if d := after.redis.Sub(before.redis); s.phases == 0 {
		s.redis = d
	} else {
		s.redis = s.redis.Add(d)
	}
	s.masters = after.masters
	if s.cmdErr == nil {
		if s.commands == nil {
			s.commands = redisinfo.Commands{}
		}
		s.commands.Add(cmdAfter.Sub(cmdBefore))
	}
	s.phases++
}

// firstErr is the first error that is not nil.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// cost is the report's cost figures for ops operations, which published
// posts posts.
func (s *spent) cost(ops, posts int, metricsURL string) *loadreport.Cost {
	c := &loadreport.Cost{MetricsURL: metricsURL, FeeddCPUSeconds: s.feedd,
		RedisMasters: int(s.masters), RedisCPUSeconds: s.redis.Total(), Posts: posts}
	if s.inboxErr != nil {
		c.InboxWritesError = s.inboxErr.Error()
	} else {
		c.InboxWrites = int64(math.Round(s.inbox))
		if posts > 0 {
			v := s.inbox / float64(posts)
			c.InboxWritesPerPost = &v
		}
	}
	perOp := func(sec float64) float64 {
		if ops == 0 {
			return 0
		}
		return 1000 * sec / float64(ops)
	}
	c.FeeddMsPerOp, c.RedisMsPerOp = perOp(s.feedd), perOp(s.redis.Total())
	if s.redis.Main {
		m := perOp(s.redis.MainTotal())
		c.RedisMainMsPerOp = &m
	}
	if s.selfErr == nil && ops > 0 {
		v := perOp(s.self)
		c.LoadMsPerOp = &v
	}
	if s.feeddErr != nil {
		c.FeeddError = s.feeddErr.Error()
	}
	if s.redisErr != nil {
		c.RedisError = s.redisErr.Error()
	}
	if s.cmdErr != nil {
		c.CommandsError = s.cmdErr.Error()
		return c
	}
	c.Commands = commandReports(s.commands, ops)
	return c
}

// commandReports are the commands busiest first (by total time, then
// calls, then name), with their share of the time of all of them.
func commandReports(cmds redisinfo.Commands, ops int) []loadreport.CommandReport {
	var total int64
	for _, c := range cmds {
		total += c.Usec
	}
	out := make([]loadreport.CommandReport, 0, len(cmds))
	for name, c := range cmds {
		r := loadreport.CommandReport{Name: strings.ToUpper(name), Calls: c.Calls, Usec: c.Usec,
			UsecPerCall: float64(c.Usec) / float64(c.Calls)}
		if ops > 0 {
			r.CallsPerOp = float64(c.Calls) / float64(ops)
		}
		if total > 0 {
			r.Share = float64(c.Usec) / float64(total)
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b loadreport.CommandReport) int {
		return cmp.Or(cmp.Compare(b.Usec, a.Usec), cmp.Compare(b.Calls, a.Calls), strings.Compare(a.Name, b.Name))
	})
	return out
}
