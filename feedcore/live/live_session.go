package live

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
)

// MaxTitleLen is the longest live title, in characters.
const MaxTitleLen = 200

// liveTransition moves the session KEYS[1] of anchor ARGV[1] to started
// (ARGV[2] "b") or ended ("e") at ARGV[3], atomically, so racing requests
// cannot start an ended session or end one twice. It returns "ok:<b>"
// (b: the start time, empty when never started) or a refusal.
var liveTransition = store.NewScript(false, `
local l = redis.call('HMGET', KEYS[1], 'a', 'b', 'e')
if not l[1] then return 'missing' end
if l[1] ~= ARGV[1] then return 'forbidden' end
if l[3] then return 'ended' end
if ARGV[2] == 'b' and l[2] then return 'live' end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return 'ok:' .. (l[2] or '')
`)

// ScheduleLive schedules a session with a title alone (see
// ScheduleLiveSession).
func (s *Service) ScheduleLive(ctx context.Context, anchor store.ID, title string, at time.Time) (*core.LiveSession, error) {
	return s.ScheduleLiveSession(ctx, anchor, NewLive{Title: title, ScheduledStartAt: at})
}

// NewLive is what scheduling a live session asks for.
type NewLive struct {
	Title            string
	ScheduledStartAt time.Time
	// CoverURL, optional, follows the media URL rules (content.CheckURL).
	CoverURL string
}

// ScheduleLiveSession creates a PREVIEW session of anchor.
func (s *Service) ScheduleLiveSession(ctx context.Context, anchor store.ID, in NewLive) (_ *core.LiveSession, err error) {
	defer store.Wrap(&err, "schedule a live session of user %d", anchor)
	title, err := content.CheckText("title", in.Title, MaxTitleLen)
	if err != nil {
		return nil, err
	}
	at := in.ScheduledStartAt
	if err := s.checkScheduledStart(at); err != nil {
		return nil, err
	}
	cover, err := content.CheckCoverURL(in.CoverURL, s.Media)
	if err != nil {
		return nil, err
	}
	if err := s.UsersExist(ctx, anchor); err != nil {
		return nil, err
	}
	// The journal entry takes the session's id from the shard's clock in
	// the same step.
	shard := s.ShardOf(anchor)
	keys := []string{s.Keys.Journal(shard), s.Keys.Clock(shard)}
	args := append(core.LogArgs("alloc", s.NowMS(), "", 0, false, nil), "k", JLive, "a", store.FormatID(anchor))
	arr, err := s.Commit(ctx, core.LogScript, keys, args, core.LogScript.Cmd(s.Redis.B(), keys, args)).ToArray()
	if err == nil && len(arr) < 4 {
		err = fmt.Errorf("reply of %d values", len(arr))
	}
	if err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	ms, _ := arr[1].AsInt64()
	n, _ := arr[2].AsInt64()
	jid, _ := arr[3].ToString()
	at = at.Truncate(time.Millisecond).UTC()
	l := &core.LiveSession{ID: core.ComposeID(ms, uint64(n), shard), Anchor: anchor, Title: title, ScheduledStartAt: &at, CoverURL: cover}
	if err := s.StoreLive(ctx, l); err != nil {
		return nil, fmt.Errorf("recorded, a worker finishes it: %w", err)
	}
	s.End(ctx, shard, jid)
	return l, nil
}

// The window scheduleLive accepts a start in. A start in the past would
// rank the session first among previews (they are ordered by scheduled
// start) for every follower: only a small grace for clock skew and slow
// forms is allowed. A year ahead is the longest a preview may be listed.
const (
	ScheduleGrace   = 5 * time.Minute
	ScheduleHorizon = 365 * 24 * time.Hour
)

// checkScheduledStart refuses a scheduled start outside
// [now - ScheduleGrace, now + ScheduleHorizon].
func (s *Service) checkScheduledStart(at time.Time) error {
	now := s.Opts.Now()
	switch {
	case at.Before(now.Add(-ScheduleGrace)):
		return apierr.Errorf(apierr.BadInput, "scheduledStartAt is in the past; it may be at most %v before now", ScheduleGrace)
	case at.After(now.Add(ScheduleHorizon)):
		return apierr.Errorf(apierr.BadInput, "scheduledStartAt is more than a year ahead (%v at most)", ScheduleHorizon)
	}
	return nil
}

// PutLive stores a session with whatever times it has (import, demo,
// ScheduleLive) and files it where its state belongs: an anchor's queue
// while PREVIEW or LIVE, the replay timelines once ended after starting.
func (s *Service) PutLive(ctx context.Context, l *core.LiveSession) (err error) {
	defer store.Wrap(&err, "store live session %d", l.ID)
	if l.ID == 0 || l.Anchor == 0 {
		return apierr.Errorf(apierr.BadInput, "live session id and anchor must be positive numbers")
	}
	if l.ScheduledStartAt == nil && l.StartedAt == nil {
		return apierr.Errorf(apierr.BadInput, "a live session needs scheduledStartAt or startedAt")
	}
	if err := s.UsersExist(ctx, l.Anchor); err != nil {
		return err
	}
	shard := s.ShardOf(l.Anchor)
	jid, err := s.Begin(ctx, shard, "k", JLive, "a", store.FormatID(l.Anchor), "p", store.FormatID(l.ID))
	if err != nil {
		return err
	}
	if err := s.StoreLive(ctx, l); err != nil {
		return err
	}
	s.End(ctx, shard, jid)
	// An imported session of a suspended anchor is shown nowhere.
	return s.MarkSuspended(ctx, []store.ID{l.Anchor}, []string{s.Keys.Live(l.ID)})
}

// StoreLive writes a journaled session's hash, its record of truth, and
// settles the rest from it.
func (s *Service) StoreLive(ctx context.Context, l *core.LiveSession) error {
	hset := s.Redis.B().Hset().Key(s.Keys.Live(l.ID)).FieldValue().FieldValue("a", store.FormatID(l.Anchor)).FieldValue("t", l.Title)
	if l.CoverURL != "" {
		hset = hset.FieldValue("cv", l.CoverURL)
	}
	for f, t := range map[string]*time.Time{"s": l.ScheduledStartAt, "b": l.StartedAt, "e": l.EndedAt} {
		if t != nil {
			hset = hset.FieldValue(f, store.ScoreArg(t.UnixMilli()))
		}
	}
	if err := s.Commit(ctx, nil, nil, nil, hset.Build()).Error(); err != nil {
		return fmt.Errorf("write the session's hash: %w", err)
	}
	return s.settleLive(ctx, l.Anchor, l.ID)
}

// QueueScore orders an anchor's queue: LIVE by start time (positive, newest
// first), then PREVIEW by scheduled start (negated, so soonest first).
func QueueScore(l *core.LiveSession) int64 {
	if l.StartedAt != nil {
		return l.StartedAt.UnixMilli()
	}
	return -l.ScheduledStartAt.UnixMilli()
}

func (s *Service) Enqueue(ctx context.Context, anchor store.ID, it store.Item) error {
	return s.Do(ctx, s.Redis.B().Zadd().Key(s.Keys.LiveQueue(anchor)).ScoreMember().ScoreMember(float64(it.TS), store.Member(it.ID)).Build()).Error()
}

// fileReplay adds an ended session to its anchor's replay outbox and queues
// its fan-out to followers' replay inboxes.
func (s *Service) fileReplay(ctx context.Context, anchor store.ID, it store.Item) error {
	if err := s.Do(ctx, s.Redis.B().Zadd().Key(s.Keys.ReplayOutbox(anchor)).ScoreMember().
		ScoreMember(float64(it.TS), store.Member(it.ID)).Build()).Error(); err != nil {
		return err
	}
	return s.Emit(ctx, core.Event{Type: core.EvReplay, User: anchor, Item: it})
}

// StartLive moves anchor's session from PREVIEW to LIVE.
func (s *Service) StartLive(ctx context.Context, anchor, id store.ID) (_ *core.LiveSession, err error) {
	defer store.Wrap(&err, "start live session %d", id)
	return s.changeLive(ctx, anchor, id, "b")
}

// EndLive ends anchor's session: a LIVE one becomes a replay, a PREVIEW one
// is cancelled and shown nowhere.
func (s *Service) EndLive(ctx context.Context, anchor, id store.ID) (_ *core.LiveSession, err error) {
	defer store.Wrap(&err, "end live session %d", id)
	return s.changeLive(ctx, anchor, id, "e")
}

// changeLive journals a state change, makes it on the session's hash (the
// record of truth, where the transition script refuses what the state
// machine forbids) and settles the rest.
func (s *Service) changeLive(ctx context.Context, anchor, id store.ID, field string) (*core.LiveSession, error) {
	shard := s.ShardOf(anchor)
	jid, err := s.Begin(ctx, shard, "k", JLive, "a", store.FormatID(anchor), "p", store.FormatID(id))
	if err != nil {
		return nil, err
	}
	if _, err := s.Transition(ctx, anchor, id, field, s.NowMS()); err != nil {
		var refused *apierr.Error
		if errors.As(err, &refused) {
			s.End(ctx, shard, jid) // refused: nothing changed
		}
		return nil, err
	}
	if err := s.settleLive(ctx, anchor, id); err != nil {
		return nil, fmt.Errorf("recorded, a worker finishes it: %w", err)
	}
	s.End(ctx, shard, jid)
	return s.LiveSession(ctx, id)
}

func (s *Service) Transition(ctx context.Context, anchor, id store.ID, field string, now int64) (started bool, err error) {
	keys, args := []string{s.Keys.Live(id)}, []string{store.FormatID(anchor), field, store.ScoreArg(now)}
	res, err := s.Commit(ctx, liveTransition, keys, args, liveTransition.Cmd(s.Redis.B(), keys, args)).ToString()
	if err != nil {
		return false, err
	}
	switch res {
	case "missing":
		return false, apierr.Errorf(apierr.NotFound, "no live session with id %d", id)
	case "forbidden":
		return false, apierr.Errorf(apierr.Forbidden, "only the session's anchor may change it")
	case "ended":
		return false, apierr.Errorf(apierr.BadInput, "the session has ended")
	case "live":
		return false, apierr.Errorf(apierr.BadInput, "the session is live already")
	}
	return res != "ok:", nil
}

// Dequeue removes a session from its anchor's queue. The queues need no
// index of the anchors that have sessions (readers find them by live
// shard, liveQueued), so there is nothing else to settle.
func (s *Service) Dequeue(ctx context.Context, anchor, id store.ID) error {
	return s.Do(ctx, s.Redis.B().Zrem().Key(s.Keys.LiveQueue(anchor)).Member(store.Member(id)).Build()).Error()
}

// LiveSessions returns sessions by id in order, nil where none exists. One
// pipelined round trip.
func (s *Service) LiveSessions(ctx context.Context, ids []store.ID) (_ []*core.LiveSession, err error) {
	defer store.Wrap(&err, "read live sessions")
	return parseLives(ids, s.DoMulti(ctx, s.liveCmds(nil, ids)...))
}

// liveCmds appends the reads of sessions ids to cmds (parseLives reads
// their replies).
func (s *Service) liveCmds(cmds []rueidis.Completed, ids []store.ID) []rueidis.Completed {
	for _, id := range ids {
		cmds = append(cmds, s.Redis.B().Hgetall().Key(s.Keys.Live(id)).Build())
	}
	return cmds
}

// parseLives reads the replies of liveCmds: one session per id, nil where
// none exists.
func parseLives(ids []store.ID, rs []rueidis.RedisResult) ([]*core.LiveSession, error) {
	out := make([]*core.LiveSession, len(ids))
	for i, id := range ids {
		m, err := rs[i].AsStrMap()
		if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			out[i] = parseLive(id, m)
		}
	}
	return out, nil
}

func (s *Service) LiveSession(ctx context.Context, id store.ID) (*core.LiveSession, error) {
	ls, err := s.LiveSessions(ctx, []store.ID{id})
	return store.Single(ls, err, "live session", id)
}

func parseLive(id store.ID, m map[string]string) *core.LiveSession {
	anchor, _ := strconv.ParseUint(m["a"], 10, 64)
	l := &core.LiveSession{ID: id, Anchor: anchor, Title: m["t"], CoverURL: m["cv"]}
	at := func(f string) *time.Time {
		ms, err := strconv.ParseInt(m[f], 10, 64)
		if err != nil {
			return nil
		}
		t := time.UnixMilli(ms).UTC()
		return &t
	}
	l.ScheduledStartAt, l.StartedAt, l.EndedAt = at("s"), at("b"), at("e")
	l.AnchorSuspended = m[timeline.FieldSuspended] == "1"
	return l
}

// queueTTL is how long a queue read may sit in the client-side cache.
// Queues never expire in Redis and every change to one invalidates it, so
// this only bounds the memory of anchors no first page asks for again.
const queueTTL = 5 * time.Minute

// liveQueued lists the queued (LIVE and PREVIEW) sessions of anchors, read
// through the client-side cache: an anchor's queue is read by every
// follower's first page and changes only when a session of its starts or
// ends, so a warm replica reads none of them from Redis, and a first page
// then costs one round trip less. The queues are not checked against the
// sessions here.
func (s *Service) liveQueued(ctx context.Context, anchors []store.ID) ([]store.Item, error) {
	cmds := store.CmdsFor(anchors, func(a store.ID) rueidis.CacheableTTL {
		return rueidis.CT(s.Redis.B().Zrange().Key(s.Keys.LiveQueue(a)).Min("0").Max("-1").Withscores().Cache().ToStaticTTL(), queueTTL)
	})
	rs := s.Redis.DoMultiCache(ctx, cmds...)
	n := 0
	for _, r := range rs {
		n += core.EntryCount(r)
	}
	items := make([]store.Item, 0, n)
	var err error
	for _, r := range rs {
		if items, err = core.AppendParsedEntries(items, r); err != nil {
			return nil, fmt.Errorf("read live queues: %w", err)
		}
	}
	return items, nil
}

// QueuedSessions lists the LIVE and PREVIEW sessions of anchors, from
// their queues (read through the client-side cache, as a first live page
// reads them): what a realtime subscription catches up on after its
// channels were lost.
func (s *Service) QueuedSessions(ctx context.Context, anchors []store.ID) ([]store.ID, error) {
	items, err := s.liveQueued(ctx, anchors)
	if err != nil {
		return nil, err
	}
	ids := make([]store.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids, nil
}

// settleLive brings an anchor's queue and the replay timelines in line
// with the session's hash, its record of truth, then tells the anchor's
// followers with a live subscription open (once, on the anchor's
// channel: they read the session and its state themselves). A settle run
// again (a repair) tells them again, which changes nothing for them.
func (s *Service) settleLive(ctx context.Context, anchor, id store.ID) error {
	if err := s.fileSettled(ctx, anchor, id); err != nil {
		return err
	}
	s.Notify(ctx, core.Notice{Kind: core.NoticeLive, Author: anchor, Item: id})
	return nil
}

// fileSettled files the session where its hash says it belongs, reading
// the hash again until it stops changing (core.MaxSettleRounds).
func (s *Service) fileSettled(ctx context.Context, anchor, id store.ID) error {
	var applied *core.LiveSession
	for round := range core.MaxSettleRounds {
		cmds := s.liveCmds(nil, []store.ID{id})
		if round == 0 {
			// An account's first session makes it an anchor: its
			// followers' live feeds read its queue from then on.
			cmds = append(cmds, s.AnchorMarkCmd(anchor))
		}
		rs := s.DoMulti(ctx, cmds...)
		ls, err := parseLives([]store.ID{id}, rs)
		if err == nil && round == 0 && ls[0] != nil {
			err = s.EnsureAnchor(ctx, anchor, rs[1])
		}
		if err != nil {
			return fmt.Errorf("settle live session %d: %w", id, err)
		}
		l := ls[0]
		if applied != nil && l != nil && l.State() == applied.State() && l.Cancelled() == applied.Cancelled() {
			return nil
		}
		if err := s.fileLive(ctx, anchor, id, l); err != nil {
			return fmt.Errorf("settle live session %d: %w", id, err)
		}
		if l == nil {
			return nil // never stored: nothing of it may exist
		}
		applied = l
	}
	return fmt.Errorf("settle live session %d: it kept changing; the journal repair finishes it", id)
}

// fileLive files a session where its state belongs: an anchor's queue
// while PREVIEW or LIVE, the replay timelines once ended after starting,
// nowhere when cancelled or missing (l nil).
func (s *Service) fileLive(ctx context.Context, anchor, id store.ID, l *core.LiveSession) error {
	switch {
	case l == nil || l.Cancelled():
		return s.Dequeue(ctx, anchor, id)
	case l.State() == core.StateReplay:
		if err := s.Dequeue(ctx, anchor, id); err != nil {
			return err
		}
		return s.fileReplay(ctx, anchor, store.Item{TS: l.EndedAt.UnixMilli(), ID: id})
	}
	return s.Enqueue(ctx, anchor, store.Item{TS: QueueScore(l), ID: id})
}

// JLive is the journal kind of live session changes: fields a (anchor)
// and p (session), or s and q for a new session's id.
const JLive = "live"

// repairLive completes a live session change that died: the session
// settles.
func (s *Service) repairLive(ctx context.Context, shard int, e rueidis.XRangeEntry) error {
	fv := e.FieldValues
	ev, err := core.ParseEvent(map[string]string{"t": JLive, "u": fv["a"], "p": fv["p"], "s": fv["s"], "q": fv["q"]}, shard)
	if err != nil {
		return fmt.Errorf("%w: %w", core.ErrMalformed, err)
	}
	return s.settleLive(ctx, ev.User, ev.Item.ID)
}
