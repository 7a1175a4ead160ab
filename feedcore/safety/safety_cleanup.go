package safety

import (
	"context"
	"fmt"
	"strconv"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// The safety clean-up, as Mastodon's clear_from_home: once an author is
// hidden from a viewer who follows it (a block either way, a mute, a
// hide), the relation's settle notes the author in the viewer's hide notes
// (at a token far in the future, so reads skip its items at once; see
// noteToken) and queues a job {v, a, n: the token} on
// the viewer's stream shard. A worker then takes the author's posts and
// replays out of the viewer's inboxes and the author's sessions out of the
// viewer's live snapshots, and shortens the note to now plus
// Options.CleanupGrace: long enough for a fan-out task that read its
// targets before the relation to finish, after which the note lapses and
// reads stop paying for it.

const groupCleanup = "cleanup"

func (s *Service) CleanupStream(shard int) core.Stream {
	return core.Stream{Shard: shard, Key: s.Keys.Cleanup(shard), Group: groupCleanup, Name: "cleanup"}
}

// CleanupJob is one clean-up: author's items out of viewer's feeds, then
// the viewer's note shortened if still at note, its settle's token (0: a
// job queued without one, which shortens whatever note it finds).
type CleanupJob struct {
	Viewer, Author store.ID
	Note           int64
}

func ParseCleanupJob(fv map[string]string) (CleanupJob, error) {
	v, err := store.ParseID(fv["v"])
	if err != nil {
		return CleanupJob{}, fmt.Errorf("clean-up job viewer: %w", err)
	}
	a, err := store.ParseID(fv["a"])
	if err != nil {
		return CleanupJob{}, fmt.Errorf("clean-up job author: %w", err)
	}
	j := CleanupJob{Viewer: v, Author: a}
	if n, ok := fv["n"]; ok {
		if j.Note, err = strconv.ParseInt(n, 10, 64); err != nil {
			return CleanupJob{}, fmt.Errorf("clean-up job note: %w", err)
		}
	}
	return j, nil
}

func (s *Service) HandleCleanup(ctx context.Context, _ core.WorkerOptions, _ core.Stream, _ string, e rueidis.XRangeEntry) (bool, error) {
	j, err := ParseCleanupJob(e.FieldValues)
	if err != nil {
		return false, fmt.Errorf("%w: %w", core.ErrMalformed, err)
	}
	return false, s.CleanUp(ctx, j)
}

// hiddenRemove removes the author ARGV[2]'s items ARGV[4..] from the inbox
// KEYS[1] (keeping its horizon in KEYS[2], the inbox's cap ARGV[1]) if the
// author is still hidden from the reader: in its hidden authors KEYS[3]
// with an end after ARGV[3] ms. Checked in the same step, so a clean-up
// that runs late never undoes the backfill of an unmute or unblock.
var hiddenRemove = store.NewScript(false, core.LuaLess+core.LuaHorizon+`
local u = redis.call('ZSCORE', KEYS[3], ARGV[2])
if not u or tonumber(u) <= tonumber(ARGV[3]) then return 0 end
keepHorizon(KEYS[1], KEYS[2], tonumber(ARGV[1]))
return redis.call('ZREM', KEYS[1], unpack(ARGV, 4))
`)

// noteShorten ends the note of author ARGV[1] in the hide notes KEYS[1] at
// ARGV[2] ms unless it ends sooner or is no longer at the job's token
// ARGV[4] ("": any note), and forgets notes ended by ARGV[3] ms. A note
// rewritten since the job was queued is a newer hiding's: its own job
// shortens it once it has cleaned up.
var noteShorten = store.NewScript(false, `
local u = redis.call('ZSCORE', KEYS[1], ARGV[1])
local ours = ARGV[4] == '' or (u and tonumber(u) == tonumber(ARGV[4]))
if ours and u and tonumber(u) > tonumber(ARGV[2]) then redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
return 1
`)

// CleanUp runs one job: the author's items out of the viewer's inboxes
// and live snapshots, then the viewer's note shortened. Idempotent.
func (s *Service) CleanUp(ctx context.Context, j CleanupJob) error {
	if err := s.CleanFeeds(ctx, j); err != nil {
		return err
	}
	return s.ShortenNote(ctx, j)
}

// CleanFeeds takes the author's items out of the viewer's inboxes and
// live snapshots.
func (s *Service) CleanFeeds(ctx context.Context, j CleanupJob) error {
	tls := s.Timelines()
	recent, err := s.InboxableIDs(ctx, tls, []store.ID{j.Author})
	if err != nil {
		return err
	}
	now := store.ScoreArg(s.NowMS())
	var removes []rueidis.Completed
	for i, tl := range tls {
		if ids := recent[0][i]; len(ids) > 0 {
			args := append([]string{store.Itoa(s.Opts.InboxCap), store.Member(j.Author), now}, store.Members(ids)...)
			removes = append(removes, hiddenRemove.Cmd(s.Redis.B(),
				[]string{tl.Inbox(j.Viewer), tl.Horizon(j.Viewer), s.Keys.HiddenAuthors(j.Viewer)}, args))
		}
	}
	if err := store.FirstErr(s.DoMulti(ctx, removes...)); err != nil {
		return fmt.Errorf("clean up inbox: %w", err)
	}
	return s.dropFromSnapshots(ctx, j)
}

// ShortenNote ends the viewer's note of the author at now plus
// CleanupGrace, if it is still the one j's settle wrote.
func (s *Service) ShortenNote(ctx context.Context, j CleanupJob) error {
	nowMS, token := s.NowMS(), ""
	if j.Note != 0 {
		token = store.ScoreArg(j.Note)
	}
	err := s.Do(ctx, noteShorten.Cmd(s.Redis.B(), []string{s.Keys.HideNotes(j.Viewer)},
		[]string{store.Member(j.Author), store.ScoreArg(nowMS + s.Opts.CleanupGrace.Milliseconds()), store.ScoreArg(nowMS), token})).Error()
	if err != nil {
		return fmt.Errorf("shorten hide note: %w", err)
	}
	return nil
}

// snapClear clears entries of the live snapshot KEYS[1] in place: writes
// 8 zero bytes (id 0) at each offset ARGV[i], so every other entry keeps
// its place, and cursors theirs. Never on a snapshot that has expired:
// SETRANGE would make it anew, with no expiry.
var snapClear = store.NewScript(false, `
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for _, off in ipairs(ARGV) do
  redis.call('SETRANGE', KEYS[1], tonumber(off), '\0\0\0\0\0\0\0\0')
end
return 1
`)

// dropFromSnapshots clears the author's sessions from the viewer's live
// snapshots (one per device, at most Options.MaxDevices), so a paging
// session begun before the relation does not show them once the note has
// lapsed.
func (s *Service) dropFromSnapshots(ctx context.Context, j CleanupJob) error {
	devs, err := s.Do(ctx, s.Redis.B().Zrange().Key(s.Keys.LiveDevices(j.Viewer)).Min("0").Max("-1").Build()).AsStrSlice()
	if err != nil {
		return fmt.Errorf("read live snapshots: %w", err)
	}
	var keys []string
	var reads []rueidis.Completed
	for _, d := range devs {
		if len(d) >= 16 {
			key := s.Keys.Snapshot(j.Viewer, d[:16])
			keys = append(keys, key)
			reads = append(reads, s.Redis.B().Get().Key(key).Build())
		}
	}
	var items []store.Item
	at := make([]int, len(keys)+1) // entries of keys[i]: items[at[i]:at[i+1]]
	for i, r := range s.DoMulti(ctx, reads...) {
		raw, err := r.ToString()
		if err != nil && !rueidis.IsRedisNil(err) {
			return fmt.Errorf("read live snapshot: %w", err)
		}
		got, err := core.ParseSnapshot(raw)
		if err != nil {
			return err
		}
		items = append(items, got...)
		at[i+1] = len(items)
	}
	ids := make([]store.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID // a cleared one (0) has no session
	}
	ls, err := s.LiveSessions(ctx, ids)
	if err != nil {
		return err
	}
	var clears []rueidis.Completed
	for i, key := range keys {
		var offs []string
		for k := at[i]; k < at[i+1]; k++ {
			if ls[k] != nil && ls[k].Anchor == j.Author {
				offs = append(offs, strconv.Itoa((k-at[i])*core.SnapshotRecordLen))
			}
		}
		if len(offs) > 0 {
			clears = append(clears, snapClear.Cmd(s.Redis.B(), []string{key}, offs))
		}
	}
	if err := store.FirstErr(s.DoMulti(ctx, clears...)); err != nil {
		return fmt.Errorf("clean up live snapshot: %w", err)
	}
	return nil
}

// CleanupBacklog is how many safety clean-up jobs are not yet done, over
// every shard.
func (s *Service) CleanupBacklog(ctx context.Context) (_ int64, err error) {
	defer store.Wrap(&err, "read safety clean-up backlog")
	return s.StreamsLen(ctx, s.Keys.Cleanup)
}
