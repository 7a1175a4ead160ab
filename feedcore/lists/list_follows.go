package lists

import (
	"context"
	"errors"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/redis/rueidis"
)

// Follower lists: User.followers and User.following, newest follow first.
//
// The graph's sets (fg, fr) keep score 0: the fan-out dispatcher pages a
// big author's followers by member (BYLEX), which needs one score. So the
// time of each follow is kept beside them (keys.followingTimes,
// keys.followerTimes): written with the following set by the follow's
// own script (followAdd, given the import's time or the clock's), copied
// into the followee's slot by the settle that writes fr (addFollows,
// from the time the settle read with the record), and removed by the
// settle that removes fr (removeFollows). A list pages the time set and
// checks each entry against fg or fr in the same script, so an unfollow
// whose settle is still to come never shows; fan-out reads neither.

// Followers pages the followers of user as viewer sees them, most recent
// follow first (ties by id, highest first): first per page
// (DefaultPageSize when 0), after a cursor of this list. Users separated
// from the viewer (a block, either way, or the viewer's mute in force)
// are left out (of the viewer's own lists too); when one stands between
// // the viewer and user, the list is empty. A suspended account is in no
// list and its own are empty, as if it blocked everyone: the suspension's
// job marks its profile (safety_moderation.go), which the page reads
// through the client-side cache with the profiles it shows.
func (s *Service) Followers(ctx context.Context, viewer, user store.ID, first int, after string) (_ *UserPage, err error) {
	defer store.Wrap(&err, "list the followers of user %d", user)
	return s.followList(ctx, listAt{viewer: viewer, kind: cursor.ListFollowers, owner: user, first: first, after: after},
		s.Keys.FollowerTimes(user), s.Keys.Followers(user))
}

// Following pages the accounts user follows, as Followers does.
func (s *Service) Following(ctx context.Context, viewer, user store.ID, first int, after string) (_ *UserPage, err error) {
	defer store.Wrap(&err, "list the accounts user %d follows", user)
	return s.followList(ctx, listAt{viewer: viewer, kind: cursor.ListFollowing, owner: user, first: first, after: after},
		s.Keys.FollowingTimes(user), s.Keys.Following(user))
}

// followList pages the time set times of q's owner, each entry checked
// against the graph's set graph, in one round trip with the viewer's
// separations from the owner and those it has (up to sepPrefetch of each
// kind); only a viewer with more pays one more, for its separations from
// the users found.
func (s *Service) followList(ctx context.Context, q listAt, times, graph string) (*UserPage, error) {
	now := s.NowMS()
	users, cursors, more, end, err := readList(ctx, s, q, func(*store.Item) listScan[store.ID] {
		// The viewer's own lists too: a mute leaves the viewer's own
		// followees out of its following list, as from everything else.
		gate := q.viewer != 0
		var first []rueidis.Completed
		if gate {
			first = append(s.separationCmds(q.viewer, []store.ID{q.owner}), s.SepPrefetchCmds(q.viewer, now)...)
		}
		var sep *sepSet
		return listScan[store.ID]{
			seek: func(from *store.Item, limit int) rueidis.Completed {
				return s.ListSeekCmd(times, graph, "-1", from, limit)
			},
			first: first,
			keep: func(ctx context.Context, first []rueidis.RedisResult, items []store.Item) ([]*store.ID, error) {
				if !gate {
					out, _ := keepAll(ctx, nil, items)
					return s.dropSuspended(ctx, q.owner, out)
				}
				if sep == nil {
					h, err := s.gateOwner(q, now, first)
					if err != nil {
						return nil, err
					}
					sep = &h
				}
				out, err := keepUnseparated(ctx, *sep, items)
				if err != nil {
					return nil, err
				}
				return s.dropSuspended(ctx, q.owner, out)
			},
		}
	})
	if err != nil {
		return nil, err
	}
	return userPage(users, cursors, more, end), nil
}

// gateOwner reads the first round trip's replies of a list of q's owner
// (separationCmds' for the owner, then sepPrefetchCmds', sent at now):
// errNothingShown when the owner is separated from the viewer, else what
// the page knows of the viewer's separations.
func (s *Service) gateOwner(q listAt, now int64, first []rueidis.RedisResult) (sepSet, error) {
	owner, err := parseSeparations(first[:3], []store.ID{q.owner}, now)
	if err != nil {
		return sepSet{}, err
	}
	if owner[q.owner] {
		return sepSet{}, errNothingShown
	}
	return s.ParseSepPrefetch(first[3:], q.viewer, now)
}

// keepUnseparated keeps the users of items that nothing in sep separates
// from the viewer.
func keepUnseparated(ctx context.Context, sep sepSet, items []store.Item) ([]*store.ID, error) {
	out, _ := keepAll(ctx, nil, items)
	ids := make([]store.ID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	hidden, err := sep.of(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		if hidden[id] {
			out[i] = nil
		}
	}
	return out, nil
}

// errNothingShown: the whole list is kept from the viewer (its owner
// separated from or hidden from the viewer); collectList answers an
// empty page.
var errNothingShown = errors.New("the list is not shown to this viewer")

// RebuildFollowTimes is Rebuild's follow times phase, for users: every
// follow of their following sets is timed (one made before times were
// kept gets the rebuild's time, once), its time copied to the followee's
// side, and the times of follows that are gone are removed from both
// sides. It runs after the authors phase, which leaves each followers set
// exactly what the following sets say.
func (s *Service) RebuildFollowTimes(ctx context.Context, users []store.ID, st *core.RebuildStats) error {
	fgs, err := s.AllOf(ctx, s.Keys.Following, users)
	if err != nil {
		return err
	}
	whole := func(keyOf func(store.ID) string) func(store.ID) rueidis.Completed {
		return func(id store.ID) rueidis.Completed {
			return s.Redis.B().Zrange().Key(keyOf(id)).Min("0").Max("-1").Withscores().Build()
		}
	}
	fgts, err := store.ParseEach(s.DoMulti(ctx, store.CmdsFor(users, whole(s.Keys.FollowingTimes))...), core.ParseEntries)
	if err != nil {
		return err
	}
	now := s.NowMS()
	var cmds []rueidis.Completed
	for i, u := range users {
		timed := make(map[store.ID]int64, len(fgts[i]))
		for _, it := range fgts[i] {
			timed[it.ID] = it.TS
		}
		follows, err := timeline.IdsOf(fgs[i])
		if err != nil {
			return err
		}
		for _, f := range follows {
			at, ok := timed[f]
			if !ok {
				at = 0 // followTimeCmds: now, and the follower's side too
			}
			delete(timed, f)
			cmds = append(cmds, s.FollowTimeCmds(core.Edge{Follower: u, Followee: f}, at, now)...)
			st.FollowTimes++
		}
		for f := range timed { // timed, but no longer followed
			cmds = append(cmds, s.Redis.B().Zrem().Key(s.Keys.FollowingTimes(u)).Member(store.Member(f)).Build())
			st.Removed++
		}
	}
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return err
	}
	return s.pruneFollowerTimes(ctx, users, st)
}

// pruneFollowerTimes removes from users' follower times those no longer
// in their followers sets.
func (s *Service) pruneFollowerTimes(ctx context.Context, users []store.ID, st *core.RebuildStats) error {
	frts, err := s.AllOf(ctx, s.Keys.FollowerTimes, users)
	if err != nil {
		return err
	}
	var reads []rueidis.Completed
	var at []int
	for i, u := range users {
		if len(frts[i]) > 0 {
			reads = append(reads, s.Redis.B().Zmscore().Key(s.Keys.Followers(u)).Member(frts[i]...).Build())
			at = append(at, i)
		}
	}
	var writes []rueidis.Completed
	for j, r := range s.DoMulti(ctx, reads...) {
		scores, err := r.ToArray()
		if err != nil {
			return err
		}
		i := at[j]
		stale := make([]bool, len(scores))
		for k, sc := range scores {
			stale[k] = sc.IsNil()
		}
		if cmd, n := s.ZremWhere(s.Keys.FollowerTimes(users[i]), frts[i], stale); n > 0 {
			writes = append(writes, cmd)
			st.Removed += int64(n)
		}
	}
	return store.FirstErr(s.DoMulti(ctx, writes...))
}

// dropSuspended leaves out of ids (nil where already left out) the
// accounts an operator has suspended, and shows nothing of a suspended
// owner's lists: a suspension works as a block by everyone. It reads the
// profiles the page shows anyway, through the client-side cache (Users),
// so the hydration that follows reads none of them again.
func (s *Service) dropSuspended(ctx context.Context, owner store.ID, ids []*store.ID) ([]*store.ID, error) {
	want := []store.ID{owner}
	for _, id := range ids {
		if id != nil {
			want = append(want, *id)
		}
	}
	if len(want) == 1 {
		return ids, nil
	}
	us, err := s.Users(ctx, want)
	if err != nil {
		return nil, err
	}
	suspended := map[store.ID]bool{}
	for _, u := range us {
		if u != nil && u.Suspended {
			suspended[u.ID] = true
		}
	}
	if suspended[owner] {
		return nil, errNothingShown
	}
	for i, id := range ids {
		if id != nil && suspended[*id] {
			ids[i] = nil
		}
	}
	return ids, nil
}
