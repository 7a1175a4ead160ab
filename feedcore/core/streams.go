package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// The worker plumbing: consumer groups over each shard's streams, handing
// entries to handlers in order (or beside), acknowledging, reclaiming from
// crashed workers, dead letters, and how much is left to do. RunWorkers
// (workers.go) puts the handlers on it.

const (
	GroupDispatch = "dispatch"
	GroupExecute  = "execute"
	CheckpointTTL = 24 * time.Hour
)

// WorkerOptions tunes RunWorkers. Zero values take defaults.
type WorkerOptions struct {
	// Name prefixes this process's consumer names. Default "feedd".
	Name string
	// Executors is how many tasks run at once per stream shard. Default 4.
	Executors int
	// ReclaimIdle is how long an entry may stay unacknowledged before another
	// worker takes it over from a crashed one. Default 30s.
	ReclaimIdle time.Duration
	// MaxDeliveries is how often an entry is handed to a worker before it
	// is moved to the shard's dead-letter stream. Errors of an unreachable
	// Redis do not count: the worker holding the entry retries those
	// itself. Default 10.
	MaxDeliveries int
	// RepairAfter is the age after which a mutation still in the journal is
	// taken to have died and is completed by a worker. Keep it above the
	// longest a mutation's writes may take (the server's write timeout).
	// Default 30s.
	RepairAfter time.Duration
	// SweepEvery is how often quiet readers are demoted. Default 1m.
	SweepEvery time.Duration
	// Block is how long one stream read waits for news. Default 2s.
	Block time.Duration
	// StopGrace is how long a worker whose context ended still has to
	// finish the stream read under way and the entry in hand, and to
	// acknowledge it, before it drops it. Dropped, an entry stays pending
	// until another worker reclaims it ReclaimIdle later; and a read cut
	// short may have been answered already, leaving an entry pending on a
	// consumer that never saw it. Keep it above Block. Default 10s;
	// negative: none, the worker drops what it holds at once, as a crash
	// would (tests).
	StopGrace time.Duration
	// Logger receives errors. Default slog.Default().
	Logger *slog.Logger
	// AfterChunk, when set, is called after each chunk of inbox writes
	// that Redis confirmed, by the executor that wrote it: instrumentation,
	// with which tests stop a worker in the middle of a task.
	AfterChunk func()
}

func (o WorkerOptions) WithDefaults() WorkerOptions {
	SetDefault(&o.Name, "feedd")
	// One event's tasks all queue on its shard: its executors are the
	// fan-out's parallelism.
	SetDefault(&o.Executors, 4)
	SetDefault(&o.ReclaimIdle, 30*time.Second)
	SetDefault(&o.MaxDeliveries, 10)
	SetDefault(&o.RepairAfter, 30*time.Second)
	SetDefault(&o.SweepEvery, time.Minute)
	SetDefault(&o.Block, 2*time.Second)
	if o.StopGrace == 0 { // a negative one stays: none
		o.StopGrace = 10 * time.Second
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
	Repairs     int64 // journal entries of dead mutations completed
	DeadLetters int64 // entries moved to a dead-letter stream
	Slept       int64 // readers made dormant (their inboxes dropped)
	Woken       int64 // dormant readers back, their inboxes rebuilt
	// Reports is the reports this process filed (repeats not counted), by
	// reason (every one of ReportReasons, zero included).
	Reports map[string]int64
}

type counters struct {
	InboxWrites, Tasks, Events, Repairs, DeadLetters atomic.Int64
	Slept, Woken                                     atomic.Int64
	Reports                                          [8]atomic.Int64 // by ReportReasons' index
}

// Stream is one consumer group's view of one shard's stream.
type Stream struct {
	Shard int
	Key   string
	Group string
	Name  string // "events" or "tasks", for logs and metrics
	// beside, when set, tells the entries a consumer may handle beside the
	// ones after it instead of in order.
	beside func(rueidis.XRangeEntry) bool
}

func (s *Service) EventStream(shard int) Stream {
	return Stream{Shard: shard, Key: s.Keys.Events(shard), Group: GroupDispatch, Name: "events", beside: isUpgrade}
}

// isUpgrade: a reader's upgrade is independent of the events after it (it
// joins active sets before it backfills, whatever is published meanwhile),
// so it runs beside them and a burst of returning readers does not hold
// publishes back.
func isUpgrade(e rueidis.XRangeEntry) bool { return e.FieldValues["t"] == EvActivate }

func (s *Service) TaskStream(shard int) Stream {
	return Stream{Shard: shard, Key: s.Keys.Tasks(shard), Group: GroupExecute, Name: "tasks"}
}

// handler handles one stream entry delivered to consumer, a worker run
// with o. acked reports that the handler acknowledged the entry itself
// (atomically with its last write); otherwise handle acknowledges it after
// a nil error.
type handler func(ctx context.Context, o WorkerOptions, st Stream, consumer string, e rueidis.XRangeEntry) (acked bool, err error)

// ErrMalformed marks an entry no worker can ever handle.
var ErrMalformed = errors.New("malformed entry")

// maxBeside bounds the entries one consumer handles beside the others.
const maxBeside = 16

// Consume reads new entries of st and handles them one by one (those
// st.beside picks beside the others), so the stream's length is the work
// not yet done. Once ctx ends it reads no more, but finishes the read
// under way and the entries it got, within o.StopGrace: they are this
// consumer's alone until acknowledged.
func (s *Service) Consume(ctx context.Context, o WorkerOptions, st Stream, consumer string, h handler) {
	work, stop := withStopGrace(ctx, o.StopGrace)
	defer stop()
	besides := make(chan struct{}, maxBeside)
	var wg sync.WaitGroup
	defer wg.Wait()
	for ctx.Err() == nil {
		// One entry at a time: entries fetched ahead would sit pending and
		// idle, and the reclaimer would hand them to a second worker.
		res, err := s.Redis.Do(work, s.Redis.B().Xreadgroup().Group(st.Group, consumer).Count(1).
			Block(o.Block.Milliseconds()).Streams().Key(st.Key).Id(">").Build()).AsXRead()
		if err != nil {
			if !rueidis.IsRedisNil(err) && ctx.Err() == nil {
				o.Logger.Warn("fan-out: read stream", "stream", st.Key, "err", err)
				if strings.Contains(err.Error(), "NOGROUP") {
					_ = s.ensureGroup(ctx, st)
				}
				SleepCtx(ctx, time.Second)
			}
			continue
		}
		for _, e := range res[st.Key] {
			if st.beside != nil && st.beside(e) {
				// Acked when done, so the stream still counts it until then.
				select {
				case besides <- struct{}{}:
				case <-ctx.Done():
					// Stopping with every slot taken: finish it here.
					s.handle(work, o, st, consumer, e, h)
					continue
				}
				wg.Add(1)
				go func() {
					defer func() { <-besides; wg.Done() }()
					s.handle(work, o, st, consumer, e, h)
				}()
				continue
			}
			s.handle(work, o, st, consumer, e, h)
		}
	}
}

// withStopGrace returns a context with ctx's values that ends grace after
// ctx does (with ctx, for a negative grace), and its cancel.
func withStopGrace(ctx context.Context, grace time.Duration) (context.Context, context.CancelFunc) {
	if grace < 0 {
		return context.WithCancel(ctx)
	}
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stopAfter := context.AfterFunc(ctx, func() { time.AfterFunc(grace, cancel) })
	return work, func() { stopAfter(); cancel() }
}

// handle runs h and acknowledges e. An entry that can never succeed goes
// to the dead letters at once. Errors of an unreachable Redis (a failover,
// a restart) are retried here with backoff for as long as it takes: they
// say nothing about the entry. Any other failure leaves e pending; the
// reclaimer retries it after ReclaimIdle, and dead-letters it after
// MaxDeliveries.
func (s *Service) handle(ctx context.Context, o WorkerOptions, st Stream, consumer string, e rueidis.XRangeEntry, h handler) {
	backoff := 50 * time.Millisecond
	for {
		acked, err := h(ctx, o, st, consumer, e)
		switch {
		case err == nil:
			if !acked {
				s.ack(ctx, o, st, e.ID)
			}
			return
		case errors.Is(err, ErrMalformed):
			s.deadLetter(ctx, o, st, e.ID, err.Error())
			return
		case ctx.Err() != nil:
			return
		case !store.IsUnavailable(err):
			o.Logger.Error("fan-out: entry failed, will retry", "stream", st.Key, "id", e.ID, "err", err)
			return
		}
		o.Logger.Warn("fan-out: Redis unavailable, retrying", "stream", st.Key, "id", e.ID, "in", backoff, "err", err)
		if !SleepCtx(ctx, backoff) {
			return
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (s *Service) ack(ctx context.Context, o WorkerOptions, st Stream, id string) {
	// Acknowledge and delete in one step (one slot): the stream's length
	// stays the work not yet done.
	err := s.Do(ctx, ackEntry.Cmd(s.Redis.B(), []string{st.Key}, []string{id, st.Group})).Error()
	if err != nil && ctx.Err() == nil {
		o.Logger.Error("fan-out: ack", "stream", st.Key, "id", id, "err", err)
	}
}

// ackEntry acknowledges the entry ARGV[1] of the stream KEYS[1] for group
// ARGV[2] and deletes it.
var ackEntry = store.NewScript(false, `
redis.call('XACK', KEYS[1], ARGV[2], ARGV[1])
return redis.call('XDEL', KEYS[1], ARGV[1])
`)

// ReclaimStream lists st's entries idle past ReclaimIdle with how often
// each was delivered (XPENDING), dead-letters those delivered
// MaxDeliveries times, and claims and handles the others.
func (s *Service) ReclaimStream(ctx context.Context, o WorkerOptions, st Stream, consumer string, h handler) {
	idle := o.ReclaimIdle.Milliseconds()
	res, err := s.Redis.Do(ctx, s.Redis.B().Xpending().Key(st.Key).Group(st.Group).Idle(idle).
		Start("-").End("+").Count(64).Build()).ToArray()
	if err != nil {
		if ctx.Err() == nil && !strings.Contains(err.Error(), "NOGROUP") {
			o.Logger.Warn("fan-out: list pending entries", "stream", st.Key, "err", err)
		}
		return
	}
	for _, row := range res {
		f, err := row.ToArray()
		if err != nil || len(f) < 4 {
			continue
		}
		id, _ := f[0].ToString()
		deliveries, _ := f[3].AsInt64()
		if deliveries >= int64(o.MaxDeliveries) {
			s.deadLetter(ctx, o, st, id, fmt.Sprintf("delivered %d times without success", deliveries))
			continue
		}
		claimed, err := s.Redis.Do(ctx, s.Redis.B().Xclaim().Key(st.Key).Group(st.Group).Consumer(consumer).
			MinIdleTime(Itoa64(idle)).Id(id).Build()).AsXRange()
		if err != nil {
			if ctx.Err() == nil {
				o.Logger.Warn("fan-out: claim", "stream", st.Key, "id", id, "err", err)
			}
			return
		}
		for _, e := range claimed {
			if e.FieldValues == nil {
				s.ack(ctx, o, st, e.ID) // deleted meanwhile: nothing left to do
				continue
			}
			s.handle(ctx, o, st, consumer, e, h)
		}
	}
}

// moveToDeadLetters copies the entry ARGV[1] of the stream KEYS[1], with
// why (ARGV[3]) and where from (ARGV[4]), to the dead-letter stream
// KEYS[2], then acknowledges (group ARGV[2], if any) and deletes it: one
// step.
var moveToDeadLetters = store.NewScript(false, `
local e = redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1])
local fields = {'dl.stream', ARGV[4], 'dl.id', ARGV[1], 'dl.reason', ARGV[3]}
if #e > 0 then for _, v in ipairs(e[1][2]) do fields[#fields + 1] = v end end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', '100000', '*', unpack(fields))
if ARGV[2] ~= '' then redis.call('XACK', KEYS[1], ARGV[2], ARGV[1]) end
redis.call('XDEL', KEYS[1], ARGV[1])
return #e
`)

// deadLetter gives up on an entry: it moves to the shard's dead-letter
// stream, where an operator can read why (XRANGE), and is logged and
// counted.
func (s *Service) deadLetter(ctx context.Context, o WorkerOptions, st Stream, id, reason string) {
	err := s.Do(ctx, moveToDeadLetters.Cmd(s.Redis.B(), []string{st.Key, s.Keys.DeadLetters(st.Shard)},
		[]string{id, st.Group, reason, st.Name})).Error()
	if err != nil {
		o.Logger.Error("fan-out: dead-lettering failed, will retry", "stream", st.Key, "id", id, "reason", reason, "err", err)
		return
	}
	s.Counters.DeadLetters.Add(1)
	o.Logger.Error("fan-out: entry moved to the dead letters", "stream", st.Key, "id", id, "reason", reason,
		"dead_letters", s.Keys.DeadLetters(st.Shard))
}

// Drain waits until every queued event, task, journal entry and safety
// clean-up has been handled (by this process's workers or any other's), or
// ctx ends.
func (s *Service) Drain(ctx context.Context) (err error) {
	defer store.Wrap(&err, "drain the fan-out")
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		n, err := s.StreamsLen(ctx, s.Keys.Events, s.Keys.Tasks, s.Keys.Journal, s.Keys.Cleanup)
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

// Backlog is how many events, tasks and journal entries are not yet done
// (/readyz and the fan-out gauge; safety clean-ups are CleanupBacklog).
func (s *Service) Backlog(ctx context.Context) (_ int64, err error) {
	defer store.Wrap(&err, "read fan-out backlog")
	return s.StreamsLen(ctx, s.Keys.Events, s.Keys.Tasks, s.Keys.Journal)
}

// DeadLetters is how many entries the dead-letter streams hold.
func (s *Service) DeadLetters(ctx context.Context) (_ int64, err error) {
	defer store.Wrap(&err, "read dead letters")
	return s.StreamsLen(ctx, s.Keys.DeadLetters)
}

// StreamsLen adds up the lengths of the streams that kinds name, on every
// shard, in one round trip.
func (s *Service) StreamsLen(ctx context.Context, kinds ...func(shard int) string) (int64, error) {
	cmds := make([]rueidis.Completed, 0, len(kinds)*s.Opts.StreamShards)
	for sh := 0; sh < s.Opts.StreamShards; sh++ {
		for _, key := range kinds {
			cmds = append(cmds, s.Redis.B().Xlen().Key(key(sh)).Build())
		}
	}
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs); err != nil {
		return 0, err
	}
	var n int64
	for _, r := range rs {
		v, _ := r.AsInt64()
		n += v
	}
	return n, nil
}

// SleepCtx waits d; false when ctx ended first.
func SleepCtx(ctx context.Context, d time.Duration) bool {
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

// Pending reads the fan-out streams' pending summaries, added up over the
// shards, in one round trip. A stream whose group does not exist yet (no
// worker ever ran) has none.
func (s *Service) Pending(ctx context.Context) (_ []StreamPending, err error) {
	defer store.Wrap(&err, "read pending entries")
	var streams []Stream
	for sh := 0; sh < s.Opts.StreamShards; sh++ {
		streams = append(streams, s.EventStream(sh), s.TaskStream(sh))
	}
	summary := func(st Stream) rueidis.Completed { return s.Redis.B().Xpending().Key(st.Key).Group(st.Group).Build() }
	out := []StreamPending{{Stream: "events"}, {Stream: "tasks"}}
	for i, r := range s.DoMulti(ctx, store.CmdsFor(streams, summary)...) {
		sum := &out[i%2]
		arr, err := r.ToArray()
		if err != nil {
			if store.IsUnavailable(err) {
				return nil, err
			}
			continue // NOGROUP: nothing pending
		}
		if len(arr) < 2 {
			continue
		}
		n, _ := arr[0].AsInt64()
		sum.Count += n
		if minID, err := arr[1].ToString(); err == nil {
			if ms, err := strconv.ParseInt(strings.SplitN(minID, "-", 2)[0], 10, 64); err == nil {
				sum.Oldest = max(sum.Oldest, s.Opts.Now().Sub(time.UnixMilli(ms)))
			}
		}
	}
	return out, nil
}

// EnsureGroups creates the consumer group of each stream kinds makes, on
// every shard, where it does not exist yet.
func (s *Service) EnsureGroups(ctx context.Context, kinds ...func(shard int) Stream) error {
	for sh := 0; sh < s.Opts.StreamShards; sh++ {
		for _, kind := range kinds {
			if err := s.ensureGroup(ctx, kind(sh)); err != nil {
				return err
			}
		}
	}
	return nil
}

// ensureGroup creates st's consumer group (and the stream) unless it
// exists.
func (s *Service) ensureGroup(ctx context.Context, st Stream) error {
	err := s.Redis.Do(ctx, s.Redis.B().XgroupCreate().Key(st.Key).Group(st.Group).Id("0").Mkstream().Build()).Error()
	if err != nil && !strings.Contains(err.Error(), "BUSYGROUP") {
		return fmt.Errorf("create consumer group %s on %s: %w", st.Group, st.Key, err)
	}
	return nil
}
