package feedcore

import (
	"context"
	"strconv"

	"github.com/redis/rueidis"
)

const (
	// taskSize is the most followers one fan-out task covers.
	taskSize = 1000
	// chunkSize is how many inbox writes go in one pipeline; the task's
	// checkpoint is written at the end of each.
	chunkSize = 250
	pushAll   = ""       // push mode of ordinary authors
	pushAct   = "active" // push mode of a big-V once its active set is built
)

// task is a slice of one event's targets: the members of set in (lo, hi]
// by id, "-" and "+" meaning unbounded.
type task struct {
	ID     string // stream entry id, names the checkpoint
	Type   string // evPublish or evDelete
	Author ID
	Item   Item
	Set    string // followers or active-followers key
	Lo, Hi string // lex range bounds, as ZRANGE BYLEX takes them
	// Consumer is the worker running the task; it renews its claim with
	// every checkpoint so a long task is not taken over while it progresses.
	Consumer string
}

// dispatch splits a publish or delete event into tasks of at most taskSize
// targets, in id order, and queues them. Each task is queued together with
// the event's checkpoint, so a dispatch taken over from a crashed worker
// resumes after the last task queued instead of queueing them again.
func (s *Service) dispatch(ctx context.Context, eventID string, e event) error {
	ck := s.k.checkpoint("ev:" + eventID)
	lo, err := s.c.Do(ctx, s.c.B().Get().Key(ck).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		lo, err = "-", nil
	}
	if err != nil || lo == dispatched {
		return err
	}
	set, err := s.pushTargets(ctx, e.User)
	if err != nil {
		return err
	}
	for lo != dispatched {
		// The taskSize-th member after lo closes this task; none means the
		// rest fits in it.
		next, err := s.c.Do(ctx, s.c.B().Zrange().Key(set).Min(lo).Max("+").Bylex().
			Limit(taskSize-1, 1).Build()).AsStrSlice()
		if err != nil {
			return err
		}
		hi, nextLo := "+", dispatched
		if len(next) == 1 {
			hi, nextLo = "["+next[0], "("+next[0]
		}
		t := task{Type: e.Type, Author: e.User, Item: e.Item, Set: set, Lo: lo, Hi: hi}
		if err := firstErr(s.doMulti(ctx, s.taskCmd(t),
			s.c.B().Set().Key(ck).Value(nextLo).Ex(checkpointTTL).Build())); err != nil {
			return err
		}
		lo = nextLo
	}
	return nil
}

// dispatched is an event checkpoint's value once all its tasks are queued.
const dispatched = "done"

// pushTargets returns the set an author's posts are pushed to: all
// followers, or only the active ones once the author is a big-V. An author
// found over the threshold is promoted first.
func (s *Service) pushTargets(ctx context.Context, author ID) (string, error) {
	rs := s.doMulti(ctx,
		s.c.B().Get().Key(s.k.pushMode(author)).Build(),
		s.c.B().Zcard().Key(s.k.followers(author)).Build())
	if err := firstErr(rs); err != nil {
		return "", err
	}
	mode, _ := rs[0].ToString()
	n, _ := rs[1].AsInt64()
	if mode != pushAct && n > s.bigV.Load() {
		if err := s.promote(ctx, author); err != nil {
			return "", err
		}
		mode = pushAct
	}
	if mode == pushAct {
		return s.k.active(author), nil
	}
	return s.k.followers(author), nil
}

// promote makes author a big-V: readers start pulling its outbox, its active
// set is built from its followers' activity and inbox state, and only then does its fan-out
// switch to active followers, so no active reader misses a post meanwhile.
// Big-V status is sticky: leaving it would need a backfill of every
// inactive follower.
func (s *Service) promote(ctx context.Context, author ID) error {
	if err := s.do(ctx, s.c.B().Sadd().Key(s.k.bigV()).Member(member(author)).Build()).Error(); err != nil {
		return err
	}
	lo := "-"
	for {
		page, err := s.c.Do(ctx, s.c.B().Zrange().Key(s.k.followers(author)).Min(lo).Max("+").Bylex().
			Limit(0, taskSize).Build()).AsStrSlice()
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		// Active readers, and readers whose inbox is complete (they read
		// it alone, so they must get the pushes even if not swept yet).
		cmds := make([]rueidis.Completed, 0, 1+len(page))
		cmds = append(cmds, s.c.B().Zmscore().Key(s.k.seen()).Member(page...).Build())
		for _, m := range page {
			id, _ := memberID(m)
			cmds = append(cmds, s.c.B().Hget().Key(s.k.reader(id)).Field("c").Build())
		}
		rs := s.doMulti(ctx, cmds...)
		if err := firstErr(rs); err != nil {
			return err
		}
		scores, _ := rs[0].ToArray()
		add := s.c.B().Zadd().Key(s.k.active(author)).ScoreMember()
		any := false
		for i, sc := range scores {
			complete, _ := rs[1+i].ToString()
			if f, err := sc.AsFloat64(); complete == "1" || err == nil && s.isActive(int64(f)) {
				add = add.ScoreMember(0, page[i])
				any = true
			}
		}
		if any {
			if err := s.do(ctx, add.Build()).Error(); err != nil {
				return err
			}
		}
		lo = "(" + page[len(page)-1]
	}
	return s.do(ctx, s.c.B().Set().Key(s.k.pushMode(author)).Value(pushAct).Build()).Error()
}

func (s *Service) taskCmd(t task) rueidis.Completed {
	return s.c.B().Xadd().Key(s.k.tasks()).Id("*").FieldValue().
		FieldValue("t", t.Type).FieldValue("u", FormatID(t.Author)).
		FieldValue("p", FormatID(t.Item.ID)).FieldValue("s", scoreArg(t.Item.TS)).
		FieldValue("set", t.Set).FieldValue("lo", t.Lo).FieldValue("hi", t.Hi).Build()
}

func parseTask(e rueidis.XRangeEntry) (task, error) {
	ev, err := parseEvent(e.FieldValues)
	if err != nil {
		return task{}, err
	}
	fv := e.FieldValues
	return task{ID: e.ID, Type: ev.Type, Author: ev.User, Item: ev.Item, Set: fv["set"], Lo: fv["lo"], Hi: fv["hi"]}, nil
}

// execute writes one task: inbox writes (or removals) for its targets, in
// pipelines of chunkSize commands each followed by the checkpoint, so a task
// reclaimed from a crashed worker resumes after the last chunk written.
// Writes are idempotent, so a chunk replayed after a crash changes nothing.
func (s *Service) execute(ctx context.Context, t task) error {
	ck := s.k.checkpoint("tk:" + t.ID)
	lo := t.Lo
	if last, err := s.c.Do(ctx, s.c.B().Get().Key(ck).Build()).ToString(); err == nil {
		lo = "(" + last
	} else if !rueidis.IsRedisNil(err) {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		targets, err := s.c.Do(ctx, s.c.B().Zrange().Key(t.Set).Min(lo).Max(t.Hi).Bylex().
			Limit(0, chunkSize).Build()).AsStrSlice()
		if err != nil {
			return err
		}
		if len(targets) == 0 {
			return s.c.Do(ctx, s.c.B().Del().Key(ck).Build()).Error()
		}
		if err := firstErr(s.doMulti(ctx, s.chunkCmds(t, targets, ck)...)); err != nil {
			return err
		}
		s.stats.inboxWrites.Add(int64(len(targets)))
		if s.afterChunk != nil {
			s.afterChunk()
		}
		if len(targets) < chunkSize {
			return s.c.Do(ctx, s.c.B().Del().Key(ck).Build()).Error()
		}
		lo = "(" + targets[len(targets)-1]
	}
}

// chunkCmds is one pipeline of a task: one command per target (plus, for
// about one publish target in trimEvery, a trim), then the checkpoint and
// the renewal of the task's claim (which resets its idle time, so the
// reclaimer leaves a live task alone). Tests hold this budget.
func (s *Service) chunkCmds(t task, targets []string, ck string) []rueidis.Completed {
	cmds := make([]rueidis.Completed, 0, len(targets)+len(targets)/trimEvery+4)
	tl := s.postsTL()
	if t.Type == evReplay {
		tl = s.replaysTL()
	}
	for _, m := range targets {
		reader, _ := memberID(m)
		if t.Type == evDelete {
			cmds = append(cmds, s.inboxRemoveCmd(tl, reader, t.Item.ID))
		} else {
			cmds = s.appendPush(cmds, tl, reader, t.Item, trimDue(reader, t.Item.ID))
		}
	}
	return append(cmds, s.c.B().Set().Key(ck).Value(targets[len(targets)-1]).Ex(checkpointTTL).Build(),
		s.c.B().Xclaim().Key(s.k.tasks()).Group(groupExecute).Consumer(t.Consumer).MinIdleTime("0").Id(t.ID).Justid().Build())
}

// trimEvery: fan-out trims an inbox on about one write in trimEvery, so an
// inbox may briefly hold a few entries over its cap; that saves a command
// per write on the hottest path. Reads treat any inbox at or over its cap as
// possibly trimmed.
const trimEvery = 8

// trimDue spreads trims evenly and deterministically over readers and posts.
func trimDue(reader, post ID) bool {
	return ((reader*0x9E3779B97F4A7C15)^post)%trimEvery == 0
}

// appendPush appends the writes that push it into reader's inbox.
func (s *Service) appendPush(cmds []rueidis.Completed, tl timeline, reader ID, it Item, trim bool) []rueidis.Completed {
	cmds = append(cmds, s.c.B().Zadd().Key(tl.inbox(reader)).ScoreMember().ScoreMember(float64(it.TS), member(it.ID)).Build())
	if trim {
		cmds = append(cmds, s.c.B().Zremrangebyrank().Key(tl.inbox(reader)).Start(0).Stop(int64(-s.o.InboxCap-1)).Build())
	}
	return cmds
}

// inboxRemoveCmd removes posts from reader's inbox, keeping its horizon.
func (s *Service) inboxRemoveCmd(tl timeline, reader ID, posts ...ID) rueidis.Completed {
	args := make([]string, 0, 1+len(posts))
	args = append(args, itoa(s.o.InboxCap))
	args = append(args, members(posts)...)
	return inboxRemove.cmd(s.c.B(), []string{tl.inbox(reader), tl.horizon(reader)}, args)
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
