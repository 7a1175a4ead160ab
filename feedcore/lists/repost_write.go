package lists

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
)

// Reposts. A repost is an item of its own: a record (a post hash with o
// and oa: the original and its author, and no text) with its own id from
// the reposter's shard's clock and its own time, put in the reposter's
// outbox and own inbox and pushed to the reposter's followers by the same
// hybrid fan-out as a post (big-V reposters are merged on read).
//
// Commit: a repost is one event (evRepost) appended to the reposter's
// stream shard in one script with the reposter's repost record
// (keys.repostRecord), which makes it idempotent per reposter and
// original; undoing it is one script that deletes the record and appends
// an evUnrepost event. Everything else is derived from the events by
// idempotent writes, by the request and again by the dispatcher: the
// record's hash, the outbox and own inbox, the original's set of reposts
// (keys.reposts) with its reposts counter, and the fan-out.
//
// The original's set of reposts lives in the original's slot, and keeps
// a taken-back repost as "-" so a late write cannot bring it back. The
// script that adds a repost there sees the original's tombstone in the
// same step: a repost of a post deleted meanwhile is taken back at once.
// Deleting a post takes its reposts back through the workers
// (dropRepostsOf: one evUnrepost per live repost, in time proportional to
// the reposts); until they are done, reads hide a repost whose original
// is deleted (read_items.go).

// RepostResult is what a repost or its undoing left.
type RepostResult struct {
	Post     *content.Post // the original
	Reposted bool          // whether the viewer reposts it now
}

// Repost makes viewer repost post: once however often it is called. A
// missing or deleted post (or a repost's record), or one of a suspended
// account, is NOT_FOUND; a block
// between viewer and its author, either way, is FORBIDDEN.
func (s *Service) Repost(ctx context.Context, viewer, post store.ID) (_ *RepostResult, err error) {
	defer store.Wrap(&err, "user %d reposts post %d", viewer, post)
	p, err := s.repostable(ctx, viewer, post)
	if err != nil {
		return nil, err
	}
	if p.AuthorSuspended { // in no feed; taking a repost of it back is fine
		return nil, apierr.Errorf(apierr.NotFound, "no post with id %d", post)
	}
	rec, err := s.logRepost(ctx, viewer, p, s.NowMS(), 0)
	if err != nil {
		return nil, err
	}
	states, err := s.MaterializeReposts(ctx, []*content.Post{rec})
	if err != nil {
		return nil, fmt.Errorf("repost %d queued, a worker finishes it: %w", rec.ID, err)
	}
	switch states[0] {
	case repostOrigGone:
		return nil, apierr.Errorf(apierr.NotFound, "no post with id %d", post)
	case repostTaken: // taken back by a request that raced this one
		return &RepostResult{Post: p}, nil
	}
	return &RepostResult{Post: p, Reposted: true}, nil
}

// repostable reads the post viewer would repost or take a repost of back:
// NOT_FOUND unless it is a live post, FORBIDDEN across a block.
func (s *Service) repostable(ctx context.Context, viewer, post store.ID) (*content.Post, error) {
	if viewer == 0 {
		return nil, apierr.Errorf(apierr.Unauthenticated, "sign in to repost")
	}
	p, err := s.ReadUnblocked(ctx, viewer, post, false) // repostAdd sees a tombstone the cache missed
	if err != nil {
		return nil, err
	}
	if p == nil || p.Deleted || p.IsRepost() || p.Author == 0 {
		return nil, apierr.Errorf(apierr.NotFound, "no post with id %d", post)
	}
	return p, nil
}

// UndoRepost takes viewer's repost of post back, from every feed; nothing
// when there is none. A missing or deleted post is NOT_FOUND (the reposts
// of a deleted post go by themselves).
func (s *Service) UndoRepost(ctx context.Context, viewer, post store.ID) (_ *RepostResult, err error) {
	defer store.Wrap(&err, "user %d takes back the repost of post %d", viewer, post)
	p, err := s.repostable(ctx, viewer, post)
	if err != nil && store.CodeOf(err) != apierr.Forbidden { // a repost made before a block may be taken back
		return nil, err
	}
	if p == nil {
		if p, err = s.postOf(ctx, post); err != nil {
			return nil, err
		}
	}
	rec, err := s.logUnrepost(ctx, viewer, p, nil)
	if err != nil {
		return nil, err
	}
	if rec != nil {
		if err := s.UnindexReposts(ctx, []*content.Post{rec}); err != nil {
			return nil, fmt.Errorf("queued, a worker finishes it: %w", err)
		}
	}
	return &RepostResult{Post: p}, nil
}

// postOf reads post, NOT_FOUND unless it is a live post.
func (s *Service) postOf(ctx context.Context, post store.ID) (*content.Post, error) {
	ps, err := s.CachedPosts(ctx, []store.ID{post})
	if err != nil {
		return nil, err
	}
	if p := ps[0]; p != nil && !p.Deleted && !p.IsRepost() && p.Author != 0 {
		return p, nil
	}
	return nil, apierr.Errorf(apierr.NotFound, "no post with id %d", post)
}

// repostLog commits a repost: unless the reposter's record KEYS[3]
// exists (it replies {0, record}), it appends the evRepost event to the
// stream KEYS[1] (fields u ARGV[4], o ARGV[5], oa ARGV[6]) and stores
// the record, replying {1, record}. With ARGV[1] "alloc" the repost's id
// is taken from the shard's clock KEYS[2] at ARGV[2] ms (record "c ms
// count"); with "given" it is ARGV[3] at ARGV[2] (record "g id ms").
var repostLog = store.NewScript(false, core.LuaAlloc+`
local rec = redis.call('GET', KEYS[3])
if rec then return {0, rec} end
local fields = {'t', '`+core.EvRepost+`', 'u', ARGV[4], 'o', ARGV[5], 'oa', ARGV[6]}
if ARGV[1] == 'alloc' then
  local ms, n = alloc(KEYS[2], ARGV[2])
  rec = 'c ' .. ms .. ' ' .. n
  for _, v in ipairs({'s', ms, 'q', n}) do fields[#fields + 1] = v end
else
  rec = 'g ' .. ARGV[3] .. ' ' .. ARGV[2]
  for _, v in ipairs({'p', ARGV[3], 's', ARGV[2]}) do fields[#fields + 1] = v end
end
redis.call('XADD', KEYS[1], '*', unpack(fields))
redis.call('SET', KEYS[3], rec)
return {1, rec}
`)

// unrepostLog commits the undoing of a repost: it appends an evUnrepost
// event (fields u ARGV[2], o ARGV[3], and the repost's id) to the stream
// KEYS[1] and deletes the reposter's record KEYS[2]. With ARGV[1] "user"
// (the reposter takes it back) the record names the repost: none, and it
// replies {0}; else {1, record}. With "drop" (a worker takes back the
// repost ARGV[4] of a deleted post), the event names ARGV[4] and the
// record is deleted only if it names that repost (ARGV[5] or a record
// beginning with ARGV[6]); it replies {1}.
var unrepostLog = store.NewScript(false, `
local rec = redis.call('GET', KEYS[2])
local fields = {'t', '`+core.EvUnrepost+`', 'u', ARGV[2], 'o', ARGV[3]}
if ARGV[1] == 'user' then
  if not rec then return {0} end
  local kind, a, b = string.match(rec, '^(%a) (%d+) (%d+)$')
  if kind == 'c' then
    for _, v in ipairs({'s', a, 'q', b}) do fields[#fields + 1] = v end
  else
    for _, v in ipairs({'p', a, 's', b}) do fields[#fields + 1] = v end
  end
else
  for _, v in ipairs({'p', ARGV[4], 's', '0'}) do fields[#fields + 1] = v end
  if rec and (rec == ARGV[5] or string.sub(rec, 1, #ARGV[6]) == ARGV[6]) then rec = true else rec = false end
end
redis.call('XADD', KEYS[1], '*', unpack(fields))
if rec then redis.call('DEL', KEYS[2]) end
return {1, rec}
`)

// logRepost commits reposter's repost of p (at ms; with id 0 a new id
// from the shard's clock, else the given id, for import) and returns the
// repost's record: the one just made, or the one an earlier call made.
func (s *Service) logRepost(ctx context.Context, reposter store.ID, p *content.Post, ms int64, id store.ID) (*content.Post, error) {
	keys, args := s.repostLogArgs(reposter, p, ms, id)
	return s.repostLogged(reposter, p, s.Commit(ctx, repostLog, keys, args, repostLog.Cmd(s.Redis.B(), keys, args)))
}

// repostLogArgs are repostLog's keys and arguments for logRepost.
func (s *Service) repostLogArgs(reposter store.ID, p *content.Post, ms int64, id store.ID) (keys, args []string) {
	shard := s.ShardOf(reposter)
	keys = []string{s.Keys.Events(shard), s.Keys.Clock(shard), s.Keys.RepostRecord(shard, reposter, p.ID)}
	mode, given := "alloc", ""
	if id != 0 {
		mode, given = "given", store.FormatID(id)
	}
	return keys, []string{mode, store.ScoreArg(ms), given, store.FormatID(reposter), store.FormatID(p.ID), store.FormatID(p.Author)}
}

// repostLogged reads repostLog's reply r: the record of reposter's repost
// of p.
func (s *Service) repostLogged(reposter store.ID, p *content.Post, r rueidis.RedisResult) (*content.Post, error) {
	arr, err := r.ToArray()
	if err == nil && len(arr) != 2 {
		err = fmt.Errorf("reply of %d values", len(arr))
	}
	if err != nil {
		return nil, fmt.Errorf("queue the repost: %w", err)
	}
	rec, _ := arr[1].ToString()
	it, err := ParseRepostRecord(rec, s.ShardOf(reposter))
	if err != nil {
		return nil, fmt.Errorf("queue the repost: %w", err)
	}
	return RepostOf(reposter, p, it), nil
}

// RepostOf is the record of reposter's repost of p at it.
func RepostOf(reposter store.ID, p *content.Post, it store.Item) *content.Post {
	return &content.Post{ID: it.ID, Author: reposter, CreatedAt: time.UnixMilli(it.TS).UTC(), RepostOf: p.ID, RepostOfAuthor: p.Author}
}

// ParseRepostRecord reads a repost record (keys.repostRecord) of shard:
// the repost's id and time.
func ParseRepostRecord(rec string, shard int) (store.Item, error) {
	f := strings.Fields(rec)
	if len(f) != 3 {
		return store.Item{}, fmt.Errorf("unreadable repost record %q", rec)
	}
	a, err1 := core.ParseInt(f[1])
	b, err2 := core.ParseInt(f[2])
	switch {
	case err1 != nil || err2 != nil || a < 0 || b < 0:
	case f[0] == "c" && b < 1<<core.ClockBits:
		return store.Item{TS: a, ID: core.ComposeID(a, uint64(b), shard)}, nil
	case f[0] == "g":
		return store.Item{TS: b, ID: store.ID(a)}, nil
	}
	return store.Item{}, fmt.Errorf("unreadable repost record %q", rec)
}

// logUnrepost commits the undoing of reposter's repost of p. With rec nil
// (the reposter takes it back) it returns the record of the repost taken
// back, nil when there was none. With rec set (a worker takes back a
// repost of a deleted post) the event names rec, and the reposter's
// record is deleted if it names rec.
func (s *Service) logUnrepost(ctx context.Context, reposter store.ID, p *content.Post, rec *content.Post) (*content.Post, error) {
	shard := s.ShardOf(reposter)
	keys := []string{s.Keys.Events(shard), s.Keys.RepostRecord(shard, reposter, p.ID)}
	args := []string{"user", store.FormatID(reposter), store.FormatID(p.ID)}
	if rec != nil {
		args[0] = "drop"
		args = append(args, store.FormatID(rec.ID), clockRecord(rec.ID, shard), "g "+store.FormatID(rec.ID)+" ")
	}
	arr, err := s.Commit(ctx, unrepostLog, keys, args, unrepostLog.Cmd(s.Redis.B(), keys, args)).ToArray()
	if err != nil {
		return nil, fmt.Errorf("queue the undoing of the repost: %w", err)
	}
	if rec != nil || len(arr) < 2 {
		return nil, nil
	}
	str, _ := arr[1].ToString()
	it, err := ParseRepostRecord(str, shard)
	if err != nil {
		return nil, fmt.Errorf("queue the undoing of the repost: %w", err)
	}
	return RepostOf(reposter, p, it), nil
}

// clockRecord is the record spelling ("c ms count") of an id shard's
// clock handed out, "" when shard's clock cannot have made id.
func clockRecord(id store.ID, shard int) string {
	if int(id&(core.MaxShards-1)) != shard {
		return ""
	}
	return "c " + store.FormatID(id>>16) + " " + store.FormatID(id>>core.ShardBits&(1<<core.ClockBits-1))
}

// repostAdd records the repost ARGV[2] (a member) of the reposter ARGV[1]
// (a member) in the original's set of reposts KEYS[1], moving the reposts
// counter in KEYS[2] when the reposter's state changes. A repost already
// recorded, or older than the one recorded (taken back since), changes
// nothing: it replies 1 if that leaves the repost live, else 0. When the
// original KEYS[3] is missing or deleted the repost is recorded as taken
// back and it replies -1: its reposter must take it back from the feeds.
var repostAdd = store.NewScript(false, core.LuaLess+`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
local live = cur and string.sub(cur, 1, 1) == '+'
if cur then
  local id = string.sub(cur, 2)
  if id == ARGV[2] or lt(ARGV[2], id) then
    if live and id == ARGV[2] then return 1 end
    return 0
  end
end
local o = redis.call('HMGET', KEYS[3], 'a', 'd')
if not o[1] or o[2] == '1' then
  redis.call('HSET', KEYS[1], ARGV[1], '-' .. ARGV[2])
  if live and redis.call('HINCRBY', KEYS[2], 'r', -1) < 0 then redis.call('HSET', KEYS[2], 'r', 0) end
  return -1
end
redis.call('HSET', KEYS[1], ARGV[1], '+' .. ARGV[2])
if not live then redis.call('HINCRBY', KEYS[2], 'r', 1) end
return 1
`)

// RepostDrop records the repost ARGV[2] of the reposter ARGV[1] as taken
// back in the original's set of reposts KEYS[1] (even before repostAdd
// recorded it, so a late one cannot bring it back), moving the reposts
// counter in KEYS[2] if it was live. A newer repost recorded is left
// alone (0); else 1.
var RepostDrop = store.NewScript(false, core.LuaLess+`
local cur = redis.call('HGET', KEYS[1], ARGV[1])
if cur then
  if lt(ARGV[2], string.sub(cur, 2)) then return 0 end
  if string.sub(cur, 1, 1) == '+' and redis.call('HINCRBY', KEYS[2], 'r', -1) < 0 then
    redis.call('HSET', KEYS[2], 'r', 0)
  end
end
redis.call('HSET', KEYS[1], ARGV[1], '-' .. ARGV[2])
return 1
`)

// repostState is what materializing a repost found.
type repostState uint8

const (
	RepostLive     repostState = iota // recorded and live: deliver it
	repostTaken                       // taken back meanwhile: its undoing's event cleans up
	repostOrigGone                    // its original is deleted: taken back here
)

// MaterializeReposts makes logged reposts visible: each record's hash
// (created once), the reposter's outbox and own inbox, and the
// original's set of reposts. Idempotent; the request and the dispatcher
// both run it. It says, per record, whether the repost is live; one
// whose original was deleted meanwhile it takes back (an evUnrepost
// cleans its reposter's followers' feeds), and one taken back before (its
// hash a tombstone) it takes out of its reposter's timelines again, as a
// late publish of a deleted post is.
func (s *Service) MaterializeReposts(ctx context.Context, recs []*content.Post) ([]repostState, error) {
	cmds := make([]rueidis.Completed, 0, 5*len(recs))
	at := make([]int, len(recs)) // where each record's writes start
	for i, r := range recs {
		it := store.Item{TS: r.CreatedAt.UnixMilli(), ID: r.ID}
		at[i] = len(cmds)
		cmds = append(cmds, timeline.PostCreate.Cmd(s.Redis.B(), []string{s.Keys.Post(r.ID)}, timeline.PostHash(r)),
			repostAdd.Cmd(s.Redis.B(), []string{s.Keys.Reposts(r.RepostOf), s.Keys.PostCounts(r.RepostOf), s.Keys.Post(r.RepostOf)},
				[]string{store.Member(r.Author), store.Member(r.ID)}),
			s.Redis.B().Zadd().Key(s.Keys.Outbox(r.Author)).ScoreMember().ScoreMember(float64(it.TS), store.Member(it.ID)).Build())
		cmds = s.AppendPush(cmds, s.PostsTL(), r.Author, it, true)
	}
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs); err != nil {
		return nil, err
	}
	states := make([]repostState, len(recs))
	var undo []*content.Post
	for i, r := range recs {
		created, _ := rs[at[i]].ToString()
		added, _ := rs[at[i]+1].AsInt64()
		switch {
		case added < 0:
			states[i] = repostOrigGone
			if err := s.dropRepost(ctx, r); err != nil {
				return nil, err
			}
		case created == "deleted" || added == 0:
			states[i] = repostTaken
			undo = append(undo, r)
		}
	}
	return states, s.UnindexPosts(ctx, undo)
}

// dropRepost takes back a repost whose original is deleted: an
// evUnrepost on its reposter's shard (deleting the reposter's record if
// it names this repost), applied here and by the dispatcher.
func (s *Service) dropRepost(ctx context.Context, r *content.Post) error {
	orig := &content.Post{ID: r.RepostOf, Author: r.RepostOfAuthor}
	if _, err := s.logUnrepost(ctx, r.Author, orig, r); err != nil {
		return err
	}
	return s.UnindexReposts(ctx, []*content.Post{r})
}

// UnindexReposts applies the undoing of reposts: each record tombstoned
// (reads skip it at once, wherever it is still indexed), out of its
// reposter's outbox and own inbox, and taken back in its original's set
// of reposts. Idempotent; the request and the dispatcher both run it.
func (s *Service) UnindexReposts(ctx context.Context, recs []*content.Post) error {
	cmds := s.UnindexCmds(recs)
	for _, r := range recs {
		cmds = append(cmds, s.Redis.B().Hset().Key(s.Keys.Post(r.ID)).FieldValue().FieldValue("d", "1").Build(),
			RepostDrop.Cmd(s.Redis.B(), []string{s.Keys.Reposts(r.RepostOf), s.Keys.PostCounts(r.RepostOf)},
				[]string{store.Member(r.Author), store.Member(r.ID)}))
	}
	return store.FirstErr(s.DoMulti(ctx, cmds...))
}

// DropRepostsOf takes back every live repost of the deleted post p: one
// evUnrepost on each reposter's shard, then its entry in p's set of
// reposts marked taken back, a chunk at a time, so a run that dies
// resumes past what it did. Work proportional to p's reposts.
func (s *Service) DropRepostsOf(ctx context.Context, p *content.Post) error {
	key := s.Keys.Reposts(p.ID)
	var cursor uint64
	for {
		e, err := s.Do(ctx, s.Redis.B().Hscan().Key(key).Cursor(cursor).Count(AccountChunk).Build()).AsScanEntry()
		if err != nil {
			return fmt.Errorf("read reposts of post %d: %w", p.ID, err)
		}
		var recs []*content.Post
		for i := 0; i+1 < len(e.Elements); i += 2 {
			reposter, err1 := store.MemberID(e.Elements[i])
			v := e.Elements[i+1]
			if err1 != nil || len(v) != 9 || v[0] != '+' {
				continue
			}
			id, _ := store.MemberID(v[1:])
			recs = append(recs, &content.Post{ID: id, Author: reposter, RepostOf: p.ID, RepostOfAuthor: p.Author})
		}
		if err := s.logUnreposts(ctx, p, recs); err != nil {
			return err
		}
		if e.Cursor == 0 {
			return nil
		}
		cursor = e.Cursor
	}
}

// logUnreposts commits the undoing of the reposts recs of the deleted
// post p, pipelined, then marks them taken back in p's set of reposts.
func (s *Service) logUnreposts(ctx context.Context, p *content.Post, recs []*content.Post) error {
	if len(recs) == 0 {
		return nil
	}
	cmds := make([]rueidis.Completed, 0, 2*len(recs))
	for _, r := range recs {
		shard := s.ShardOf(r.Author)
		keys := []string{s.Keys.Events(shard), s.Keys.RepostRecord(shard, r.Author, p.ID)}
		args := []string{"drop", store.FormatID(r.Author), store.FormatID(p.ID), store.FormatID(r.ID), clockRecord(r.ID, shard), "g " + store.FormatID(r.ID) + " "}
		cmds = append(cmds, unrepostLog.Cmd(s.Redis.B(), keys, args))
	}
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return fmt.Errorf("queue the undoing of reposts of post %d: %w", p.ID, err)
	}
	cmds = cmds[:0]
	for _, r := range recs {
		cmds = append(cmds, RepostDrop.Cmd(s.Redis.B(), []string{s.Keys.Reposts(p.ID), s.Keys.PostCounts(p.ID)},
			[]string{store.Member(r.Author), store.Member(r.ID)}))
	}
	return store.FirstErr(s.DoMulti(ctx, cmds...))
}

// Reposted reports, for each post, whether viewer reposts it, in one
// round trip.
func (s *Service) Reposted(ctx context.Context, viewer store.ID, posts []store.ID) (_ []bool, err error) {
	defer store.Wrap(&err, "read reposts of user %d", viewer)
	vm := store.Member(viewer)
	return store.ParseEach(s.DoMulti(ctx, store.CmdsFor(posts, func(id store.ID) rueidis.Completed { return s.repostedCmd(vm, id) })...), isLiveRepost)
}

// repostedCmd asks whether the viewer whose member is vm reposts post.
func (s *Service) repostedCmd(vm string, post store.ID) rueidis.Completed {
	return s.Redis.B().Hget().Key(s.Keys.Reposts(post)).Field(vm).Build()
}

// isLiveRepost reads a repostedCmd reply.
func isLiveRepost(r rueidis.RedisResult) (bool, error) {
	v, err := r.ToString()
	if rueidis.IsRedisNil(err) {
		return false, nil
	}
	return err == nil && strings.HasPrefix(v, "+"), err
}

// PutReposts records reposts (import): each record's Author reposted
// RepostOf at CreatedAt, under the id ID, through the same commit and
// materialization as Repost (RepostOfAuthor is read from the original).
// It stops at the first that cannot be applied (a bad id, a missing user
// or post, a second repost of one post by one user under another id)
// and returns how many were applied before it. Applying one again
// changes nothing.
func (s *Service) PutReposts(ctx context.Context, recs []*content.Post) (_ int, err error) {
	defer store.Wrap(&err, "store reposts")
	var stop error
	for i, r := range recs {
		if r.ID == 0 || r.Author == 0 || r.RepostOf == 0 {
			recs, stop = recs[:i], apierr.Errorf(apierr.BadInput, "repost id, user and post must be positive numbers")
			break
		}
	}
	users := store.CmdsFor(recs, func(r *content.Post) store.ID { return r.Author })
	if n, err := s.Existing(ctx, users); err != nil {
		return 0, err
	} else if n < len(recs) {
		recs, stop = recs[:n], apierr.Errorf(apierr.NotFound, "no user with id %d", users[n])
	}
	origs, err := s.Posts(ctx, store.CmdsFor(recs, func(r *content.Post) store.ID { return r.RepostOf }))
	if err != nil {
		return 0, err
	}
	for i, o := range origs {
		if o == nil || o.Deleted || o.IsRepost() || o.Author == 0 {
			recs, stop = recs[:i], apierr.Errorf(apierr.NotFound, "repost %d: no post with id %d", recs[i].ID, recs[i].RepostOf)
			break
		}
		recs[i].RepostOfAuthor = o.Author
	}
	// A user's second repost of a post under another id is refused before
	// anything of the batch is logged.
	recorded := s.DoMulti(ctx, store.CmdsFor(recs, func(r *content.Post) rueidis.Completed {
		shard := s.ShardOf(r.Author)
		return s.Redis.B().Get().Key(s.Keys.RepostRecord(shard, r.Author, r.RepostOf)).Build()
	})...)
	for i, r := range recs {
		rec, err := recorded[i].ToString()
		if rueidis.IsRedisNil(err) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if it, err := ParseRepostRecord(rec, s.ShardOf(r.Author)); err != nil || it.ID != r.ID {
			recs, stop = recs[:i], apierr.Errorf(apierr.BadInput, "repost %d: user %d reposts post %d already, as another repost", r.ID, r.Author, r.RepostOf)
			break
		}
	}
	rs := s.DoMulti(ctx, store.CmdsFor(recs, func(r *content.Post) rueidis.Completed {
		keys, args := s.repostLogArgs(r.Author, &content.Post{ID: r.RepostOf, Author: r.RepostOfAuthor}, r.CreatedAt.UnixMilli(), r.ID)
		return repostLog.Cmd(s.Redis.B(), keys, args)
	})...)
	for i, r := range recs {
		if _, err := s.repostLogged(r.Author, origs[i], rs[i]); err != nil {
			return 0, err
		}
	}
	if _, err := s.MaterializeReposts(ctx, recs); err != nil {
		return 0, fmt.Errorf("reposts queued, workers finish them: %w", err)
	}
	return len(recs), stop
}

// AccountChunk is how many followers, followees, posts or liked posts one
// step of the job handles in one pipeline.
const AccountChunk = 500
