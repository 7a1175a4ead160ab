package lists

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/keyword"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
)

// Favorites (收藏): a viewer's private bookmarks, and a public counter.
//
// The record is the viewer's own list, keys.favorites (favorited ms,
// post), in the viewer's slot: Query.favorites pages it and
// viewerHasFavorited reads it. Who favorited a post (keys.favoriters)
// and the post's favorites counter (field f of keys.postCounts) live in
// the post's slot, settled from the records through the journal (kind
// jFav), as follows are: journal, change the record (favoriteCommit,
// which also refuses a favorite across a block, atomically in the
// viewer's slot), settle the post's side (favoriteApply: the set makes it
// idempotent, and the counter moves only when the set did), re-read the
// record, drop the entry. So a favorite is all-or-nothing and idempotent
// through failovers, and favoriting again changes nothing.
//
// A deleted post leaves the list: reads skip it (filling the page past
// it within the read bound) and take it out of the viewer's record.

// JFav journals favorites: field p, user:post pairs (encodeEdges: the
// user as Follower, the post as Followee).
const JFav = "fav"

// FavoriteCommit changes the record of one favorite: KEYS the user's
// favorites, blocks and blocked-by mirror; ARGV the post's member, its
// author's ("": no block check, an import), "1" favorite or "0" not, now
// ms. Favoriting replies -2 across a block, 0 when already there (its
// time kept), 1 when added; unfavoriting 1 when removed, else 0.
var FavoriteCommit = store.NewScript(false, `
local m = ARGV[1]
if ARGV[3] == '0' then return redis.call('ZREM', KEYS[1], m) end
if ARGV[2] ~= '' and (redis.call('ZSCORE', KEYS[2], ARGV[2]) or redis.call('ZSCORE', KEYS[3], ARGV[2])) then return -2 end
if redis.call('ZSCORE', KEYS[1], m) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], m)
return 1
`)

// favoriteApply brings the post's side of one favorite in line with its
// record: KEYS the post, its favoriters and counters; ARGV the user's
// member and "1" if the record holds the favorite, else "0". The
// favoriters set makes it idempotent: the counter moves only when the set
// did. A missing or deleted post gains no favoriter and replies an empty
// array; otherwise it replies as the like script does (likeReply).
var favoriteApply = store.NewScript(false, `
local p = redis.call('HMGET', KEYS[1], 'a', 't', 'x', 'd', 'm', 'cw', 'r', 'ra')
local gone = not p[1] or p[4] == '1'
if ARGV[2] == '1' then
  if not gone and redis.call('SADD', KEYS[2], ARGV[1]) == 1 then redis.call('HINCRBY', KEYS[3], 'f', 1) end
elseif redis.call('SREM', KEYS[2], ARGV[1]) == 1 and redis.call('HINCRBY', KEYS[3], 'f', -1) < 0 then
  redis.call('HSET', KEYS[3], 'f', 0)
end
if gone then return {} end
local c = redis.call('HMGET', KEYS[3], 'l', 'c', 'r', 'f')
return {p[1], p[2], p[3], p[5] or '', p[6] or '', c[1] or '', c[2] or '', c[3] or '', c[4] or '', p[7] or '', p[8] or ''}
`)

// FavoritePost records that viewer favorites post, once however often it
// is called (the first time is kept), and returns the post with its
// counters. A missing or deleted post, or one of a suspended account, is
// NOT_FOUND; a post whose author
// and the viewer are separated by a block, either way, is FORBIDDEN.
func (s *Service) FavoritePost(ctx context.Context, viewer, post store.ID) (_ *content.Post, _ core.PostCounts, err error) {
	defer store.Wrap(&err, "user %d favorites post %d", viewer, post)
	return s.favorite(ctx, viewer, post, true)
}

// UnfavoritePost takes viewer's favorite of post back, if any, and
// returns the post with its counters. A missing or deleted post is
// NOT_FOUND.
func (s *Service) UnfavoritePost(ctx context.Context, viewer, post store.ID) (_ *content.Post, _ core.PostCounts, err error) {
	defer store.Wrap(&err, "user %d unfavorites post %d", viewer, post)
	return s.favorite(ctx, viewer, post, false)
}

func (s *Service) favorite(ctx context.Context, viewer, post store.ID, on bool) (*content.Post, core.PostCounts, error) {
	if viewer == 0 {
		return nil, core.PostCounts{}, apierr.Errorf(apierr.Unauthenticated, "sign in to favorite posts")
	}
	ps, err := s.CachedPosts(ctx, []store.ID{post})
	if err != nil {
		return nil, core.PostCounts{}, err
	}
	// A repost's record is no post, and a suspended account's post is in
	// no feed (taking a favorite of it back is fine).
	if p := ps[0]; p == nil || p.Deleted || p.Author == 0 || p.IsRepost() || on && p.AuthorSuspended {
		return nil, core.PostCounts{}, apierr.Errorf(apierr.NotFound, "no post with id %d", post)
	}
	pair := []core.Edge{{Follower: viewer, Followee: post}}
	shard := s.ShardOf(viewer)
	jid, err := s.Begin(ctx, shard, "k", JFav, "p", core.EncodeEdges(pair))
	if err != nil {
		return nil, core.PostCounts{}, err
	}
	author := ""
	if on {
		author = store.Member(ps[0].Author)
	}
	keys, args := s.FavoriteCommitArgs(viewer, post, author, on, s.NowMS())
	n, err := s.Commit(ctx, FavoriteCommit, keys, args, FavoriteCommit.Cmd(s.Redis.B(), keys, args)).AsInt64()
	if err != nil {
		return nil, core.PostCounts{}, fmt.Errorf("record the favorite: %w", err)
	}
	if n == -2 {
		s.End(ctx, shard, jid) // refused: nothing changed
		return nil, core.PostCounts{}, timeline.ErrBlocked()
	}
	rs, err := s.settleFavorites(ctx, pair, []bool{on})
	if err != nil {
		return nil, core.PostCounts{}, fmt.Errorf("recorded, a worker finishes it: %w", err)
	}
	s.End(ctx, shard, jid)
	vs, err := likeReply(rs[0], post)
	if err != nil {
		return nil, core.PostCounts{}, err
	}
	return likedPost(post, vs)
}

// FavoriteCommitArgs are favoriteCommit's keys and arguments.
func (s *Service) FavoriteCommitArgs(user, post store.ID, author string, on bool, ms int64) (keys, args []string) {
	flag := "0"
	if on {
		flag = "1"
	}
	return []string{s.Keys.Favorites(user), s.Keys.Blocks(user), s.Keys.BlockedBy(user)},
		[]string{store.Member(post), author, flag, store.ScoreArg(ms)}
}

// settleFavorites brings the post side of each pair (Follower: the user,
// Followee: the post) in line with the user's record, re-reading the
// records until they stop changing, as settleEdges does. known, when not
// nil, is what the records held just now (the commit's), so the first
// read is spared. It returns favoriteApply's last replies.
func (s *Service) settleFavorites(ctx context.Context, pairs []core.Edge, known []bool) ([]rueidis.RedisResult, error) {
	var applied []bool
	var last []rueidis.RedisResult
	truth := known
	for range core.MaxSettleRounds {
		if truth == nil {
			var err error
			if truth, err = s.favorited(ctx, pairs); err != nil {
				return nil, err
			}
		}
		if applied != nil && slices.Equal(truth, applied) {
			return last, nil
		}
		cmds := make([]rueidis.Completed, len(pairs))
		for i, p := range pairs {
			flag := "0"
			if truth[i] {
				flag = "1"
			}
			cmds[i] = favoriteApply.Cmd(s.Redis.B(), []string{s.Keys.Post(p.Followee), s.Keys.Favoriters(p.Followee), s.Keys.PostCounts(p.Followee)},
				[]string{store.Member(p.Follower), flag})
		}
		last = s.DoMulti(ctx, cmds...)
		if err := store.FirstErr(last); err != nil {
			return nil, fmt.Errorf("settle favorites: %w", err)
		}
		applied, truth = truth, nil
	}
	return nil, fmt.Errorf("settle favorites: the records kept changing; the journal repair finishes it")
}

// favorited reports, for each pair, whether its user's record holds its
// post now.
func (s *Service) favorited(ctx context.Context, pairs []core.Edge) ([]bool, error) {
	holds := func(p core.Edge) rueidis.Completed {
		return s.Redis.B().Zscore().Key(s.Keys.Favorites(p.Follower)).Member(store.Member(p.Followee)).Build()
	}
	out, err := store.ParseEach(s.DoMulti(ctx, store.CmdsFor(pairs, holds)...), store.IsMember)
	if err != nil {
		return nil, fmt.Errorf("read favorites: %w", err)
	}
	return out, nil
}

// Favorited reports, for each post, whether viewer has favorited it, in
// one round trip (one read of the viewer's record); all false for viewer 0.
func (s *Service) Favorited(ctx context.Context, viewer store.ID, posts []store.ID) (_ []bool, err error) {
	defer store.Wrap(&err, "read favorites of user %d", viewer)
	if viewer == 0 || len(posts) == 0 {
		return make([]bool, len(posts)), nil
	}
	return parseFavorited(s.Do(ctx, s.favoritedCmd(viewer, posts)), len(posts))
}

// favoritedCmd reads whether viewer has favorited each of posts (not
// empty); parseFavorited reads its reply.
func (s *Service) favoritedCmd(viewer store.ID, posts []store.ID) rueidis.Completed {
	return s.Redis.B().Zmscore().Key(s.Keys.Favorites(viewer)).Member(store.Members(posts)...).Build()
}

func parseFavorited(r rueidis.RedisResult, n int) ([]bool, error) {
	scores, err := r.ToArray()
	if err != nil {
		return nil, err
	}
	if len(scores) != n {
		return nil, fmt.Errorf("favorites: %d scores, want %d", len(scores), n)
	}
	out := make([]bool, n)
	for i, sc := range scores {
		out[i] = !sc.IsNil()
	}
	return out, nil
}

// Favorites pages viewer's favorites, most recently favorited first (ties
// by post id, highest first): first per page (DefaultPageSize when 0),
// after a cursor of this list. Deleted posts, posts of suspended authors
// (back when unsuspended), posts by users hidden from the viewer (a
// block either way, the viewer's mute in force, the author hiding its
// posts from it) and posts a keyword filter of the viewer's matches (not
// its own) are left out, the page filled past them.
func (s *Service) Favorites(ctx context.Context, viewer store.ID, first int, after string) (_ *core.FeedPage, err error) {
	defer store.Wrap(&err, "list the favorites of user %d", viewer)
	if viewer == 0 {
		return nil, apierr.Errorf(apierr.Unauthenticated, "sign in to list your favorites")
	}
	q := listAt{viewer: viewer, kind: cursor.ListFavorites, owner: viewer, first: first, after: after}
	key := s.Keys.Favorites(viewer)
	now, compiled := s.NowMS(), s.CompiledKeywords(viewer)
	var safety *postSafety
	posts, cursors, more, end, err := readList(ctx, s, q, func(*store.Item) listScan[content.Post] {
		return listScan[content.Post]{
			seek:  func(from *store.Item, limit int) rueidis.Completed { return s.ListSeekCmd(key, "", "", from, limit) },
			first: append(s.HiddenPrefetchCmds(viewer, now), s.KeywordViewCmd(viewer, compiled.Version())),
			keep: func(ctx context.Context, first []rueidis.RedisResult, items []store.Item) ([]*content.Post, error) {
				if safety == nil {
					n := len(first) - 1
					h, err := s.ParseHiddenPrefetch(first[:n], viewer, now)
					if err != nil {
						return nil, err
					}
					if safety, err = s.readPostSafety(viewer, now, h, compiled, first[n]); err != nil {
						return nil, err
					}
				}
				return s.keepFavorites(ctx, safety, items)
			},
		}
	})
	if err != nil {
		return nil, err
	}
	return postPage(q, posts, cursors, more, end), nil
}

// keepFavorites reads the posts of a page of the viewer's favorites
// through the client-side cache and keeps those to show (shownPosts);
// the deleted ones leave the record.
func (s *Service) keepFavorites(ctx context.Context, safety *postSafety, items []store.Item) ([]*content.Post, error) {
	viewer := safety.v.Viewer
	ps, err := s.shownPosts(ctx, safety, items, false)
	if err != nil {
		return nil, err
	}
	var gone []store.ID
	for i, p := range ps {
		if p != nil && p.Deleted {
			gone, ps[i] = append(gone, p.ID), nil
		}
	}
	if len(gone) > 0 {
		// A tombstone is final: the favorite can only ever be skipped.
		// The post's side needs no change (a deleted post shows no count).
		cmd := s.Redis.B().Zrem().Key(s.Keys.Favorites(viewer)).Member(store.Members(gone)...).Build()
		if err := s.Do(context.WithoutCancel(ctx), cmd).Error(); err != nil {
			return nil, fmt.Errorf("drop deleted favorites: %w", err)
		}
	}
	return ps, nil
}

// postSafety is what a page of a list of posts knows of its viewer, read
// in the list's first round trip: the authors hidden from it, and its
// keyword filters with the page's time (v, for filtered).
type postSafety struct {
	hidden sepSet
	v      *timeline.View
}

// readPostSafety reads the safety of viewer's page at now: hidden, and
// keywordView's reply kw, sent with compiled's version.
func (s *Service) readPostSafety(viewer store.ID, now int64, hidden sepSet, compiled *keyword.Set, kw rueidis.RedisResult) (*postSafety, error) {
	ks, err := s.ReadKeywordViewReply(viewer, compiled, kw)
	if err != nil {
		return nil, err
	}
	return &postSafety{hidden: hidden, v: &timeline.View{Viewer: viewer, Keywords: ks, Now: now}}, nil
}

// shownPosts reads the posts at items through the client-side cache and
// returns each as a page of the viewer's shows it: nil when missing, when
// its author is suspended, when by an author hidden from the viewer
// (safety.hidden: read, for a viewer with many, in one round trip for the
// page's authors: sepSet), when a keyword filter of the viewer's matches it (not
// the viewer's own), or (atTime, for an index scored by the post's time)
// when not at the item's time. A deleted post is returned, Deleted set,
// for the caller to skip.
func (s *Service) shownPosts(ctx context.Context, safety *postSafety, items []store.Item, atTime bool) ([]*content.Post, error) {
	ids := make([]store.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	ps, err := s.CachedPosts(ctx, ids)
	if err != nil {
		return nil, err
	}
	v := safety.v
	var authors []store.ID
	for i, p := range ps {
		switch {
		case p == nil || p.Author == 0 || (atTime && p.CreatedAt.UnixMilli() != items[i].TS):
			ps[i] = nil
		case p.Deleted: // the caller's to skip
		case p.AuthorSuspended: // the viewer's own too, as in the feeds
			ps[i] = nil
		case p.Author == v.Viewer: // never hidden nor filtered
		case v.Filtered(p.Text):
			ps[i] = nil
		case !slices.Contains(authors, p.Author):
			authors = append(authors, p.Author)
		}
	}
	if v.Viewer == 0 {
		return ps, nil
	}
	hidden, err := safety.hidden.of(ctx, authors)
	if err != nil {
		return nil, err
	}
	for i, p := range ps {
		if p != nil && hidden[p.Author] {
			ps[i] = nil
		}
	}
	return ps, nil
}

// PutFavorites records favorites (import), each as FavoritePost does but
// at its own time (the clock's when zero) and without the block check (a
// favorite made before a block stays, hidden while it stands). It returns
// how many were applied before the first refused (a bad id, a missing
// user, a missing or deleted post), with the refusal.
func (s *Service) PutFavorites(ctx context.Context, favs []core.Favorite) (_ int, err error) {
	defer store.Wrap(&err, "record favorites")
	favs, stop := s.checkFavorites(ctx, favs)
	if len(favs) == 0 {
		return 0, stop
	}
	pairs := store.CmdsFor(favs, func(f core.Favorite) core.Edge { return core.Edge{Follower: f.User, Followee: f.Post} })
	shard := s.ShardOf(favs[0].User)
	jid, err := s.Begin(ctx, shard, "k", JFav, "p", core.EncodeEdges(pairs))
	if err != nil {
		return 0, err
	}
	now := s.NowMS()
	cmds := store.CmdsFor(favs, func(f core.Favorite) rueidis.Completed {
		ms := now
		if !f.At.IsZero() {
			ms = f.At.UnixMilli()
		}
		keys, args := s.FavoriteCommitArgs(f.User, f.Post, "", true, ms)
		return FavoriteCommit.Cmd(s.Redis.B(), keys, args)
	})
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return 0, fmt.Errorf("record favorites: %w", err)
	}
	known := make([]bool, len(pairs))
	for i := range known {
		known[i] = true
	}
	if _, err := s.settleFavorites(ctx, pairs, known); err != nil {
		return 0, fmt.Errorf("recorded, a worker finishes it: %w", err)
	}
	s.End(ctx, shard, jid)
	return len(favs), stop
}

// checkFavorites returns the prefix of favs that can be applied, and the
// error of the first that cannot.
func (s *Service) checkFavorites(ctx context.Context, favs []core.Favorite) ([]core.Favorite, error) {
	var stop error
	for i, f := range favs {
		if f.User == 0 || f.Post == 0 {
			favs, stop = favs[:i], apierr.Errorf(apierr.BadInput, "favorite user and post must be positive numbers")
			break
		}
	}
	users := store.CmdsFor(favs, func(f core.Favorite) store.ID { return f.User })
	posts := store.CmdsFor(favs, func(f core.Favorite) store.ID { return f.Post })
	n, err := s.Existing(ctx, users)
	if err != nil {
		return nil, err
	}
	authors, _, deleted, err := s.ReadPostFields(ctx, posts)
	if err != nil {
		return nil, err
	}
	for i := range favs {
		switch {
		case i >= n:
			return favs[:i], apierr.Errorf(apierr.NotFound, "no user with id %d", users[i])
		case authors[i] == 0 || deleted[i]:
			return favs[:i], apierr.Errorf(apierr.NotFound, "no post with id %d", posts[i])
		}
	}
	return favs, stop
}

// ExportFavorites is the export pass of users' favorites, exportChunk a
// call, with their times; favorites of deleted posts are left out (and a
// post published since the posts pass began is written again first).
func (s *Service) ExportFavorites(ctx context.Context, users []store.ID, sink core.ExportSink) error {
	for _, u := range users {
		for from := int64(0); ; from += core.ExportChunk {
			items, err := core.ParseEntries(s.Do(ctx, s.Redis.B().Zrange().Key(s.Keys.Favorites(u)).Min(core.Itoa64(from)).Max(core.Itoa64(from+core.ExportChunk-1)).Withscores().Build()))
			if err != nil {
				return err
			}
			ps, err := s.LivePosts(ctx, store.CmdsFor(items, func(it store.Item) store.ID { return it.ID }), sink)
			if err != nil {
				return err
			}
			for i, it := range items {
				if ps[i] == nil {
					continue
				}
				if err := sink.Favorite(core.Favorite{User: u, Post: it.ID, At: time.UnixMilli(it.TS).UTC()}); err != nil {
					return err
				}
			}
			if len(items) < core.ExportChunk {
				break
			}
		}
	}
	return nil
}

// RebuildFavorites is Rebuild's favorites phase, for users: every
// favorite their records hold is in its post's favoriters (the counters
// phase, after it, drops those no record holds and recounts).
func (s *Service) RebuildFavorites(ctx context.Context, users []store.ID, st *core.RebuildStats) error {
	for _, u := range users {
		m := store.Member(u)
		for from := int64(0); ; from += core.ExportChunk {
			ms, err := s.Do(ctx, s.Redis.B().Zrange().Key(s.Keys.Favorites(u)).Min(core.Itoa64(from)).Max(core.Itoa64(from+core.ExportChunk-1)).Build()).AsStrSlice()
			if err != nil {
				return err
			}
			posts, err := timeline.IdsOf(ms)
			if err != nil {
				return err
			}
			if err := store.FirstErr(s.DoMulti(ctx, store.CmdsFor(posts, func(p store.ID) rueidis.Completed {
				return s.Redis.B().Sadd().Key(s.Keys.Favoriters(p)).Member(m).Build()
			})...)); err != nil {
				return err
			}
			st.Favorites += int64(len(posts))
			if len(ms) < core.ExportChunk {
				break
			}
		}
	}
	return nil
}

// recount sets the likes and favorites counters of the post KEYS[1]
// (counters KEYS[2]) to their bases plus their records (likers KEYS[3],
// favoriters KEYS[4]), never below 0, and replies how many it changed. A
// counter without a base (set before bases were kept) stands as it is,
// and its base becomes what its records do not explain. Deleted and
// missing posts are left alone.
var recount = store.NewScript(false, `
local p = redis.call('HMGET', KEYS[1], 'a', 'd')
if not p[1] or p[2] == '1' then return 0 end
local changed = 0
local function fix(cnt, base, set)
  local have = redis.call('SCARD', set)
  local b = redis.call('HGET', KEYS[2], base)
  local c = tonumber(redis.call('HGET', KEYS[2], cnt) or '0')
  if not b then
    if c ~= 0 or have ~= 0 then redis.call('HSET', KEYS[2], base, string.format('%d', c - have)) end
    return
  end
  local want = tonumber(b) + have
  if want < 0 then want = 0 end
  if want ~= c then
    redis.call('HSET', KEYS[2], cnt, string.format('%d', want))
    changed = changed + 1
  end
end
fix('l', 'lb', KEYS[3])
fix('f', 'fb', KEYS[4])
return changed
`)

// RebuildCounters is Rebuild's counters phase, for posts: favoriters no
// record holds are dropped, then the likes and favorites counters are
// recomputed as their bases plus the records (recount).
func (s *Service) RebuildCounters(ctx context.Context, posts []store.ID, st *core.RebuildStats) error {
	for _, p := range posts {
		if err := s.pruneFavoriters(ctx, p, st); err != nil {
			return err
		}
	}
	rs := s.DoMulti(ctx, store.CmdsFor(posts, func(p store.ID) rueidis.Completed {
		return recount.Cmd(s.Redis.B(), []string{s.Keys.Post(p), s.Keys.PostCounts(p), s.Keys.Likers(p), s.Keys.Favoriters(p)}, nil)
	})...)
	for _, r := range rs {
		n, err := r.AsInt64()
		if err != nil {
			return fmt.Errorf("recount: %w", err)
		}
		st.Counters += n
	}
	return nil
}

// pruneFavoriters drops from post's favoriters the users whose records
// do not hold it, exportChunk a round.
func (s *Service) pruneFavoriters(ctx context.Context, post store.ID, st *core.RebuildStats) error {
	pm := store.Member(post)
	for cursor := uint64(0); ; {
		e, err := s.Do(ctx, s.Redis.B().Sscan().Key(s.Keys.Favoriters(post)).Cursor(cursor).Count(core.ExportChunk).Build()).AsScanEntry()
		if err != nil {
			return err
		}
		users, err := timeline.IdsOf(e.Elements)
		if err != nil {
			return err
		}
		held, err := store.ParseEach(s.DoMulti(ctx, store.CmdsFor(users, func(u store.ID) rueidis.Completed {
			return s.Redis.B().Zscore().Key(s.Keys.Favorites(u)).Member(pm).Build()
		})...), store.IsMember)
		if err != nil {
			return err
		}
		var stale []string
		for i, ok := range held {
			if !ok {
				stale = append(stale, store.Member(users[i]))
			}
		}
		if len(stale) > 0 {
			st.Removed += int64(len(stale))
			if err := s.Do(ctx, s.Redis.B().Srem().Key(s.Keys.Favoriters(post)).Member(stale...).Build()).Error(); err != nil {
				return err
			}
		}
		if cursor = e.Cursor; cursor == 0 {
			return nil
		}
	}
}

// ReadPostFields reads the author and tombstone of posts: author 0 where the
// post hash does not exist.
func (s *Service) ReadPostFields(ctx context.Context, ids []store.ID) (authors []store.ID, ts []int64, deleted []bool, err error) {
	cmds := store.CmdsFor(ids, func(id store.ID) rueidis.Completed {
		return s.Redis.B().Hmget().Key(s.Keys.Post(id)).Field("a", "t", "d").Build()
	})
	authors, ts, deleted = make([]store.ID, len(ids)), make([]int64, len(ids)), make([]bool, len(ids))
	var f [3]string
	for i, r := range s.DoMulti(ctx, cmds...) {
		if _, err := timeline.HashFields(r, f[:]); err != nil {
			return nil, nil, nil, fmt.Errorf("read post %d: %w", ids[i], err)
		}
		authors[i], _ = store.ParseID(f[0])
		ts[i], _ = core.ParseInt(f[1])
		deleted[i] = f[2] == "1"
	}
	return authors, ts, deleted, nil
}

// Exportable reports whether p is a post to export: it exists, is not
// deleted, and has an author (not a stray hash).
func Exportable(p *content.Post) bool { return p != nil && !p.Deleted && p.Author != 0 }

// ExportRecent is how far back from the start of the posts pass a post's
// time must reach for Export to write it again before its likes and
// counters: the post may have been published after the pass went by
// (replicas' clocks may disagree by this much).
const ExportRecent = 5 * time.Minute

// LivePosts reads the posts ids, nil where missing or deleted, and writes
// again those published since the posts pass began (recent), so that no
// like or counts line comes without its post.
func (s *Service) LivePosts(ctx context.Context, ids []store.ID, sink core.ExportSink) ([]*content.Post, error) {
	ps, err := s.Posts(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i, p := range ps {
		if !Exportable(p) || p.IsRepost() {
			ps[i] = nil
			continue
		}
		if !p.CreatedAt.Before(sink.Recent) {
			if err := sink.Post(p); err != nil {
				return nil, err
			}
		}
	}
	return ps, nil
}
