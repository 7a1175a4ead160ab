package lists

import (
	"context"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
)

// counterFields are the fields of a counters hash, in PostCounts order.
var counterFields = []string{"l", "c", "r", "f"}

// MaxCount is the largest value of a counter (likes, comments, reposts,
// favorites, followers): GraphQL's Int is 32-bit.
const MaxCount = 1<<31 - 1

// likeScript adds (ARGV[2] "1") or removes ("-1") the like of ARGV[1] on
// the post KEYS[1]: the likers set KEYS[2] makes it idempotent, and the
// likes counter in KEYS[3] moves only when the set did, in the same atomic
// step, so the counter cannot drift from what likers did. A new like on a
// post whose counter is at ARGV[3] (MaxCount) changes nothing and replies
// {'full'}: the liker is not recorded without the counter. A missing or
// deleted post (or a repost's record) replies an empty array, and so does
// a new like of a suspended author's post when ARGV[4] is "1" (a request:
// the post is in no feed; an import replays its likes). Otherwise
// it replies the post's author, time, text, media and content warning,
// its four counters (empty when never set), and the post it replies to
// and that post's author (empty when none).
var likeScript = store.NewScript(false, `
local p = redis.call('HMGET', KEYS[1], 'a', 't', 'x', 'd', 'm', 'cw', 'o', 'r', 'ra', 'sx')
if not p[1] or p[4] == '1' or p[7] then return {} end
if p[10] and ARGV[2] == '1' and ARGV[4] == '1' then return {} end
if ARGV[2] == '1' then
  if redis.call('SISMEMBER', KEYS[2], ARGV[1]) == 0 then
    if (tonumber(redis.call('HGET', KEYS[3], 'l')) or 0) >= tonumber(ARGV[3]) then return {'full'} end
    redis.call('SADD', KEYS[2], ARGV[1])
    redis.call('HINCRBY', KEYS[3], 'l', 1)
  end
elseif redis.call('SREM', KEYS[2], ARGV[1]) == 1 and redis.call('HINCRBY', KEYS[3], 'l', -1) < 0 then
  redis.call('HSET', KEYS[3], 'l', 0)
end
local c = redis.call('HMGET', KEYS[3], 'l', 'c', 'r', 'f')
return {p[1], p[2], p[3], p[5] or '', p[6] or '', c[1] or '', c[2] or '', c[3] or '', c[4] or '', p[8] or '', p[9] or ''}
`)

// setCountsScript sets the counters KEYS[2] of the existing post KEYS[1]
// (0 when there is no such post), and the bases of likes, favorites,
// comments and reposts: what the records (likers KEYS[3], favoriters
// KEYS[4], replies KEYS[5], reposts KEYS[6]) do not explain, so that
// Rebuild recomputes each as its base plus its records (rebuildCounters,
// recountConversation). A base may be negative: a counter set below the
// records it already has.
var setCountsScript = store.NewScript(false, timeline.LuaLiveReposts+`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[2], 'l', ARGV[1], 'c', ARGV[2], 'r', ARGV[3], 'f', ARGV[4],
  'lb', tonumber(ARGV[1]) - redis.call('SCARD', KEYS[3]), 'fb', tonumber(ARGV[4]) - redis.call('SCARD', KEYS[4]),
  'cb', tonumber(ARGV[2]) - redis.call('ZCOUNT', KEYS[5], 0, '+inf'), 'rb', tonumber(ARGV[3]) - liveReposts(KEYS[6]))
return 1
`)

// Like records that viewer likes post, once however often it is called,
// and returns the post with its counters. A missing or deleted post, or
// one of a suspended account, is NOT_FOUND.
func (s *Service) Like(ctx context.Context, viewer, post store.ID) (_ *content.Post, _ core.PostCounts, err error) {
	defer store.Wrap(&err, "user %d likes post %d", viewer, post)
	return s.like(ctx, viewer, post, "1")
}

// Unlike takes viewer's like of post back, if any, and returns the post
// with its counters. A missing or deleted post is NOT_FOUND.
func (s *Service) Unlike(ctx context.Context, viewer, post store.ID) (_ *content.Post, _ core.PostCounts, err error) {
	defer store.Wrap(&err, "user %d unlikes post %d", viewer, post)
	return s.like(ctx, viewer, post, "-1")
}

func (s *Service) like(ctx context.Context, viewer, post store.ID, delta string) (*content.Post, core.PostCounts, error) {
	if viewer == 0 {
		return nil, core.PostCounts{}, apierr.Errorf(apierr.Unauthenticated, "sign in to like posts")
	}
	if delta == "1" {
		if err := s.LikeAcrossBlock(ctx, viewer, post); err != nil {
			return nil, core.PostCounts{}, err
		}
	}
	keys, args := s.likeKeysArgs(viewer, post, delta, true)
	vs, err := likeReply(s.Commit(ctx, likeScript, keys, args, likeScript.Cmd(s.Redis.B(), keys, args)), post)
	if err != nil {
		return nil, core.PostCounts{}, err
	}
	return likedPost(post, vs)
}

// likedPost reads a likeReply (the like and favorite scripts reply
// alike): the post and its counters.
func likedPost(post store.ID, vs []rueidis.RedisMessage) (*content.Post, core.PostCounts, error) {
	str := func(i int) string { s, _ := vs[i].ToString(); return s }
	p, err := timeline.PostFromFields(post, timeline.PostFields{str(0), str(1), str(2), "", str(3), str(4), "", str(9), str(10)})
	if err != nil {
		return nil, core.PostCounts{}, err
	}
	return p, countsOf(str(5), str(6), str(7), str(8)), nil
}

// likeKeysArgs are the like script's keys and arguments for viewer's like
// (delta "1") or unlike ("-1") of post, in a request (live) or an import.
func (s *Service) likeKeysArgs(viewer, post store.ID, delta string, live bool) (keys, args []string) {
	flag := "0"
	if live {
		flag = "1"
	}
	return []string{s.Keys.Post(post), s.Keys.Likers(post), s.Keys.PostCounts(post)},
		[]string{store.Member(viewer), delta, strconv.Itoa(MaxCount), flag}
}

// likeReply is the like script's reply for post: the post's author, time,
// text, media and content warning, four counters and parent, or why the
// script refused.
func likeReply(r rueidis.RedisResult, post store.ID) ([]rueidis.RedisMessage, error) {
	vs, err := r.ToArray()
	if err != nil {
		return nil, err
	}
	switch len(vs) {
	case 11:
		return vs, nil
	case 0:
		return nil, apierr.Errorf(apierr.NotFound, "no post with id %d", post)
	case 1:
		return nil, apierr.Errorf(apierr.BadInput, "post %d has the most likes its counter can hold (%d); the like was not recorded", post, MaxCount)
	default:
		return nil, apierr.Errorf(apierr.Internal, "like script replied %d values", len(vs))
	}
}

// PostLike is one user's like of one post.
type PostLike struct{ User, Post store.ID }

// LikeMany records likes (import), each as Like does, pipelined in one
// round trip. It returns how many were applied before the first one
// refused (a missing or deleted post, a full counter), with the refusal;
// likes after that one may have been applied too, which is harmless: a
// like is idempotent.
func (s *Service) LikeMany(ctx context.Context, likes []PostLike) (_ int, err error) {
	defer store.Wrap(&err, "record likes")
	cmds := make([]rueidis.Completed, len(likes))
	for i, l := range likes {
		if l.User == 0 || l.Post == 0 {
			return 0, apierr.Errorf(apierr.BadInput, "like user and post must be positive numbers")
		}
		keys, args := s.likeKeysArgs(l.User, l.Post, "1", false)
		cmds[i] = likeScript.Cmd(s.Redis.B(), keys, args)
	}
	for i, r := range s.DoMulti(ctx, cmds...) {
		if _, err := likeReply(r, likes[i].Post); err != nil {
			return i, err
		}
	}
	return len(likes), nil
}

// SetCounts sets a post's counters (import). Each is set as given: a
// base that live activity adds to. Likers, favoriters, replies and
// reposts recorded so far stay, later ones (and their undoing) move the
// counters from the values set, and Rebuild recomputes each counter as
// its base plus the records. A missing post is NOT_FOUND.
func (s *Service) SetCounts(ctx context.Context, post store.ID, c core.PostCounts) (err error) {
	defer store.Wrap(&err, "set counters of post %d", post)
	for _, n := range []int{c.Likes, c.Comments, c.Reposts, c.Favorites} {
		if n < 0 || n > MaxCount {
			return apierr.Errorf(apierr.BadInput, "counts must be between 0 and %d", MaxCount)
		}
	}
	n, err := s.Do(ctx, setCountsScript.Cmd(s.Redis.B(), []string{s.Keys.Post(post), s.Keys.PostCounts(post), s.Keys.Likers(post), s.Keys.Favoriters(post),
		s.Keys.Replies(post), s.Keys.Reposts(post)},
		[]string{strconv.Itoa(c.Likes), strconv.Itoa(c.Comments), strconv.Itoa(c.Reposts), strconv.Itoa(c.Favorites)})).AsInt64()
	if err != nil {
		return err
	}
	if n == 0 {
		return apierr.Errorf(apierr.NotFound, "no post with id %d", post)
	}
	return nil
}

// PostCounts returns the counters of posts in order (zero for a post that
// has none), in one round trip. Counters are never cached.
func (s *Service) PostCounts(ctx context.Context, ids []store.ID) (_ []core.PostCounts, err error) {
	defer store.Wrap(&err, "read counters")
	return ParseCounts(s.DoMulti(ctx, store.CmdsFor(ids, s.PostCountsCmd)...))
}

// Liked reports, for each post, whether viewer likes it, in one round trip.
func (s *Service) Liked(ctx context.Context, viewer store.ID, posts []store.ID) (_ []bool, err error) {
	defer store.Wrap(&err, "read likes of user %d", viewer)
	vm := store.Member(viewer)
	liked := func(id store.ID) rueidis.Completed { return s.likedCmd(vm, id) }
	return parseFlags(s.DoMulti(ctx, store.CmdsFor(posts, liked)...))
}

func (s *Service) PostCountsCmd(post store.ID) rueidis.Completed {
	return s.Redis.B().Hmget().Key(s.Keys.PostCounts(post)).Field(counterFields...).Build()
}

// likedCmd asks whether the viewer whose member (see member) is vm likes post.
func (s *Service) likedCmd(vm string, post store.ID) rueidis.Completed {
	return s.Redis.B().Sismember().Key(s.Keys.Likers(post)).Member(vm).Build()
}

// ParseCounts reads the replies of postCountsCmd.
func ParseCounts(rs []rueidis.RedisResult) ([]core.PostCounts, error) {
	return store.ParseEach(rs, func(r rueidis.RedisResult) (core.PostCounts, error) {
		var f [4]string // "": never set, 0
		_, err := timeline.HashFields(r, f[:])
		return countsOf(f[0], f[1], f[2], f[3]), err
	})
}

func countsOf(l, c, r, f string) core.PostCounts {
	n := func(s string) int {
		if s == "" {
			return 0
		}
		v, _ := strconv.Atoi(s)
		return min(max(v, 0), MaxCount) // GraphQL Int, whatever an old import stored
	}
	return core.PostCounts{Likes: n(l), Comments: n(c), Reposts: n(r), Favorites: n(f)}
}

func parseFlags(rs []rueidis.RedisResult) ([]bool, error) {
	return store.ParseEach(rs, rueidis.RedisResult.AsBool)
}
