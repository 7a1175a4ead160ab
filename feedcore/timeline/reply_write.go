package timeline

import (
	"context"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
)

// Replies. A reply is a post with a parent: its hash keeps the parent and
// the parent's author (r, ra), so who sees it (read_items.go) needs no
// read of the parent, and the parent's deletion leaves the reply as it
// is (its replyTo reads null). It is published, fanned out and deleted as
// any post; materializing it also files it in its parent's replies (in
// the parent's slot) with the comments counter, and deleting it takes it
// out, each in one script and once however often it runs: a deleted
// reply stays in the set at score -1, so a late materialization cannot
// file it again.

// replyable checks that replier may reply to the post parent and returns
// the parent's author: NOT_FOUND unless it is a live post (not of a
// suspended account: it is in no feed), FORBIDDEN when
// a block stands between replier and its author.
func (s *Service) replyable(ctx context.Context, replier, parent store.ID) (store.ID, error) {
	p, err := s.ReadUnblocked(ctx, replier, parent, true)
	if err != nil {
		return 0, err
	}
	if p == nil || p.Deleted || p.IsRepost() || p.Author == 0 || p.AuthorSuspended {
		return 0, apierr.Errorf(apierr.NotFound, "replyTo: no post with id %d", parent)
	}
	return p.Author, nil
}

// replyAdd files the reply ARGV[2] (a member), created at ARGV[1] ms, in
// its parent's replies KEYS[1] and counts it in the parent's counters
// KEYS[2], unless the set holds it already (live, or deleted at -1).
var replyAdd = store.NewScript(false, `
if redis.call('ZSCORE', KEYS[1], ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
redis.call('HINCRBY', KEYS[2], 'c', 1)
return 1
`)

// replyDrop marks the reply ARGV[1] deleted in its parent's replies
// KEYS[1] (score -1; filed deleted if it was not there yet), uncounting
// it from the parent's counters KEYS[2] if it was counted.
var replyDrop = store.NewScript(false, `
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if s and tonumber(s) >= 0 and redis.call('HINCRBY', KEYS[2], 'c', -1) < 0 then
  redis.call('HSET', KEYS[2], 'c', 0)
end
redis.call('ZADD', KEYS[1], -1, ARGV[1])
return 1
`)

// ReplyAddCmd files p, a reply, in its parent's replies.
func (s *Service) ReplyAddCmd(p *content.Post) rueidis.Completed {
	return replyAdd.Cmd(s.Redis.B(), []string{s.Keys.Replies(p.ReplyTo), s.Keys.PostCounts(p.ReplyTo)},
		[]string{store.ScoreArg(p.CreatedAt.UnixMilli()), store.Member(p.ID)})
}

// ReplyDropCmd takes p, a deleted reply, out of its parent's replies.
func (s *Service) ReplyDropCmd(p *content.Post) rueidis.Completed {
	return replyDrop.Cmd(s.Redis.B(), []string{s.Keys.Replies(p.ReplyTo), s.Keys.PostCounts(p.ReplyTo)}, []string{store.Member(p.ID)})
}

// fillParentAuthors sets ReplyToAuthor on the replies among ps that lack
// it, from their parents (import: a reply names its parent; the parent's
// author comes from the store). It returns how many of ps, from the
// first, could be filled, and NOT_FOUND naming the first whose parent is
// not in the store.
func (s *Service) fillParentAuthors(ctx context.Context, ps []*content.Post) (int, error) {
	inBatch := make(map[store.ID]store.ID, len(ps)) // a parent earlier in the batch
	var ask []store.ID
	for _, p := range ps {
		if a, ok := inBatch[p.ReplyTo]; ok && p.ReplyToAuthor == 0 {
			p.ReplyToAuthor = a
		}
		if p.ReplyTo != 0 && p.ReplyToAuthor == 0 {
			ask = append(ask, p.ReplyTo)
		}
		inBatch[p.ID] = p.Author
	}
	if len(ask) == 0 {
		return len(ps), nil
	}
	parents, err := s.Posts(ctx, ask)
	if err != nil {
		return 0, err
	}
	j := 0
	for i, p := range ps {
		if p.ReplyTo == 0 || p.ReplyToAuthor != 0 {
			continue
		}
		parent := parents[j]
		j++
		if parent == nil || parent.IsRepost() || parent.Author == 0 {
			return i, apierr.Errorf(apierr.NotFound, "post %d replies to %d, which is not a post in the store (give replyToAuthor for a parent deleted since)", p.ID, p.ReplyTo)
		}
		p.ReplyToAuthor = parent.Author
	}
	return len(ps), nil
}

// LuaLiveReposts: liveReposts(key) counts the live reposts ("+") in a
// post's set of reposts.
const LuaLiveReposts = `
local function liveReposts(key)
  local n = 0
  for _, v in ipairs(redis.call('HVALS', key)) do
    if string.sub(v, 1, 1) == '+' then n = n + 1 end
  end
  return n
end
`

// recountConversation sets the comments and reposts counters KEYS[1] of
// a post to their bases (cb, rb: what an import set beyond the records)
// plus its live replies KEYS[2] and live reposts KEYS[3]; a post with
// none of the three is left alone (a repost's record has no counters).
var recountConversation = store.NewScript(false, LuaLiveReposts+`
if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[3]) == 0 then return 0 end
local b = redis.call('HMGET', KEYS[1], 'cb', 'rb')
local c = (tonumber(b[1]) or 0) + redis.call('ZCOUNT', KEYS[2], 0, '+inf')
local r = (tonumber(b[2]) or 0) + liveReposts(KEYS[3])
if c < 0 then c = 0 end
if r < 0 then r = 0 end
redis.call('HSET', KEYS[1], 'c', c, 'r', r)
return 1
`)

// RecountCmd recounts post's comments and reposts (recountConversation).
func (s *Service) RecountCmd(post store.ID) rueidis.Completed {
	return recountConversation.Cmd(s.Redis.B(), []string{s.Keys.PostCounts(post), s.Keys.Replies(post), s.Keys.Reposts(post)}, nil)
}
