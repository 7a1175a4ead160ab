package moderation

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/redisstore"
)

// Moderation: what operators do about reports (`feedd moderate`), each
// action appended once to the audit stream (safety_report.go).
//
// Suspension. Like a deletion (safety_account.go), a suspension is
// committed by a marker on the user's stream shard (keys.suspended), set
// in one script with its journal entry (kind jSuspend) and its second
// pass; unsuspending deletes the marker in the same kind of script. From
// the commit on, every request of the account is refused with FORBIDDEN
// ("this account is suspended"): the charge's script and the publish log
// script read the marker in their own slot, at no round trip of their own
// (ratelimit.go). The journaled job then brings the account's posts and
// live sessions in line with the marker: while it stands each carries the
// field sx (fieldSuspended), which the read paths read anyway with the
// post (through the client-side cache; the HSET invalidates every copy)
// or the session, so leaving them out adds nothing to a page. Follows,
// likes and relations are not touched: unsuspending clears the marks and
// everything is back, in every feed, on its next read.
//
// Why marks on the items rather than a check of the author at read: a
// page reads its items before it knows their authors, and reading each
// author's marker would cost a round trip per page. The marks cost the job
// work proportional to the account's posts (its outbox o:{u} holds all of
// them) and sessions (its queue and replay outbox), once per suspension
// and once per unsuspension.
//
// The job settles as the journal does (journal.go): it reads the marker,
// walks the posts and sessions setting or clearing the mark, and reads the
// marker again; if it changed meanwhile (an unsuspension racing the
// suspension), it walks again. Every commit journals a job that starts
// after it, so the marks converge on the last commit. Marks are written
// only on hashes that exist (markIfExists): a post whose hash is not
// written yet is never created half. A checkpoint per journal entry lets
// a job resumed by the repair skip what it did.
//
// Requests in flight at the commit: a publish or scheduleLive admitted
// just before the marker may write its post or session after the job has
// gone by. The second pass, RepairAfter after the commit (above the
// longest a mutation's writes may take; secondPassLoop), walks again; a
// post the dispatcher materializes late from a logged publish event, and
// whatever an import stores, is marked as it is written (markSuspended,
// which reads the marker again after writing, so an unsuspension that
// commits in between cannot leave a stale mark behind).
//
// Takedown. A takedown is a delete by an operator: one script on the
// author's shard sets the takedown record (keys.takenDown), appends the
// post's delete event (the dispatcher tombstones the post and fans the
// removal out, exactly as for deletePost) and journals the rest (kind
// jTakedown): the post hash's td and tr fields and the audit entry. A
// second takedown finds the record and changes nothing.

// Moderation actions, as the audit stream names them.
const (
	ActionTakedown  = "takedown"
	ActionSuspend   = "suspend"
	ActionUnsuspend = "unsuspend"
	ActionResolve   = "resolve"
)

// Limits of what an operator writes.
const (
	MaxModReason   = 1000 // characters of a reason
	MaxModOperator = 100  // characters of an operator's name
)

// ModAction is who does a moderation action, and why.
type ModAction struct {
	Operator string
	Reason   string
}

// check applies the content rules to the action's operator and reason
// (required unless optional), and returns them trimmed.
func (a ModAction) check(reasonOptional bool) (ModAction, error) {
	var err error
	if a.Operator, err = content.CheckText("operator", a.Operator, MaxModOperator); err != nil {
		return a, err
	}
	if reasonOptional && strings.TrimSpace(a.Reason) == "" {
		a.Reason = ""
		return a, nil
	}
	a.Reason, err = content.CheckText("reason", a.Reason, MaxModReason)
	return a, err
}

// AuditFields are the fields of the audit entry of action on subject at
// ms, as a job's journal entry carries them and the audit stream stores
// them. An import's job carries them with no action: it appends none.
func (a ModAction) AuditFields(action, subject string, ms int64) []string {
	return []string{"t", store.ScoreArg(ms), "o", a.Operator, "a", action, "s", subject, "r", a.Reason}
}

// ModOutcome is what a moderation action did.
type ModOutcome struct {
	// Changed is false when the action had been done already (a second
	// takedown, suspending a suspended account): nothing changed.
	Changed bool
	// Posts and Sessions are the items a suspension or unsuspension
	// marked or unmarked.
	Posts, Sessions int
}

// Journal entry kinds of the moderation's jobs.
const (
	JSuspend  = "sus" // fields u (the user) and the action's (auditFields)
	JTakedown = "tkd" // fields p (the post), u (its author) and the action's (auditFields)
)

// SuspensionCommit suspends (ARGV[1] "1") or unsuspends ("") the user
// ARGV[5] whose marker is KEYS[1]: unless the marker already says so, it
// sets it (at ARGV[2], reason ARGV[3], operator ARGV[4]) or deletes it,
// journals the job on KEYS[2] (fields ARGV[6..]) and owes it a second
// pass in KEYS[3] (suspendSweeps, at the server's time). Replies {1,
// entry id}, or {0} when nothing changed.
var SuspensionCommit = store.NewScript(false, `
local on = ARGV[1] == '1'
if on == (redis.call('EXISTS', KEYS[1]) == 1) then return {0} end
if on then
  redis.call('HSET', KEYS[1], 'at', ARGV[2], 'r', ARGV[3], 'o', ARGV[4])
else
  redis.call('DEL', KEYS[1])
end
local t = redis.call('TIME')
redis.call('ZADD', KEYS[3], t[1] * 1000 + math.floor(t[2] / 1000), ARGV[5])
return {1, redis.call('XADD', KEYS[2], '*', unpack(ARGV, 6))}
`)

// Suspend suspends user's account: its tokens get FORBIDDEN on every
// operation and its posts and live sessions leave every feed, its follows
// staying. NOT_FOUND when no such account exists.
func (s *Service) Suspend(ctx context.Context, user store.ID, a ModAction) (_ ModOutcome, err error) {
	defer store.Wrap(&err, "suspend user %d", user)
	if a, err = a.check(false); err != nil {
		return ModOutcome{}, err
	}
	if err := s.accountExists(ctx, user); err != nil {
		return ModOutcome{}, err
	}
	return s.changeSuspension(ctx, user, true, a, ActionSuspend, s.NowMS())
}

// Unsuspend lifts user's suspension: its posts and sessions are shown
// again and its tokens work. Changed is false when it was not suspended.
func (s *Service) Unsuspend(ctx context.Context, user store.ID, a ModAction) (_ ModOutcome, err error) {
	defer store.Wrap(&err, "unsuspend user %d", user)
	if a, err = a.check(false); err != nil {
		return ModOutcome{}, err
	}
	out, err := s.changeSuspension(ctx, user, false, a, ActionUnsuspend, s.NowMS())
	if err == nil && !out.Changed {
		// Not suspended: say whether there is such an account at all.
		err = s.accountExists(ctx, user)
	}
	return out, err
}

// accountExists is NOT_FOUND unless user has a profile and no deletion.
func (s *Service) accountExists(ctx context.Context, user store.ID) error {
	rs := s.DoMulti(ctx, s.Redis.B().Exists().Key(s.Keys.User(user)).Build(),
		s.Redis.B().Exists().Key(s.Keys.Gone(s.ShardOf(user), user)).Build())
	if err := store.FirstErr(rs); err != nil {
		return fmt.Errorf("read the account: %w", err)
	}
	profile, _ := rs[0].AsInt64()
	gone, _ := rs[1].AsInt64()
	if profile == 0 || gone == 1 {
		return apierr.Errorf(apierr.NotFound, "no user with id %d", user)
	}
	return nil
}

// changeSuspension commits a suspension (on) or its lifting, runs its job
// and appends its audit entry (action; none when empty: an import).
func (s *Service) changeSuspension(ctx context.Context, user store.ID, on bool, a ModAction, action string, at int64) (ModOutcome, error) {
	shard := s.ShardOf(user)
	fields := append([]string{"k", JSuspend, "u", store.FormatID(user)}, a.AuditFields(action, "user:"+store.FormatID(user), at)...)
	flag := ""
	if on {
		flag = "1"
	}
	keys := []string{s.Keys.Suspended(shard, user), s.Keys.Journal(shard), s.Keys.SuspendSweeps(shard)}
	args := append([]string{flag, store.ScoreArg(at), a.Reason, a.Operator, store.FormatID(user)}, fields...)
	arr, err := s.Commit(ctx, SuspensionCommit, keys, args, SuspensionCommit.Cmd(s.Redis.B(), keys, args)).ToArray()
	if err != nil {
		return ModOutcome{}, fmt.Errorf("commit: %w", err)
	}
	if fresh, _ := arr[0].AsInt64(); fresh != 1 || len(arr) < 2 {
		return ModOutcome{}, nil
	}
	jid, _ := arr[1].ToString()
	out, err := s.runSuspensionJob(ctx, shard, jid, journalFields(fields))
	if err != nil {
		return out, fmt.Errorf("committed, a worker finishes the job: %w", err)
	}
	s.End(ctx, shard, jid)
	out.Changed = true
	return out, nil
}

// journalFields is the field map of a journal entry written with fields.
func journalFields(fields []string) map[string]string {
	m := make(map[string]string, len(fields)/2)
	for i := 0; i+1 < len(fields); i += 2 {
		m[fields[i]] = fields[i+1]
	}
	return m
}

// runSuspensionJob runs the job of shard's journal entry jid (fields fv):
// the marks, then the audit entry the entry carries, if any.
func (s *Service) runSuspensionJob(ctx context.Context, shard int, jid string, fv map[string]string) (ModOutcome, error) {
	u, err := store.ParseID(fv["u"])
	if err != nil {
		return ModOutcome{}, fmt.Errorf("%w: journal field u %q", core.ErrMalformed, fv["u"])
	}
	out, err := s.SettleSuspension(ctx, u, s.Keys.SuspendCheckpoint(shard, jid))
	if err != nil {
		return out, err
	}
	// The account's posts left (or came back to) its followers' feeds.
	s.Notify(ctx, core.Notice{Kind: core.NoticeSuspension, Author: u})
	return out, s.appendAudit(ctx, "sus:"+store.Itoa(shard)+":"+jid, fv)
}

// markSource is one list of an account's items the job marks: its key
// and the hash of each item.
type markSource struct {
	key    string
	hash   func(store.ID) string
	isPost bool
}

// markSources are the lists that hold every post and live session of u.
func (s *Service) markSources(u store.ID) []markSource {
	return []markSource{
		{key: s.Keys.Outbox(u), hash: s.Keys.Post, isPost: true},
		{key: s.Keys.LiveQueue(u), hash: s.Keys.Live},
		{key: s.Keys.ReplayOutbox(u), hash: s.Keys.Live},
	}
}

// markChunk is how many items one step of the job marks, in one pipeline.
const markChunk = 500

// MarkPos is where a job stands: the marks it sets (on), the source it
// walks and the last item of it done (nil: none yet).
type MarkPos struct {
	On   bool
	src  int
	Last *store.Item
}

func (p MarkPos) String() string {
	on := "0"
	if p.On {
		on = "1"
	}
	if p.Last == nil {
		return on + " " + store.Itoa(p.src)
	}
	return on + " " + store.Itoa(p.src) + " " + store.ScoreArg(p.Last.TS) + " " + store.FormatID(p.Last.ID)
}

// parseMarkPos reads a checkpoint; ok is false for none or a damaged one.
func parseMarkPos(v string) (p MarkPos, ok bool) {
	f := strings.Fields(v)
	if len(f) != 2 && len(f) != 4 {
		return p, false
	}
	p.On = f[0] == "1"
	src, err := strconv.Atoi(f[1])
	if err != nil || src < 0 {
		return p, false
	}
	p.src = src
	if len(f) == 4 {
		ts, err1 := core.ParseInt(f[2])
		id, err2 := store.ParseID(f[3])
		if err1 != nil || err2 != nil {
			return p, false
		}
		p.Last = &store.Item{TS: ts, ID: id}
	}
	return p, true
}

// SettleSuspension brings the marks of u's posts and sessions in line
// with its marker, re-read until it stops changing (bounded: the journal
// repairs what is left). ck, when set, is the job's checkpoint: a job
// resumed with the same marks to set goes on from it. Idempotent.
func (s *Service) SettleSuspension(ctx context.Context, u store.ID, ck string) (ModOutcome, error) {
	var out ModOutcome
	for range core.MaxSettleRounds {
		pos, err := s.markStart(ctx, u, ck)
		if err != nil {
			return out, err
		}
		if out, err = s.markAccount(ctx, u, pos, ck); err != nil {
			return out, err
		}
		again, err := s.markStart(ctx, u, "")
		if err != nil {
			return out, err
		}
		if ck != "" {
			if err := s.Do(ctx, s.Redis.B().Del().Key(ck).Build()).Error(); err != nil {
				return out, fmt.Errorf("drop the checkpoint: %w", err)
			}
		}
		if again.On == pos.On {
			return out, nil
		}
	}
	return out, fmt.Errorf("settle the suspension of user %d: it kept changing; the journal repair finishes it", u)
}

// markStart reads whether u is suspended and, with ck, where its job
// stands: from the start unless the checkpoint sets the same marks.
func (s *Service) markStart(ctx context.Context, u store.ID, ck string) (MarkPos, error) {
	cmds := []rueidis.Completed{s.Redis.B().Exists().Key(s.Keys.Suspended(s.ShardOf(u), u)).Build()}
	if ck != "" {
		cmds = append(cmds, s.Redis.B().Get().Key(ck).Build())
	}
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs); err != nil {
		return MarkPos{}, fmt.Errorf("read the suspension: %w", err)
	}
	n, _ := rs[0].AsInt64()
	pos := MarkPos{On: n == 1}
	if ck != "" {
		v, _ := rs[1].ToString()
		if got, ok := parseMarkPos(v); ok && got.On == pos.On {
			pos = got
		}
	}
	return pos, nil
}

// markAccount walks u's sources from pos, setting (pos.on) or clearing
// the mark on each item, one chunk a round trip: the writes of a chunk go
// with the read of the next and the checkpoint of the one before (whose
// writes Redis has confirmed).
func (s *Service) markAccount(ctx context.Context, u store.ID, pos MarkPos, ck string) (ModOutcome, error) {
	var out ModOutcome
	srcs := s.markSources(u)
	var writes []rueidis.Completed // the marks of the items between done and pos
	done := pos
	for pos.src < len(srcs) {
		src := srcs[pos.src]
		cmds := append(writes, s.SeekCmd(core.Older, timeline.Source{Key: src.key}, pos.Last, markChunk))
		if ck != "" {
			cmds = append(cmds, s.Redis.B().Set().Key(ck).Value(done.String()).Ex(core.CheckpointTTL).Build())
		}
		rs := s.DoMulti(ctx, cmds...)
		if err := store.FirstErr(rs); err != nil {
			return out, fmt.Errorf("mark the items of user %d: %w", u, err)
		}
		done = pos
		items, _, err := core.ParseSeek(rs[len(writes)])
		if err != nil {
			return out, err
		}
		writes = store.CmdsFor(items, func(it store.Item) rueidis.Completed { return s.MarkCmd(src.hash(it.ID), pos.On) })
		if src.isPost {
			out.Posts += len(items)
		} else {
			out.Sessions += len(items)
		}
		if len(items) == markChunk {
			pos.Last = &items[len(items)-1]
			continue
		}
		pos.src, pos.Last = pos.src+1, nil
	}
	// The profile last: its mark keeps the account out of follower lists.
	writes = append(writes, s.MarkCmd(s.Keys.User(u), pos.On))
	if len(writes) > 0 {
		if err := store.FirstErr(s.DoMulti(ctx, writes...)); err != nil {
			return out, fmt.Errorf("mark the items of user %d: %w", u, err)
		}
	}
	return out, nil
}

// repairSuspension finishes the job a journal entry records.
func (s *Service) repairSuspension(ctx context.Context, shard int, e rueidis.XRangeEntry) error {
	_, err := s.runSuspensionJob(ctx, shard, e.ID, e.FieldValues)
	return err
}

// sweepSuspensions runs the second pass of shard's suspensions and
// unsuspensions committed before cutoff: the marks settled again,
// without a checkpoint.
func (s *Service) sweepSuspensions(ctx context.Context, shard int, cutoff time.Time) error {
	return s.secondPasses(ctx, s.Keys.SuspendSweeps(shard), cutoff, func(m string) error {
		u, err := store.ParseID(m)
		if err != nil {
			return fmt.Errorf("%w: suspended user %q", core.ErrMalformed, m)
		}
		_, err = s.SettleSuspension(ctx, u, "")
		return err
	})
}

// Suspensions calls fn with the suspended accounts, a batch at a time.
func (s *Service) Suspensions(ctx context.Context, fn func([]core.Suspension) error) (err error) {
	defer store.Wrap(&err, "list suspended accounts")
	return s.shardHashes(ctx, s.Keys.Suspended, []string{"at", "r", "o"}, func(ids []store.ID, fs [][]string) error {
		out := make([]core.Suspension, len(ids))
		for i, f := range fs {
			ms, _ := core.ParseInt(f[0])
			out[i] = core.Suspension{User: ids[i], At: time.UnixMilli(ms).UTC(), Reason: f[1], Operator: f[2]}
		}
		return fn(out)
	})
}

// shardHashes calls fn with the hashes keyOf names on each stream shard
// (keyOf(shard, id) is the shard's hash for id: a deletion's or a
// suspension's marker), their ids and the values of fields, a SCAN batch
// at a time; a hash gone meanwhile is left out.
func (s *Service) shardHashes(ctx context.Context, keyOf func(shard int, id store.ID) string, fields []string, fn func(ids []store.ID, vals [][]string) error) error {
	for sh := 0; sh < s.Opts.StreamShards; sh++ {
		head := keyOf(sh, 0)
		head = head[:len(head)-1]
		err := redisstore.ScanKeys(ctx, s.Redis, redisstore.GlobEscape(head)+"*", func(keys []string) error {
			var ids []store.ID
			for _, k := range keys {
				if id, err := store.ParseID(strings.TrimPrefix(k, head)); err == nil {
					ids = append(ids, id)
				}
			}
			rs := s.DoMulti(ctx, store.CmdsFor(ids, func(id store.ID) rueidis.Completed {
				return s.Redis.B().Hmget().Key(keyOf(sh, id)).Field(fields...).Build()
			})...)
			var found []store.ID
			var vals [][]string
			for i, r := range rs {
				f := make([]string, len(fields))
				if ok, err := timeline.HashFields(r, f); err != nil {
					return err
				} else if ok {
					found, vals = append(found, ids[i]), append(vals, f)
				}
			}
			return fn(found, vals)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// PutSuspension records a suspension (import), as Suspend does but without
// an audit entry (the audit lines carry those) and whether or not the
// account exists yet: its posts and sessions imported later are marked as
// they are stored.
func (s *Service) PutSuspension(ctx context.Context, sp core.Suspension) (err error) {
	defer store.Wrap(&err, "record the suspension of user %d", sp.User)
	if sp.User == 0 {
		return apierr.Errorf(apierr.BadInput, "a suspension needs a positive user id")
	}
	at := sp.At
	if at.IsZero() {
		at = s.Opts.Now()
	}
	_, err = s.changeSuspension(ctx, sp.User, true, ModAction{Operator: sp.Operator, Reason: sp.Reason}, "", at.UnixMilli())
	return err
}

// SettleSuspensions settles the marks of every suspended account (Rebuild).
func (s *Service) SettleSuspensions(ctx context.Context, st *core.RebuildStats) error {
	return s.Suspensions(ctx, func(ss []core.Suspension) error {
		for _, sp := range ss {
			if _, err := s.SettleSuspension(ctx, sp.User, ""); err != nil {
				return err
			}
			st.Suspensions++
		}
		return nil
	})
}

// TakedownCommit takes down a post: unless the record KEYS[1] exists
// (reply 0) or the post was deleted by its author (ARGV[2] "1", reply -1),
// it sets the record (ARGV[1] ms), appends the delete event (ARGV[4 ..
// 3+ARGV[3]]) to the events stream KEYS[2] and journals the rest (the
// other ARGV) on KEYS[3]: reply {1, journal entry id}.
var TakedownCommit = store.NewScript(false, `
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
if ARGV[2] == '1' then return {-1} end
redis.call('SET', KEYS[1], ARGV[1])
local n = tonumber(ARGV[3])
redis.call('XADD', KEYS[2], '*', unpack(ARGV, 4, 3 + n))
return {1, redis.call('XADD', KEYS[3], '*', unpack(ARGV, 4 + n))}
`)

// Takedown takes a post down: it leaves every feed as a deleted post does
// and is marked taken down (its node reads as null). NOT_FOUND when no
// such post exists; BAD_USER_INPUT when its author deleted it.
func (s *Service) Takedown(ctx context.Context, post store.ID, a ModAction) (_ ModOutcome, err error) {
	defer store.Wrap(&err, "take down post %d", post)
	if a, err = a.check(false); err != nil {
		return ModOutcome{}, err
	}
	ps, err := s.Posts(ctx, []store.ID{post})
	if err != nil {
		return ModOutcome{}, err
	}
	p := ps[0]
	if p == nil || p.Author == 0 {
		return ModOutcome{}, apierr.Errorf(apierr.NotFound, "no post with id %d", post)
	}
	return s.takedown(ctx, p, a, ActionTakedown, s.NowMS())
}

// takedown commits p's takedown at ms, runs its job and appends its audit
// entry (action; none when empty: an import).
func (s *Service) takedown(ctx context.Context, p *content.Post, a ModAction, action string, ms int64) (ModOutcome, error) {
	shard := s.ShardOf(p.Author)
	ev := core.Event{Type: core.EvDelete, User: p.Author, Item: store.Item{TS: p.CreatedAt.UnixMilli(), ID: p.ID}}.Fields()
	fields := append([]string{"k", JTakedown, "p", store.FormatID(p.ID), "u", store.FormatID(p.Author)},
		a.AuditFields(action, "post:"+store.FormatID(p.ID), ms)...)
	deleted := ""
	if p.Deleted {
		deleted = "1"
	}
	keys := []string{s.Keys.TakenDown(shard, p.ID), s.Keys.Events(shard), s.Keys.Journal(shard)}
	args := append(append([]string{store.ScoreArg(ms), deleted, store.Itoa(len(ev))}, ev...), fields...)
	arr, err := s.Commit(ctx, TakedownCommit, keys, args, TakedownCommit.Cmd(s.Redis.B(), keys, args)).ToArray()
	if err != nil {
		return ModOutcome{}, fmt.Errorf("commit: %w", err)
	}
	switch st, _ := arr[0].AsInt64(); {
	case st == -1:
		return ModOutcome{}, apierr.Errorf(apierr.BadInput, "post %d was deleted by its author; there is nothing to take down", p.ID)
	case st != 1 || len(arr) < 2:
		return ModOutcome{}, nil
	}
	jid, _ := arr[1].ToString()
	if err := s.FinishTakedown(ctx, jid, journalFields(fields)); err != nil {
		return ModOutcome{}, fmt.Errorf("committed, a worker finishes it: %w", err)
	}
	s.End(ctx, shard, jid)
	return ModOutcome{Changed: true}, nil
}

// FinishTakedown does what a takedown's journal entry jid (fields fv)
// records: the post tombstoned and out of its author's timelines (as the
// dispatcher does with the delete event, which also fans the removal out),
// marked taken down, and the audit entry. Idempotent.
func (s *Service) FinishTakedown(ctx context.Context, jid string, fv map[string]string) error {
	post, err1 := store.ParseID(fv["p"])
	author, err2 := store.ParseID(fv["u"])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("%w: takedown journal fields p %q, u %q", core.ErrMalformed, fv["p"], fv["u"])
	}
	if err := s.Tombstone(ctx, &content.Post{ID: post, Author: author}); err != nil {
		return fmt.Errorf("tombstone: %w", err)
	}
	mark := s.Redis.B().Hset().Key(s.Keys.Post(post)).FieldValue().
		FieldValue(timeline.FieldTakenDown, fv["t"]).FieldValue(timeline.FieldTakedownReason, fv["r"]).Build()
	if err := s.Do(ctx, mark).Error(); err != nil {
		return fmt.Errorf("mark taken down: %w", err)
	}
	return s.appendAudit(ctx, "tkd:"+store.FormatID(post), fv)
}

// repairTakedown finishes the takedown a journal entry records.
func (s *Service) repairTakedown(ctx context.Context, _ int, e rueidis.XRangeEntry) error {
	return s.FinishTakedown(ctx, e.ID, e.FieldValues)
}

// PutTakedown records a taken-down post (import): p with TakenDown set.
// A post the store does not hold is written as the tombstone a takedown
// leaves (nothing indexes it); one it holds is taken down as Takedown
// does, without an audit entry (the audit lines carry those).
func (s *Service) PutTakedown(ctx context.Context, p *content.Post) (err error) {
	defer store.Wrap(&err, "record the takedown of post %d", p.ID)
	if p.ID == 0 || p.Author == 0 || p.TakenDown.IsZero() {
		return apierr.Errorf(apierr.BadInput, "a takedown needs a post id, its author and when it was taken down")
	}
	ps, err := s.Posts(ctx, []store.ID{p.ID})
	if err != nil {
		return err
	}
	ms := p.TakenDown.UnixMilli()
	if old := ps[0]; old != nil && !old.Deleted {
		if old.Author != p.Author {
			return apierr.Errorf(apierr.BadInput, "post %d exists with another author", p.ID)
		}
		_, err := s.takedown(ctx, old, ModAction{Reason: p.TakedownReason}, "", ms)
		return err
	}
	hset := s.Redis.B().Hset().Key(s.Keys.Post(p.ID)).FieldValue().FieldValue("d", "1").
		FieldValue(timeline.FieldTakenDown, store.ScoreArg(ms)).FieldValue(timeline.FieldTakedownReason, p.TakedownReason)
	if ps[0] == nil { // as postCreate writes it; a tombstone there keeps its own
		hset = hset.FieldValue("a", store.FormatID(p.Author)).FieldValue("t", store.ScoreArg(p.CreatedAt.UnixMilli())).FieldValue("x", p.Text)
	}
	return store.FirstErr(s.DoMulti(ctx, hset.Build(),
		s.Redis.B().Set().Key(s.Keys.TakenDown(s.ShardOf(p.Author), p.ID)).Value(store.ScoreArg(ms)).Build()))
}

// FinishJobs finishes every job of the given kinds still journaled
// (Rebuild runs it first: nothing of a deleted account, and no post taken
// down or account suspended, may be rebuilt as if it were not).
func (s *Service) FinishJobs(ctx context.Context, kinds ...string) error {
	for sh := 0; sh < s.Opts.StreamShards; sh++ {
		entries, err := s.Do(ctx, s.Redis.B().Xrange().Key(s.Keys.Journal(sh)).Start("-").End("+").Build()).AsXRange()
		if err != nil {
			return fmt.Errorf("read journal: %w", err)
		}
		for _, e := range entries {
			if !slices.Contains(kinds, e.FieldValues["k"]) {
				continue
			}
			if err := s.Repair(ctx, sh, e); err != nil {
				return fmt.Errorf("journal entry %s: %w", e.ID, err)
			}
			s.End(ctx, sh, e.ID)
		}
	}
	return nil
}
