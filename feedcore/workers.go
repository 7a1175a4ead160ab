package feedcore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

const (
	groupDispatch = "dispatch"
	groupExecute  = "execute"
	checkpointTTL = 24 * time.Hour
)

// WorkerOptions tunes RunWorkers. Zero values take defaults.
type WorkerOptions struct {
	// Name prefixes this process's consumer names. Default "feedd".
	Name string
	// Executors is how many tasks run at once. Default 4.
	Executors int
	// ReclaimIdle is how long an entry may stay unacknowledged before another
	// worker takes it over from a crashed one. Default 30s.
	ReclaimIdle time.Duration
	// SweepEvery is how often quiet readers are demoted. Default 1m.
	SweepEvery time.Duration
	// Block is how long one stream read waits for news. Default 2s.
	Block time.Duration
	// Logger receives errors. Default slog.Default().
	Logger *slog.Logger
}

func (o WorkerOptions) withDefaults() WorkerOptions {
	if o.Name == "" {
		o.Name = "feedd"
	}
	if o.Executors <= 0 {
		o.Executors = 4
	}
	if o.ReclaimIdle <= 0 {
		o.ReclaimIdle = 30 * time.Second
	}
	if o.SweepEvery <= 0 {
		o.SweepEvery = time.Minute
	}
	if o.Block <= 0 {
		o.Block = 2 * time.Second
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Stats counts work done by this process.
type Stats struct {
	InboxWrites int64 // inbox writes and removals by fan-out
	Tasks       int64 // fan-out tasks finished
	Events      int64 // events handled
}

type stats struct{ inboxWrites, tasks, events atomic.Int64 }

// Stats returns this process's counters.
func (s *Service) Stats() Stats {
	return Stats{InboxWrites: s.stats.inboxWrites.Load(), Tasks: s.stats.tasks.Load(), Events: s.stats.events.Load()}
}

// RunWorkers runs the fan-out pipeline until ctx ends: a dispatcher that
// turns events into tasks, executors that write inboxes, a reclaimer that
// takes over entries a crashed worker left pending, and the sweeper. Any
// number of processes may run it against one Redis.
func (s *Service) RunWorkers(ctx context.Context, o WorkerOptions) error {
	o = o.withDefaults()
	if err := s.ensureGroups(ctx); err != nil {
		return err
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	name := o.Name + "-" + hex.EncodeToString(suffix[:])
	var wg sync.WaitGroup
	run := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	run(func() { s.consume(ctx, o, s.k.events(), groupDispatch, name+"-d", s.handleEvent) })
	for i := 0; i < o.Executors; i++ {
		consumer := name + "-x" + itoa(i)
		run(func() { s.consume(ctx, o, s.k.tasks(), groupExecute, consumer, s.handleTask) })
	}
	run(func() { s.reclaim(ctx, o, name+"-r") })
	run(func() { s.sweepLoop(ctx, o) })
	wg.Wait()
	return nil
}

func (s *Service) ensureGroups(ctx context.Context) error {
	for _, g := range [][2]string{{s.k.events(), groupDispatch}, {s.k.tasks(), groupExecute}} {
		err := s.c.Do(ctx, s.c.B().XgroupCreate().Key(g[0]).Group(g[1]).Id("0").Mkstream().Build()).Error()
		if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
			return err
		}
	}
	return nil
}

// handler handles one stream entry delivered to consumer.
type handler func(ctx context.Context, consumer string, e rueidis.XRangeEntry) error

// consume reads new entries of stream for group and handles them one by
// one, acknowledging and deleting each once handled, so the stream's length
// is the work not yet done.
func (s *Service) consume(ctx context.Context, o WorkerOptions, stream, group, consumer string, h handler) {
	for ctx.Err() == nil {
		// One entry at a time: entries fetched ahead would sit pending and
		// idle, and the reclaimer would hand them to a second worker.
		res, err := s.c.Do(ctx, s.c.B().Xreadgroup().Group(group, consumer).Count(1).
			Block(o.Block.Milliseconds()).Streams().Key(stream).Id(">").Build()).AsXRead()
		if err != nil {
			if !rueidis.IsRedisNil(err) && ctx.Err() == nil {
				o.Logger.Error("fan-out: read stream", "stream", stream, "err", err)
				if strings.Contains(err.Error(), "NOGROUP") {
					_ = s.ensureGroups(ctx)
				}
				sleepCtx(ctx, time.Second)
			}
			continue
		}
		for _, e := range res[stream] {
			s.handle(ctx, o, stream, group, consumer, e, h)
		}
	}
}

// handle runs h and acknowledges e; on failure e stays pending and the
// reclaimer retries it after ReclaimIdle.
func (s *Service) handle(ctx context.Context, o WorkerOptions, stream, group, consumer string, e rueidis.XRangeEntry, h handler) {
	if err := h(ctx, consumer, e); err != nil {
		if ctx.Err() == nil {
			o.Logger.Error("fan-out: entry failed, will retry", "stream", stream, "id", e.ID, "err", err)
		}
		return
	}
	rs := s.c.DoMulti(ctx,
		s.c.B().Xack().Key(stream).Group(group).Id(e.ID).Build(),
		s.c.B().Xdel().Key(stream).Id(e.ID).Build())
	if err := firstErr(rs); err != nil && ctx.Err() == nil {
		o.Logger.Error("fan-out: ack", "stream", stream, "id", e.ID, "err", err)
	}
}

func (s *Service) handleEvent(ctx context.Context, _ string, e rueidis.XRangeEntry) error {
	ev, err := parseEvent(e.FieldValues)
	if err != nil {
		return nil // malformed: acknowledge and drop rather than retry forever
	}
	s.stats.events.Add(1)
	switch ev.Type {
	case evPublish, evDelete, evReplay:
		return s.dispatch(ctx, e.ID, ev)
	case evPromote:
		return s.promote(ctx, ev.User)
	case evActivate:
		return s.upgrade(ctx, ev.User)
	}
	return nil
}

func (s *Service) handleTask(ctx context.Context, consumer string, e rueidis.XRangeEntry) error {
	t, err := parseTask(e)
	if err != nil {
		return nil
	}
	t.Consumer = consumer
	if err := s.execute(ctx, t); err != nil {
		return err
	}
	s.stats.tasks.Add(1)
	return nil
}

// reclaim takes over entries left pending longer than ReclaimIdle by a
// worker that died, and finishes them; tasks resume from their checkpoint.
func (s *Service) reclaim(ctx context.Context, o WorkerOptions, consumer string) {
	every := o.ReclaimIdle / 2
	for sleepCtx(ctx, every) {
		s.reclaimStream(ctx, o, s.k.tasks(), groupExecute, consumer, s.handleTask)
		s.reclaimStream(ctx, o, s.k.events(), groupDispatch, consumer, s.handleEvent)
	}
}

func (s *Service) reclaimStream(ctx context.Context, o WorkerOptions, stream, group, consumer string, h handler) {
	start := "0-0"
	for ctx.Err() == nil {
		arr, err := s.c.Do(ctx, s.c.B().Xautoclaim().Key(stream).Group(group).Consumer(consumer).
			MinIdleTime(itoa64(o.ReclaimIdle.Milliseconds())).Start(start).Count(16).Build()).ToArray()
		if err != nil || len(arr) < 2 {
			return
		}
		entries, _ := arr[1].AsXRange()
		for _, e := range entries {
			if e.FieldValues == nil {
				continue // deleted meanwhile
			}
			s.handle(ctx, o, stream, group, consumer, e, h)
		}
		start, _ = arr[0].ToString()
		if start == "0-0" || start == "" {
			return
		}
	}
}

func (s *Service) sweepLoop(ctx context.Context, o WorkerOptions) {
	for sleepCtx(ctx, o.SweepEvery) {
		for {
			n, err := s.Sweep(ctx, 100)
			if err != nil && ctx.Err() == nil {
				o.Logger.Error("sweeper", "err", err)
			}
			if n < 100 || err != nil {
				break
			}
		}
	}
}

// Drain waits until every queued event and task has been handled (by this
// process's workers or any other's), or ctx ends.
func (s *Service) Drain(ctx context.Context) error {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		n, err := s.Backlog(ctx)
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(ctx.Err(), errors.New("fan-out did not drain: are workers running?"))
		case <-t.C:
		}
	}
}

// Backlog is how many events and tasks are not yet done.
func (s *Service) Backlog(ctx context.Context) (int64, error) {
	rs := s.c.DoMulti(ctx, s.c.B().Xlen().Key(s.k.events()).Build(), s.c.B().Xlen().Key(s.k.tasks()).Build())
	if err := firstErr(rs); err != nil {
		return 0, err
	}
	a, _ := rs[0].AsInt64()
	b, _ := rs[1].AsInt64()
	return a + b, nil
}

// sleepCtx waits d; false when ctx ended first.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// StreamPending is one fan-out stream's delivered but unacknowledged
// entries, and the age of the oldest of them.
type StreamPending struct {
	Stream string // "events" or "tasks"
	Count  int64
	Oldest time.Duration
}

// Pending reads both fan-out streams' pending summaries in one round trip.
// A stream whose group does not exist yet (no worker ever ran) has none.
func (s *Service) Pending(ctx context.Context) ([]StreamPending, error) {
	streams := []struct{ name, key, group string }{
		{"events", s.k.events(), groupDispatch},
		{"tasks", s.k.tasks(), groupExecute},
	}
	cmds := make([]rueidis.Completed, len(streams))
	for i, st := range streams {
		cmds[i] = s.c.B().Xpending().Key(st.key).Group(st.group).Build()
	}
	out := make([]StreamPending, len(streams))
	for i, r := range s.doMulti(ctx, cmds...) {
		out[i].Stream = streams[i].name
		arr, err := r.ToArray()
		if err != nil {
			if isUnavailable(err) {
				return nil, err
			}
			continue // NOGROUP: nothing pending
		}
		if len(arr) < 2 {
			continue
		}
		out[i].Count, _ = arr[0].AsInt64()
		if minID, err := arr[1].ToString(); err == nil {
			if ms, err := strconv.ParseInt(strings.SplitN(minID, "-", 2)[0], 10, 64); err == nil {
				out[i].Oldest = max(0, s.o.Now().Sub(time.UnixMilli(ms)))
			}
		}
	}
	return out, nil
}
