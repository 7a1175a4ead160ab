package timeline

import (
	"context"
	"fmt"
	"strconv"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

const (
	// TaskSize is the most followers one fan-out task covers.
	TaskSize = 1000
	// ChunkSize is how many inbox writes go in one pipeline; the task's
	// checkpoint is written at the end of each. 500 rather than 250: the
	// worker's CPU a write fell by about a fifth (fewer round trips,
	// flushes and wake-ups a write), and a crash still redoes at most
	// half a task.
	ChunkSize = 500
	PushAll   = ""       // push mode of ordinary authors
	pushPull  = "pull"   // push mode of a big-V being promoted: readers pull it, fan-out still pushes to all
	PushAct   = "active" // push mode of a big-V once its active set is built
)

// Task is a slice of one event's targets: the members of set in (lo, hi]
// by id, "-" and "+" meaning unbounded.
type Task struct {
	ID     string // stream entry id, names the checkpoint
	Shard  int    // the stream shard of the task and of its event
	Type   string // evPublish, evDelete, evReplay, evRepost or evUnrepost
	Author store.ID
	Item   store.Item
	Set    string // followers or active-followers key
	Lo, Hi string // lex range bounds, as ZRANGE BYLEX takes them
	// Consumer is the worker running the task; it renews its claim with
	// every checkpoint so a long task is not taken over while it progresses.
	Consumer string
}

// queueTask appends a task to the tasks stream KEYS[2] and moves the
// event's checkpoint KEYS[1] from ARGV[1] to ARGV[2], atomically (one
// slot: the shard's). The last task (ARGV[2] empty) also acknowledges and
// deletes the event ARGV[3] of the events stream KEYS[3] for group ARGV[4],
// so an event is marked done in the same step that queues its last task,
// never before. A checkpoint that moved (another dispatcher took the event
// over) or an event already done queues nothing. ARGV[5] is the
// checkpoint's TTL in seconds, ARGV[6..] the task's fields.
var queueTask = store.NewScript(false, `
local cur = redis.call('GET', KEYS[1]) or '-'
if cur ~= ARGV[1] then return 'moved' end
if #redis.call('XRANGE', KEYS[3], ARGV[3], ARGV[3]) == 0 then return 'done' end
redis.call('XADD', KEYS[2], '*', unpack(ARGV, 6))
if ARGV[2] == '' then
  redis.call('DEL', KEYS[1])
  redis.call('XACK', KEYS[3], ARGV[4], ARGV[3])
  redis.call('XDEL', KEYS[3], ARGV[3])
else
  redis.call('SET', KEYS[1], ARGV[2], 'EX', ARGV[5])
end
return 'ok'
`)

// Dispatch splits a publish, delete or replay event into tasks of at most
// taskSize targets, in id order, and queues them. Each task is queued in
// one atomic step with the event's checkpoint, the last one with the
// event's acknowledgement, so a dispatch taken over from a crashed worker
// resumes after the last task queued, queues none twice, and an event is
// never done before all its tasks are queued.
func (s *Service) Dispatch(ctx context.Context, shard int, eventID string, e core.Event) error {
	ck := s.Keys.EventCheckpoint(shard, eventID)
	set, authorPresent, err := s.pushTargets(ctx, e.User, e.Type != core.EvReplay)
	if err != nil {
		return err
	}
	lo, err := s.dispatchCheckpoint(ctx, ck)
	if err != nil {
		return err
	}
	var told notices // sent with the first task
	if lo == "-" {   // not a dispatch taken over half way: it told them already
		told.cmds, told.done = s.NoticeCmds(s.dispatchNotices(e, set, authorPresent)...)
	}
	for {
		// The taskSize-th member after lo closes this task; none means the
		// rest fits in it.
		next, err := s.Redis.Do(ctx, s.Redis.B().Zrange().Key(set).Min(lo).Max("+").Bylex().
			Limit(TaskSize-1, 1).Build()).AsStrSlice()
		if err != nil {
			return fmt.Errorf("split targets: %w", err)
		}
		hi, nextLo := "+", ""
		if len(next) == 1 {
			hi, nextLo = "["+next[0], "("+next[0]
		}
		t := Task{Type: e.Type, Author: e.User, Item: e.Item, Set: set, Lo: lo, Hi: hi}
		args := append([]string{lo, nextLo, eventID, core.GroupDispatch, core.Itoa64(int64(core.CheckpointTTL.Seconds()))}, t.fields()...)
		rs := s.DoMulti(ctx, append([]rueidis.Completed{queueTask.Cmd(s.Redis.B(), []string{ck, s.Keys.Tasks(shard), s.Keys.Events(shard)}, args)},
			told.cmds...)...)
		told.tell(rs[1:])
		told = notices{}
		res, err := rs[0].ToString()
		if err != nil {
			return fmt.Errorf("queue task: %w", err)
		}
		switch {
		case res == "done" || res == "ok" && nextLo == "":
			return nil
		case res == "moved": // another dispatcher got further: go on from there
			if lo, err = s.dispatchCheckpoint(ctx, ck); err != nil {
				return err
			}
		default:
			lo = nextLo
		}
	}
}

// dispatchCheckpoint is where an event's dispatch stands: "-" before its
// first task, else the lower bound of the next.
func (s *Service) dispatchCheckpoint(ctx context.Context, ck string) (string, error) {
	lo, err := s.Redis.Do(ctx, s.Redis.B().Get().Key(ck).Build()).ToString()
	if rueidis.IsRedisNil(err) {
		return "-", nil
	}
	if err != nil {
		return "", fmt.Errorf("read dispatch checkpoint: %w", err)
	}
	return lo, nil
}

// PushTargets returns the set an author's posts are pushed to: all
// followers, or only the active ones once the author is a big-V. An author
// found over the threshold is promoted first.
func (s *Service) PushTargets(ctx context.Context, author store.ID) (string, error) {
	set, _, err := s.pushTargets(ctx, author, false)
	return set, err
}

// pushTargets is PushTargets asking too, with askPresence, in the same
// round trip, whether the author has a realtime subscription open: the
// fan-out never writes an author's own inbox (its post is there since
// it was published), so a dispatch tells the author apart.
func (s *Service) pushTargets(ctx context.Context, author store.ID, askPresence bool) (string, bool, error) {
	cmds := []rueidis.Completed{
		s.Redis.B().Get().Key(s.Keys.PushMode(author)).Build(),
		s.Redis.B().Zcard().Key(s.Keys.Followers(author)).Build()}
	var present func([]rueidis.RedisResult) []store.ID
	if askPresence {
		var ask []rueidis.Completed
		ask, present = s.PresenceCmds([]string{store.Member(author)})
		cmds = append(cmds, ask...)
	}
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs[:2]); err != nil {
		return "", false, err
	}
	mode, _ := rs[0].ToString()
	n, _ := rs[1].AsInt64()
	// A promotion that was cut short ("pull") is finished whatever the
	// count now: big-V status is sticky, and readers already pull it.
	if mode == pushPull || mode != PushAct && n > s.Opts.BigVThresholdNow() {
		if err := s.Promote(ctx, author); err != nil {
			return "", false, err
		}
		mode = PushAct
	}
	authorPresent := present != nil && len(present(rs[2:])) > 0
	if mode == PushAct {
		return s.Keys.Active(author), authorPresent, nil
	}
	return s.Keys.Followers(author), authorPresent, nil
}

// dispatchNotices are what an event tells before its fan-out: the author
// itself, when present, and, for a big-V author (pushed to its active
// followers alone), its readers merged on read, once on its channel. A
// replay is the live feed's: its anchor's session change told them.
func (s *Service) dispatchNotices(e core.Event, set string, authorPresent bool) []core.Notice {
	if e.Type == core.EvReplay {
		return nil
	}
	t := Task{Type: e.Type, Author: e.User, Item: e.Item}
	var ns []core.Notice
	if authorPresent {
		ns = append(ns, taskNotice(t, []store.ID{e.User}))
	}
	if set != s.Keys.Followers(e.User) {
		n := taskNotice(t, nil)
		n.Merged = true
		ns = append(ns, n)
	}
	return ns
}

// Promote makes author a big-V: its mode becomes "pull", so new follows
// note it in the follower's set of big-V followees; every follower notes it
// too, and the active set is built from the followers' activity and inbox
// state; only then does its fan-out switch to active followers, so no
// reader misses a post meanwhile: until then every follower still gets it
// pushed. Big-V status is sticky: leaving it would need a backfill of every
// inactive follower.
func (s *Service) Promote(ctx context.Context, author store.ID) error {
	// NX: a mode already "active" stays (a rebuild re-runs promotions).
	if err := s.Do(ctx, s.Redis.B().Set().Key(s.Keys.PushMode(author)).Value(pushPull).Nx().Build()).Error(); err != nil && !rueidis.IsRedisNil(err) {
		return err
	}
	lo := "-"
	for {
		page, err := s.Redis.Do(ctx, s.Redis.B().Zrange().Key(s.Keys.Followers(author)).Min(lo).Max("+").Bylex().
			Limit(0, TaskSize).Build()).AsStrSlice()
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		if err := s.promoteTo(ctx, author, page); err != nil {
			return err
		}
		lo = "(" + page[len(page)-1]
	}
	return s.Do(ctx, s.Redis.B().Set().Key(s.Keys.PushMode(author)).Value(PushAct).Build()).Error()
}

// promoteTo notes author among the big-V followees of the followers in
// page, and adds to its active set those active, or whose inbox is
// complete (they read it alone, so they must get the pushes even if not
// swept yet).
func (s *Service) promoteTo(ctx context.Context, author store.ID, page []string) error {
	cmds, groups := s.seenManyCmds(page)
	nSeen := len(cmds)
	for _, m := range page {
		id, _ := store.MemberID(m)
		cmds = append(cmds, s.Redis.B().Hget().Key(s.Keys.Reader(id)).Field("c").Build(), s.bigFolloweeAddCmd(id, author))
	}
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs); err != nil {
		return err
	}
	seen := seenScores(rs, groups)
	add := s.Redis.B().Zadd().Key(s.Keys.Active(author)).ScoreMember()
	any := false
	for i, m := range page {
		complete, _ := rs[nSeen+2*i].ToString()
		if ms, ok := seen[m]; complete == "1" || ok && s.IsActive(ms) {
			add = add.ScoreMember(0, m)
			any = true
		}
	}
	if !any {
		return nil
	}
	return s.Do(ctx, add.Build()).Error()
}

// bigFolloweeAddCmd notes big-V author among follower's big-V followees,
// if follower still follows it.
func (s *Service) bigFolloweeAddCmd(follower, author store.ID) rueidis.Completed {
	return core.BigFolloweeAdd.Cmd(s.Redis.B(), []string{s.Keys.Following(follower), s.Keys.BigFollowees(follower)}, []string{store.Member(author)})
}

func (t Task) fields() []string {
	return []string{"t", t.Type, "u", store.FormatID(t.Author), "p", store.FormatID(t.Item.ID), "s", store.ScoreArg(t.Item.TS),
		"set", t.Set, "lo", t.Lo, "hi", t.Hi}
}

func ParseTask(e rueidis.XRangeEntry, shard int) (Task, error) {
	ev, err := core.ParseEvent(e.FieldValues, shard)
	if err != nil {
		return Task{}, err
	}
	fv := e.FieldValues
	if fv["set"] == "" || fv["lo"] == "" || fv["hi"] == "" {
		return Task{}, fmt.Errorf("task without set, lo or hi")
	}
	return Task{ID: e.ID, Shard: shard, Type: ev.Type, Author: ev.User, Item: ev.Item, Set: fv["set"], Lo: fv["lo"], Hi: fv["hi"]}, nil
}

// finishTask acknowledges and deletes the task ARGV[1] of the stream
// KEYS[2] for group ARGV[2] and drops its checkpoint KEYS[1], atomically.
var finishTask = store.NewScript(false, `
redis.call('DEL', KEYS[1])
redis.call('XACK', KEYS[2], ARGV[2], ARGV[1])
return redis.call('XDEL', KEYS[2], ARGV[1])
`)

// Execute writes one task: inbox writes (or removals) for its targets, in
// pipelines of chunkSize, leaving out the readers the author's posts are
// not pushed to (readTargets). The checkpoint only ever names a target
// whose write Redis confirmed (or that was left out): each pipeline carries the checkpoint of the chunk
// before it, whose replies have come back without error. A task reclaimed
// from a crashed worker resumes after that; writes are idempotent, so a
// chunk replayed changes nothing. The task is acknowledged, in one step
// with dropping its checkpoint, once its last chunk is confirmed.
// afterChunk, when not nil, runs after each confirmed chunk
// (WorkerOptions.AfterChunk).
func (s *Service) Execute(ctx context.Context, t Task, afterChunk func()) error {
	ck := s.Keys.TaskCheckpoint(t.Shard, t.ID)
	lo := t.Lo
	if last, err := s.Redis.Do(ctx, s.Redis.B().Get().Key(ck).Build()).ToString(); err == nil {
		lo = "(" + last
	} else if !rueidis.IsRedisNil(err) {
		return fmt.Errorf("read task checkpoint: %w", err)
	}
	confirmed := "" // the last target written, not yet checkpointed
	r := &relay{t: t}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := s.readTargets(ctx, t, lo)
		if err != nil {
			return err
		}
		if c.scanned == 0 {
			return s.finish(ctx, t, ck, r)
		}
		// A chunk whose readers were all left out writes only the
		// checkpoint of the one before, if any.
		if cmds := s.ChunkCmds(t, c.targets, ck, confirmed); len(cmds) > 0 {
			if err := s.writeChunk(ctx, cmds, r); err != nil {
				return err
			}
			r.confirmed(c.targets)
		}
		confirmed = c.last
		s.Counters.InboxWrites.Add(int64(len(c.targets)))
		if afterChunk != nil {
			afterChunk()
		}
		if c.scanned < ChunkSize {
			return s.finish(ctx, t, ck, r)
		}
		lo = "(" + confirmed
	}
}

// relay is realtime's share of a task's pipelines. Once Redis confirmed
// a chunk's writes, the next pipeline asks which of its readers have a
// subscription open (asking: never in the chunk's own pipeline, whose
// writes on a Redis Cluster may land on other nodes after the answer,
// and after a subscriber's first count), and the one after that
// publishes notices for those present (told). So realtime adds commands
// to the fan-out's pipelines, and a round trip only after a task's last
// chunk when it had readers present. Replays are the live feed's, whose
// subscribers hear of sessions from their anchors: they ask nothing.
type relay struct {
	t      Task
	asking []string
	told   notices
}

// confirmed notes a chunk's targets, whose writes Redis confirmed.
func (r *relay) confirmed(targets []string) {
	if r.t.Type != core.EvReplay {
		r.asking = append(r.asking, targets...)
	}
}

// ride appends to cmds what r has for this pipeline, and returns the
// function that reads the replies of those (rs, what follows cmds).
func (s *Service) ride(r *relay, cmds []rueidis.Completed) ([]rueidis.Completed, func(rs []rueidis.RedisResult)) {
	told := r.told
	ask, present := s.PresenceCmds(r.asking)
	r.told, r.asking = notices{}, nil
	cmds = append(append(cmds, told.cmds...), ask...)
	return cmds, func(rs []rueidis.RedisResult) {
		told.tell(rs[:len(told.cmds)])
		if present == nil {
			return
		}
		if readers := present(rs[len(told.cmds):]); len(readers) > 0 {
			r.told.cmds, r.told.done = s.NoticeCmds(taskNotice(r.t, readers))
		}
	}
}

// notices are publishes of realtime notices waiting for a pipeline to
// ride, and what reads their replies.
type notices struct {
	cmds []rueidis.Completed
	done func([]rueidis.RedisResult)
}

// tell reads the replies of n's publishes (rs, as many as n.cmds).
func (n notices) tell(rs []rueidis.RedisResult) {
	if n.done != nil {
		n.done(rs)
	}
}

// writeChunk sends a chunk's writes cmds, with what the relay r has for
// this pipeline.
func (s *Service) writeChunk(ctx context.Context, cmds []rueidis.Completed, r *relay) error {
	writes := len(cmds)
	cmds, read := s.ride(r, cmds)
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs[:writes]); err != nil {
		return fmt.Errorf("write chunk: %w", err)
	}
	read(rs[writes:])
	return nil
}

// taskNotice is what a task's readers are told: a post, or the removal of
// one. An undone repost names no post of its own that left (its
// original may still show): the readers recount.
func taskNotice(t Task, readers []store.ID) core.Notice {
	n := core.Notice{Kind: core.NoticePost, Author: t.Author, Item: t.Item.ID, Readers: readers}
	switch t.Type {
	case core.EvDelete:
		n.Kind = core.NoticeRemoval
	case core.EvUnrepost:
		n.Kind, n.Item = core.NoticeRemoval, 0
	}
	return n
}

// finish acknowledges t with what the relay r has for this pipeline; the
// notices of the last chunk's readers present, if any, in a round trip
// of their own.
func (s *Service) finish(ctx context.Context, t Task, ck string, r *relay) error {
	cmds, read := s.ride(r, []rueidis.Completed{finishTask.Cmd(s.Redis.B(), []string{ck, s.Keys.Tasks(t.Shard)}, []string{t.ID, core.GroupExecute})})
	rs := s.DoMulti(ctx, cmds...)
	read(rs[1:])
	if len(r.told.cmds) > 0 {
		r.told.tell(s.DoMulti(ctx, r.told.cmds...))
	}
	if err := rs[0].Error(); err != nil {
		return fmt.Errorf("acknowledge task: %w", err)
	}
	return nil
}

// ChunkCmds is one pipeline of a task: one command per target (plus, for
// about one publish target in trimEvery, a trim), then, when confirmed
// names the last target of the chunk before (whose writes Redis has
// confirmed), the checkpoint and the renewal of the task's claim (which
// resets its idle time, so the reclaimer leaves a live task alone). Tests
// hold this budget.
func (s *Service) ChunkCmds(t Task, targets []string, ck, confirmed string) []rueidis.Completed {
	cmds := make([]rueidis.Completed, 0, len(targets)+len(targets)/TrimEvery+4)
	tl := s.PostsTL()
	if t.Type == core.EvReplay {
		tl = s.ReplaysTL()
	}
	if core.Removal(t.Type) {
		for _, m := range targets {
			reader, _ := store.MemberID(m)
			cmds = append(cmds, s.InboxRemoveCmd(tl, reader, t.Item.ID))
		}
	} else {
		p := s.newPush(t.Item)
		readers := make([]store.ID, len(targets))
		for i, m := range targets {
			readers[i], _ = store.MemberID(m)
		}
		for i, inbox := range InboxKeys(tl, readers) {
			cmds = p.append(cmds, inbox, TrimDue(readers[i], t.Item.ID))
		}
	}
	if confirmed == "" {
		return cmds
	}
	return append(cmds, s.Redis.B().Set().Key(ck).Value(confirmed).Ex(core.CheckpointTTL).Build(),
		s.Redis.B().Xclaim().Key(s.Keys.Tasks(t.Shard)).Group(core.GroupExecute).Consumer(t.Consumer).MinIdleTime("0").Id(t.ID).Justid().Build())
}

// InboxKeys names the inboxes of readers, tl.inbox of each, in one
// allocation rather than two a reader: every inbox key is its kind's
// head (tagHead) followed by the reader's id and "}" (keys.go), which
// TestInboxKeys holds.
func InboxKeys(tl core.Timeline, readers []store.ID) []string {
	if len(readers) == 0 {
		return nil
	}
	head := store.TagHead(tl.Inbox)
	buf := make([]byte, 0, len(readers)*(len(head)+21))
	ends := make([]int, len(readers))
	for i, r := range readers {
		buf = append(buf, head...)
		buf = strconv.AppendUint(buf, r, 10)
		buf = append(buf, '}')
		ends[i] = len(buf)
	}
	all := string(buf)
	out := make([]string, len(readers))
	start := 0
	for i, end := range ends {
		out[i] = all[start:end]
		start = end
	}
	return out
}

// TrimEvery: fan-out trims an inbox on about one write in trimEvery, so an
// inbox may briefly hold a few entries over its cap; that saves a command
// per write on the hottest path. Reads treat any inbox at or over its cap as
// possibly trimmed.
const TrimEvery = 8

// TrimDue spreads trims evenly and deterministically over readers and posts.
func TrimDue(reader, post store.ID) bool {
	return ((reader*0x9E3779B97F4A7C15)^post)%TrimEvery == 0
}

// AppendPush appends the writes that push it into reader's inbox.
func (s *Service) AppendPush(cmds []rueidis.Completed, tl core.Timeline, reader store.ID, it store.Item, trim bool) []rueidis.Completed {
	return s.newPush(it).append(cmds, tl.Inbox(reader), trim)
}

// push builds the writes of one item into many inboxes, its arguments
// formatted once (the fan-out's hot path: about a microsecond a target
// less than building each command from scratch).
type push struct {
	b                  rueidis.Builder
	score, member, cap string
}

func (s *Service) newPush(it store.Item) push {
	return push{b: s.Redis.B(), score: store.ScoreArg(it.TS), member: store.Member(it.ID), cap: store.Itoa(-s.Opts.InboxCap - 1)}
}

// append appends ZADD inbox score member and, when trim is set, the trim
// to the cap.
func (p push) append(cmds []rueidis.Completed, inbox string, trim bool) []rueidis.Completed {
	cmds = append(cmds, p.b.Arbitrary("ZADD").Keys(inbox).Args(p.score, p.member).Build())
	if trim {
		cmds = append(cmds, p.b.Arbitrary("ZREMRANGEBYRANK").Keys(inbox).Args("0", p.cap).Build())
	}
	return cmds
}

// InboxRemoveCmd removes posts from reader's inbox, keeping its horizon.
func (s *Service) InboxRemoveCmd(tl core.Timeline, reader store.ID, posts ...store.ID) rueidis.Completed {
	args := make([]string, 0, 1+len(posts))
	args = append(args, store.Itoa(s.Opts.InboxCap))
	args = append(args, store.Members(posts)...)
	return core.InboxRemove.Cmd(s.Redis.B(), []string{tl.Inbox(reader), tl.Horizon(reader)}, args)
}
