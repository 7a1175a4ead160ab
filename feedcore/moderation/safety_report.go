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
	"github.com/feedd/feedd/feedcore/ratelimit"
	"github.com/feedd/feedd/feedcore/store"
)

// Reports: a viewer tells the operators that a post, a user or a live
// session is wrong. A report changes nothing anyone sees (a reporter who
// also wants to block or mute sends those mutations too); operators read
// the reports (`feedd reports`), act on them (safety_moderation.go) and
// resolve them, every action going to the audit stream.
//
// Storage: one slot, hash tag {rp} (keys.mod): the reports stream (entry
// id = report id, so reports are listed oldest first and `--since` an id
// is a range), the index of reporter and subject to report id that makes
// a report idempotent, the resolved reports, and the audit stream. A
// report is one script there (index checked, entry appended, index set),
// committed like every mutation's commit write (WAIT with
// --wait-replicas); a resolve is one script with its audit entry.

// ReportReasons are the reasons a report may give, as GraphQL's
// ReportReason names them.
var ReportReasons = []string{"SPAM", "HARASSMENT", "HATE", "VIOLENCE", "SEXUAL", "SELF_HARM", "ILLEGAL", "OTHER"}

// MaxReportComment is the longest report comment, in characters.
const MaxReportComment = 1000

// ReportRequest is a viewer's report, and the allowance of reports the
// reporter's are spent from (Rate 0: none).
type ReportRequest struct {
	Reporter store.ID
	Subject  core.Target
	Reason   string
	Comment  string
	Limit    ratelimit.RateLimit
}

// reportKind is the allowance of reports beside a viewer's others
// (Subject.Kind), as persisted query registrations have theirs.
const reportKind = "report"

// reportAppend files a report: the reports stream KEYS[1], the index
// KEYS[2] (field ARGV[1]: reporter and subject), the resolved reports
// KEYS[3]. With ARGV[2] "*" it appends a new entry (fields ARGV[4..])
// unless the index names one: {1, id} or {0, the id filed before}. With
// an explicit id (an import) it keeps the entry as it is when it exists
// and otherwise appends it with that id, which must be newer than the
// stream's newest ({-2, newest} if not), and sets the index ({-1, other}
// when the index names another report of the pair) and, with ARGV[3],
// the time it was resolved.
var reportAppend = store.NewScript(false, luaStreamID+`
local id = redis.call('HGET', KEYS[2], ARGV[1])
if ARGV[2] == '*' then
  if id then return {0, id} end
  id = redis.call('XADD', KEYS[1], '*', unpack(ARGV, 4))
  redis.call('HSET', KEYS[2], ARGV[1], id)
  return {1, id}
end
if id and id ~= ARGV[2] then return {-1, id} end
local fresh = 0
if #redis.call('XRANGE', KEYS[1], ARGV[2], ARGV[2]) == 0 then
  local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
  if #newest > 0 and not idLess(newest[1][1], ARGV[2]) then return {-2, newest[1][1]} end
  redis.call('XADD', KEYS[1], ARGV[2], unpack(ARGV, 4))
  fresh = 1
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
if ARGV[3] ~= '' then redis.call('HSETNX', KEYS[3], ARGV[2], ARGV[3]) end
return {fresh, ARGV[2]}
`)

// luaStreamID: idLess(a, b) says whether stream entry id a comes before b.
const luaStreamID = `
local function idParts(id)
  local ms, seq = string.match(id, '^(%d+)-(%d+)$')
  return tonumber(ms), tonumber(seq)
end
local function idLess(a, b)
  local am, as = idParts(a)
  local bm, bs = idParts(b)
  return am < bm or (am == bm and as < bs)
end
`

// Report files a report of r.Subject by r.Reporter and returns its id:
// the id of the report the reporter filed of that subject before, if any
// (a repeat changes nothing: the first reason and comment stand). Refused
// with BAD_USER_INPUT for an unknown reason, a comment over
// MaxReportComment characters or a report of oneself, NOT_FOUND for a
// subject that does not exist (or that the reporter could not see: a
// deleted post, a suspended account's), RATE_LIMITED past the reporter's
// allowance (spent by repeats too). What the reporter sees does not
// change. Round trips: the subject's read (which carries the request's
// charge), the allowance, the report.
func (s *Service) Report(ctx context.Context, r ReportRequest) (_ string, err error) {
	defer store.Wrap(&err, "report %s", r.Subject)
	comment, err := checkReport(r)
	if err != nil {
		return "", err
	}
	if err := s.checkTarget(ctx, r.Subject); err != nil {
		return "", err
	}
	if r.Limit.Rate > 0 {
		v, err := s.SpendNow(ctx, ratelimit.Subject{Viewer: r.Reporter, Kind: reportKind}, 1, r.Limit)
		if err != nil {
			return "", fmt.Errorf("spend the reports allowance: %w", err)
		}
		if v.Err != nil {
			return "", v.Err
		}
	}
	keys := []string{s.Keys.Reports(), s.Keys.ReportIndex(), s.Keys.ReportState()}
	args := []string{store.FormatID(r.Reporter) + " " + r.Subject.String(), "*", "",
		"r", store.FormatID(r.Reporter), "s", r.Subject.String(), "n", r.Reason, "c", comment}
	arr, err := s.Commit(ctx, reportAppend, keys, args, reportAppend.Cmd(s.Redis.B(), keys, args)).ToArray()
	if err == nil && len(arr) != 2 {
		err = fmt.Errorf("reply of %d values", len(arr))
	}
	if err != nil {
		return "", fmt.Errorf("file the report: %w", err)
	}
	id, _ := arr[1].ToString()
	if fresh, _ := arr[0].AsInt64(); fresh == 1 {
		s.Counters.Reports[slices.Index(ReportReasons, r.Reason)].Add(1)
	}
	return id, nil
}

// checkReport checks what a report says, without the store, and returns
// its comment trimmed ("" for none).
func checkReport(r ReportRequest) (string, error) {
	switch {
	case !slices.Contains(ReportReasons, r.Reason):
		return "", apierr.Errorf(apierr.BadInput, "reason %q is not one of %s", r.Reason, strings.Join(ReportReasons, ", "))
	case r.Subject.Kind == core.TargetUser && r.Subject.ID == r.Reporter:
		return "", apierr.Errorf(apierr.BadInput, "you cannot report yourself")
	case strings.TrimSpace(r.Comment) == "":
		return "", nil
	}
	return content.CheckText("comment", r.Comment, MaxReportComment)
}

// checkTarget is NOT_FOUND unless t exists and shows: a post not deleted
// whose author is not suspended, an account not deleted, a live session
// whose anchor is not suspended. One round trip (a post is read through
// the client-side cache).
func (s *Service) checkTarget(ctx context.Context, t core.Target) error {
	found := false
	switch t.Kind {
	case core.TargetPost:
		ps, err := s.CachedPosts(ctx, []store.ID{t.ID})
		if err != nil {
			return err
		}
		found = ps[0] != nil && !ps[0].Deleted && !ps[0].AuthorSuspended
	case core.TargetLive:
		ls, err := s.LiveSessions(ctx, []store.ID{t.ID})
		if err != nil {
			return err
		}
		found = ls[0] != nil && !ls[0].AnchorSuspended
	case core.TargetUser:
		return s.accountExists(ctx, t.ID)
	}
	if !found {
		what := map[core.TargetKind]string{core.TargetPost: "post", core.TargetLive: "live session"}[t.Kind]
		return apierr.Errorf(apierr.NotFound, "no %s with id %d", what, t.ID)
	}
	return nil
}

// ParseSince reads "--since": an RFC 3339 time or an entry id (a report
// id, or an audit entry's), "" for the beginning.
func ParseSince(v string) (core.Since, error) {
	if v == "" {
		return core.Since{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return core.Since{Time: t}, nil
	}
	if !ValidEntryID(v) {
		return core.Since{}, apierr.Errorf(apierr.BadInput, "since %q is neither an RFC 3339 time (2026-11-25T10:00:00Z) nor an id (1764064800000-0)", v)
	}
	return core.Since{After: v}, nil
}

// ValidEntryID says whether id is a stream entry id, as report and audit
// entry ids are: "ms-seq", decimal.
func ValidEntryID(id string) bool {
	ms, seq, ok := strings.Cut(id, "-")
	_, err1 := strconv.ParseUint(ms, 10, 64)
	_, err2 := strconv.ParseUint(seq, 10, 64)
	return ok && err1 == nil && err2 == nil
}

// entryTime is the time of a stream entry id.
func entryTime(id string) time.Time {
	ms, _, _ := strings.Cut(id, "-")
	n, _ := core.ParseInt(ms)
	return time.UnixMilli(n).UTC()
}

// listChunk is how many entries a listing reads a round trip.
const listChunk = 500

// walkStream calls fn with the entries of the stream key from sc, oldest
// first, listChunk at a time.
func (s *Service) walkStream(ctx context.Context, key string, sc core.Since, fn func([]rueidis.XRangeEntry) error) error {
	start := sc.Start()
	for {
		es, err := s.Do(ctx, s.Redis.B().Xrange().Key(key).Start(start).End("+").Count(listChunk).Build()).AsXRange()
		if err != nil {
			return fmt.Errorf("read %s: %w", key, err)
		}
		if len(es) == 0 {
			return nil
		}
		if err := fn(es); err != nil {
			return err
		}
		if len(es) < listChunk {
			return nil
		}
		start = "(" + es[len(es)-1].ID
	}
}

// Reports calls fn with the reports filed from sc on, oldest first, a
// batch at a time, each with whether it was resolved.
func (s *Service) Reports(ctx context.Context, sc core.Since, fn func([]core.Report) error) (err error) {
	defer store.Wrap(&err, "list reports")
	return s.walkStream(ctx, s.Keys.Reports(), sc, func(es []rueidis.XRangeEntry) error {
		ids := make([]string, len(es))
		for i, e := range es {
			ids[i] = e.ID
		}
		state, err := s.Do(ctx, s.Redis.B().Hmget().Key(s.Keys.ReportState()).Field(ids...).Build()).ToArray()
		if err != nil {
			return fmt.Errorf("read the reports' state: %w", err)
		}
		out := make([]core.Report, len(es))
		for i, e := range es {
			fv := e.FieldValues
			r := core.Report{ID: e.ID, At: entryTime(e.ID), Reason: fv["n"], Comment: fv["c"]}
			r.Reporter, _ = store.ParseID(fv["r"])
			r.Subject, _ = core.ParseTarget(fv["s"])
			if v, err := state[i].ToString(); err == nil {
				ms, _ := core.ParseInt(v)
				r.Resolved = time.UnixMilli(ms).UTC()
			}
			out[i] = r
		}
		return fn(out)
	})
}

// reportResolve resolves the report ARGV[1] of the stream KEYS[1]: -1 when
// there is no such report, 0 when it is resolved already, else 1 once
// its time (ARGV[2] ms) is in KEYS[2] and its audit entry (ARGV[3..]) in
// the stream KEYS[3], in one step.
var reportResolve = store.NewScript(false, `
if #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) == 0 then return -1 end
if redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2]) == 0 then return 0 end
redis.call('XADD', KEYS[3], '*', unpack(ARGV, 3))
return 1
`)

// ResolveReport closes the report id: NOT_FOUND when there is none;
// Changed is false when it was resolved already. The reason is optional.
func (s *Service) ResolveReport(ctx context.Context, id string, a ModAction) (_ ModOutcome, err error) {
	defer store.Wrap(&err, "resolve report %s", id)
	if !ValidEntryID(id) {
		return ModOutcome{}, apierr.Errorf(apierr.BadInput, "%q is not a report id (like 1764064800000-0)", id)
	}
	if a, err = a.check(true); err != nil {
		return ModOutcome{}, err
	}
	now := s.NowMS()
	keys := []string{s.Keys.Reports(), s.Keys.ReportState(), s.Keys.Audit()}
	args := append([]string{id, store.ScoreArg(now)}, a.AuditFields(ActionResolve, "report:"+id, now)...)
	st, err := s.Commit(ctx, reportResolve, keys, args, reportResolve.Cmd(s.Redis.B(), keys, args)).AsInt64()
	switch {
	case err != nil:
		return ModOutcome{}, err
	case st == -1:
		return ModOutcome{}, apierr.Errorf(apierr.NotFound, "no report with id %s", id)
	}
	return ModOutcome{Changed: st == 1}, nil
}

// PutReport records a report (import) under its own id, open or resolved:
// the same report again changes nothing; its id must be newer than every
// report the store holds, and another report of the same reporter and
// subject is refused (BAD_USER_INPUT).
func (s *Service) PutReport(ctx context.Context, r core.Report) (err error) {
	defer store.Wrap(&err, "record report %s", r.ID)
	if !ValidEntryID(r.ID) {
		return apierr.Errorf(apierr.BadInput, "%q is not a report id (like 1764064800000-0)", r.ID)
	}
	if r.Reporter == 0 {
		return apierr.Errorf(apierr.BadInput, "a report needs a positive reporter id")
	}
	if _, err := checkReport(ReportRequest{Reporter: r.Reporter, Subject: r.Subject, Reason: r.Reason}); err != nil {
		return err
	}
	resolved := ""
	if !r.Resolved.IsZero() {
		resolved = store.ScoreArg(r.Resolved.UnixMilli())
	}
	keys := []string{s.Keys.Reports(), s.Keys.ReportIndex(), s.Keys.ReportState()}
	args := []string{store.FormatID(r.Reporter) + " " + r.Subject.String(), r.ID, resolved,
		"r", store.FormatID(r.Reporter), "s", r.Subject.String(), "n", r.Reason, "c", r.Comment}
	arr, err := s.Do(ctx, reportAppend.Cmd(s.Redis.B(), keys, args)).ToArray()
	if err != nil {
		return err
	}
	other, _ := arr[1].ToString()
	switch st, _ := arr[0].AsInt64(); st {
	case -1:
		return apierr.Errorf(apierr.BadInput, "user %d reported %s already, as report %s", r.Reporter, r.Subject, other)
	case -2:
		return apierr.Errorf(apierr.BadInput, "report %s is not newer than the store's newest report, %s: import reports into a store whose reports are older", r.ID, other)
	}
	return nil
}

// ReindexReports sets the index of every report from the stream, the
// first report of each reporter and subject winning (Rebuild).
func (s *Service) ReindexReports(ctx context.Context, st *core.RebuildStats) error {
	return s.walkStream(ctx, s.Keys.Reports(), core.Since{}, func(es []rueidis.XRangeEntry) error {
		cmds := store.CmdsFor(es, func(e rueidis.XRangeEntry) rueidis.Completed {
			return s.Redis.B().Hsetnx().Key(s.Keys.ReportIndex()).Field(e.FieldValues["r"] + " " + e.FieldValues["s"]).Value(e.ID).Build()
		})
		st.Reports += int64(len(es))
		return store.FirstErr(s.DoMulti(ctx, cmds...))
	})
}

// auditOnce appends the audit entry ARGV[2..] to the stream KEYS[1]
// unless the action ARGV[1] is in the set KEYS[2] already: a job run by
// its request and again by the repair appends it once.
var auditOnce = store.NewScript(false, `
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then return 0 end
redis.call('XADD', KEYS[1], '*', unpack(ARGV, 2))
return 1
`)

// appendAudit appends the audit entry a job's journal fields fv carry
// (none without an action: an import's job), once for the action key.
func (s *Service) appendAudit(ctx context.Context, key string, fv map[string]string) error {
	if fv["a"] == "" {
		return nil
	}
	args := []string{key}
	for _, f := range []string{"t", "o", "a", "s", "r"} {
		args = append(args, f, fv[f])
	}
	if err := s.Do(ctx, auditOnce.Cmd(s.Redis.B(), []string{s.Keys.Audit(), s.Keys.AuditDone()}, args)).Error(); err != nil {
		return fmt.Errorf("append the audit entry: %w", err)
	}
	return nil
}

// AuditLog calls fn with the audit stream's entries from sc on, oldest
// first, a batch at a time.
func (s *Service) AuditLog(ctx context.Context, sc core.Since, fn func([]core.AuditEntry) error) (err error) {
	defer store.Wrap(&err, "read the audit log")
	return s.walkStream(ctx, s.Keys.Audit(), sc, func(es []rueidis.XRangeEntry) error {
		out := make([]core.AuditEntry, len(es))
		for i, e := range es {
			fv := e.FieldValues
			ms, _ := core.ParseInt(fv["t"])
			out[i] = core.AuditEntry{ID: e.ID, At: time.UnixMilli(ms).UTC(), Operator: fv["o"], Action: fv["a"], Subject: fv["s"], Reason: fv["r"]}
		}
		return fn(out)
	})
}

// auditPut appends the audit entry ARGV[2..] to the stream KEYS[1] under
// the id ARGV[1]: 0 when it is there already, -1 (and the newest id) when
// the stream holds a newer one, else 1.
var auditPut = store.NewScript(false, luaStreamID+`
if #redis.call('XRANGE', KEYS[1], ARGV[1], ARGV[1]) > 0 then return {0} end
local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #newest > 0 and not idLess(newest[1][1], ARGV[1]) then return {-1, newest[1][1]} end
redis.call('XADD', KEYS[1], ARGV[1], unpack(ARGV, 2))
return {1}
`)

// PutAudit records an audit entry (import) under its own id: the same
// entry again changes nothing, and its id must be newer than the store's
// newest entry (BAD_USER_INPUT otherwise).
func (s *Service) PutAudit(ctx context.Context, e core.AuditEntry) (err error) {
	defer store.Wrap(&err, "record audit entry %s", e.ID)
	if !ValidEntryID(e.ID) {
		return apierr.Errorf(apierr.BadInput, "%q is not an audit entry id (like 1764064800000-0)", e.ID)
	}
	if !slices.Contains([]string{ActionTakedown, ActionSuspend, ActionUnsuspend, ActionResolve}, e.Action) {
		return apierr.Errorf(apierr.BadInput, "action %q is not takedown, suspend, unsuspend or resolve", e.Action)
	}
	args := []string{e.ID, "t", store.ScoreArg(e.At.UnixMilli()), "o", e.Operator, "a", e.Action, "s", e.Subject, "r", e.Reason}
	arr, err := s.Do(ctx, auditPut.Cmd(s.Redis.B(), []string{s.Keys.Audit()}, args)).ToArray()
	if err != nil {
		return err
	}
	if st, _ := arr[0].AsInt64(); st == -1 {
		newest, _ := arr[1].ToString()
		return apierr.Errorf(apierr.BadInput, "audit entry %s is not newer than the store's newest, %s: import the audit trail into a store whose trail is older", e.ID, newest)
	}
	return nil
}
