package feedcore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"sync"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/lists"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/redis/rueidis"
)

// Stats returns this process's counters.
func (s *Service) Stats() core.Stats {
	st := core.Stats{InboxWrites: s.Counters.InboxWrites.Load(), Tasks: s.Counters.Tasks.Load(), Events: s.Counters.Events.Load(),
		Repairs: s.Counters.Repairs.Load(), DeadLetters: s.Counters.DeadLetters.Load(), Reports: map[string]int64{},
		Slept: s.Counters.Slept.Load(), Woken: s.Counters.Woken.Load()}
	for i, r := range ReportReasons {
		st.Reports[r] = s.Counters.Reports[i].Load()
	}
	return st
}

// RunWorkers runs the fan-out pipeline until ctx ends: per stream shard a
// dispatcher that turns events into tasks, executors that write inboxes
// and a consumer of the safety clean-ups; a reclaimer that takes over entries a crashed worker left
// pending; the journal repairer and the sweeper. Any number of processes
// may run it against one Redis.
func (s *Service) RunWorkers(ctx context.Context, o WorkerOptions) (err error) {
	defer store.Wrap(&err, "run fan-out workers")
	o = o.WithDefaults()
	if err := s.EnsureGroups(ctx, s.EventStream, s.TaskStream, s.CleanupStream); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return err
	}
	var suffix [4]byte
	_, _ = rand.Read(suffix[:])
	name := o.Name + "-" + hex.EncodeToString(suffix[:])
	var wg sync.WaitGroup
	run := func(f func()) { wg.Add(1); go func() { defer wg.Done(); f() }() }
	for sh := 0; sh < s.Opts.StreamShards; sh++ {
		run(func() { s.Consume(ctx, o, s.EventStream(sh), name+"-d", s.handleEvent) })
		for i := 0; i < o.Executors; i++ {
			consumer := name + "-x" + store.Itoa(i)
			run(func() { s.Consume(ctx, o, s.TaskStream(sh), consumer, s.handleTask) })
		}
		run(func() { s.Consume(ctx, o, s.CleanupStream(sh), name+"-c", s.HandleCleanup) })
	}
	run(func() { s.reclaim(ctx, o, name+"-r") })
	run(func() { s.RepairLoop(ctx, o) })
	run(func() { s.MuteEndLoop(ctx, o) })
	run(func() { s.SecondPassLoop(ctx, o) })
	run(func() { s.sweepLoop(ctx, o) })
	wg.Wait()
	return nil
}

func (s *Service) handleEvent(ctx context.Context, _ WorkerOptions, st core.Stream, _ string, e rueidis.XRangeEntry) (bool, error) {
	ev, err := core.ParseEvent(e.FieldValues, st.Shard)
	if err != nil {
		return false, fmt.Errorf("%w: %w", core.ErrMalformed, err)
	}
	s.Counters.Events.Add(1)
	switch ev.Type {
	case core.EvPublish:
		p, err := ev.Post(ev.Item.ID, ev.User, ev.Item.TS)
		if err != nil {
			return false, fmt.Errorf("%w: %w", core.ErrMalformed, err)
		}
		p.ReplyTo, p.ReplyToAuthor = ev.Parent, ev.ParentAuthor
		live, err := s.MaterializePosts(ctx, []*content.Post{p})
		if err != nil {
			return false, fmt.Errorf("materialize post %d: %w", p.ID, err)
		}
		if !live[0] {
			return false, nil // deleted before its fan-out: nothing to deliver
		}
		// Materialized late, its author may have been suspended since.
		if err := s.MarkSuspendedPosts(ctx, []*content.Post{p}); err != nil {
			return false, fmt.Errorf("post %d: %w", p.ID, err)
		}
		return true, s.Dispatch(ctx, st.Shard, e.ID, ev)
	case core.EvDelete:
		p := &content.Post{ID: ev.Item.ID, Author: ev.User, ReplyTo: ev.Parent, ReplyToAuthor: ev.ParentAuthor}
		if err := s.Tombstone(ctx, p); err != nil {
			return false, fmt.Errorf("tombstone post %d: %w", ev.Item.ID, err)
		}
		if err := s.DropRepostsOf(ctx, p); err != nil {
			return false, err
		}
		return true, s.Dispatch(ctx, st.Shard, e.ID, ev)
	case core.EvRepost:
		rec := lists.RepostOf(ev.User, &content.Post{ID: ev.Orig, Author: ev.OrigAuthor}, ev.Item)
		states, err := s.MaterializeReposts(ctx, []*content.Post{rec})
		if err != nil {
			return false, fmt.Errorf("materialize repost %d: %w", rec.ID, err)
		}
		if states[0] != lists.RepostLive {
			return false, nil // taken back before its fan-out: nothing to deliver
		}
		return true, s.Dispatch(ctx, st.Shard, e.ID, ev)
	case core.EvUnrepost:
		rec := lists.RepostOf(ev.User, &content.Post{ID: ev.Orig, Author: ev.OrigAuthor}, ev.Item)
		if err := s.UnindexReposts(ctx, []*content.Post{rec}); err != nil {
			return false, fmt.Errorf("take back repost %d: %w", rec.ID, err)
		}
		return true, s.Dispatch(ctx, st.Shard, e.ID, ev)
	case core.EvReplay:
		return true, s.Dispatch(ctx, st.Shard, e.ID, ev)
	case core.EvPromote:
		return false, s.Promote(ctx, ev.User)
	case core.EvAnchor:
		return false, s.MarkAnchor(ctx, ev.User)
	case core.EvActivate:
		return false, s.Upgrade(ctx, ev.User)
	}
	return false, fmt.Errorf("%w: unknown event type %q", core.ErrMalformed, ev.Type)
}

func (s *Service) handleTask(ctx context.Context, o WorkerOptions, st core.Stream, consumer string, e rueidis.XRangeEntry) (bool, error) {
	t, err := timeline.ParseTask(e, st.Shard)
	if err != nil {
		return false, fmt.Errorf("%w: %w", core.ErrMalformed, err)
	}
	t.Consumer = consumer
	if err := s.Execute(ctx, t, o.AfterChunk); err != nil {
		return false, err
	}
	s.Counters.Tasks.Add(1)
	return true, nil
}

// reclaim takes over entries left pending longer than ReclaimIdle by a
// worker that died, and finishes them; tasks resume from their checkpoint.
func (s *Service) reclaim(ctx context.Context, o WorkerOptions, consumer string) {
	every := o.ReclaimIdle / 2
	for core.SleepCtx(ctx, every) {
		for sh := 0; sh < s.Opts.StreamShards; sh++ {
			s.ReclaimStream(ctx, o, s.TaskStream(sh), consumer, s.handleTask)
			s.ReclaimStream(ctx, o, s.EventStream(sh), consumer, s.handleEvent)
			s.ReclaimStream(ctx, o, s.CleanupStream(sh), consumer, s.HandleCleanup)
		}
	}
}

func (s *Service) sweepLoop(ctx context.Context, o WorkerOptions) {
	for core.SleepCtx(ctx, o.SweepEvery) {
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
