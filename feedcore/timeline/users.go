package timeline

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// profileTTL bounds how long a profile may live in the client-side cache;
// Redis invalidates it sooner on any change.
const profileTTL = 5 * time.Minute

// PutUser creates or replaces a profile. Handles are unique.
func (s *Service) PutUser(ctx context.Context, u core.User) error {
	_, err := s.PutUsers(ctx, []core.User{u})
	return err
}

// PutUsers creates or replaces profiles in order, in two round trips. It
// stops at the first invalid one (bad id or handle, or a handle another user
// has) and returns how many were stored before it; handles it claimed for
// the users after that one are released. A user stored under a new handle
// frees the old one.
func (s *Service) PutUsers(ctx context.Context, us []core.User) (_ int, err error) {
	defer store.Wrap(&err, "store users")
	var stop error
	for i, u := range us {
		if u.ID == 0 {
			us, stop = us[:i], apierr.Errorf(apierr.BadInput, "user id must be a positive number")
		} else if err := validHandle(u.Handle); err != nil {
			us, stop = us[:i], err
		}
		if stop != nil {
			break
		}
	}
	n := len(us)
	cmds := make([]rueidis.Completed, 0, 2*n)
	for _, u := range us {
		cmds = append(cmds, s.claimHandleCmd(u.Handle, u.ID))
	}
	for _, u := range us {
		cmds = append(cmds, s.Redis.B().Hget().Key(s.Keys.User(u.ID)).Field("h").Build())
	}
	rs := s.DoMulti(ctx, cmds...)
	claimed := make([]bool, n) // the handle key was created by this call
	stopAt := n
	for i := range n {
		prev, err := rs[i].ToString()
		switch {
		case rueidis.IsRedisNil(err):
			claimed[i] = true
		case err != nil:
			return 0, err
		case prev != store.FormatID(us[i].ID) && stopAt == n:
			stopAt, stop = i, apierr.Errorf(apierr.BadInput, "handle %q is taken by another user", us[i].Handle)
		}
	}
	var writes []rueidis.Completed
	for j := stopAt + 1; j < n; j++ {
		if claimed[j] {
			writes = append(writes, s.releaseHandleCmd(us[j].Handle, us[j].ID))
		}
	}
	for i, u := range us[:stopAt] {
		if old, _ := rs[n+i].ToString(); old != "" && old != u.Handle {
			writes = append(writes, s.releaseHandleCmd(old, u.ID))
		}
		if u.DisplayName == "" {
			u.DisplayName = u.Handle
		}
		writes = append(writes, s.Redis.B().Hset().Key(s.Keys.User(u.ID)).FieldValue().
			FieldValue("h", u.Handle).FieldValue("n", u.DisplayName).FieldValue("a", u.AvatarURL).Build())
	}
	if err := store.FirstErr(s.DoMulti(ctx, writes...)); err != nil {
		return 0, err
	}
	for _, u := range us[:stopAt] {
		s.Known.Add(u.ID)
	}
	return stopAt, stop
}

// deleteIfEquals deletes the string KEYS[1] if it still holds ARGV[1]: a
// handle is released by its owner only.
var deleteIfEquals = store.NewScript(false, `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

func (s *Service) releaseHandleCmd(handle string, id store.ID) rueidis.Completed {
	return deleteIfEquals.Cmd(s.Redis.B(), []string{s.Keys.Handle(handle)}, []string{store.FormatID(id)})
}

func validHandle(h string) error {
	if h == "" || len(h) > 64 || strings.ContainsAny(h, " \t\r\n{}@") {
		return apierr.Errorf(apierr.BadInput, "handle %q is not valid: 1 to 64 characters, no spaces, braces or @", h)
	}
	return nil
}

// Users returns the profiles of ids in order, nil where none exists. One
// pipelined round trip, served from the client-side cache when warm.
func (s *Service) Users(ctx context.Context, ids []store.ID) (_ []*core.User, err error) {
	defer store.Wrap(&err, "read users")
	// Static TTL: profile keys never expire in Redis, so rueidis's
	// per-read PTTL check would only add commands to every miss.
	cmds := store.CmdsFor(ids, func(id store.ID) rueidis.CacheableTTL {
		return rueidis.CT(s.Redis.B().Hmget().Key(s.Keys.User(id)).Field(profileFields...).Cache().ToStaticTTL(), profileTTL)
	})
	out := make([]*core.User, len(ids))
	var f [4]string
	for i, r := range s.Redis.DoMultiCache(ctx, cmds...) {
		found, err := HashFields(r, f[:])
		if err != nil {
			return nil, err
		}
		if found {
			out[i] = &core.User{ID: ids[i], Handle: f[0], DisplayName: f[1], AvatarURL: f[2], Suspended: f[3] != ""}
			s.Known.Add(ids[i])
		}
	}
	return out, nil
}

// UserExists reports whether a profile with id exists, without a round
// trip when this process has seen it exist (see usersExist).
func (s *Service) UserExists(ctx context.Context, id store.ID) (_ bool, err error) {
	defer store.Wrap(&err, "read user %d", id)
	err = s.UsersExist(ctx, id)
	if store.CodeOf(err) == apierr.NotFound {
		return false, nil
	}
	return err == nil, err
}

// profileFields are the fields of a profile hash (see PutUsers) that Users
// reads, in this order.
// sx is the suspension's mark (safety_moderation.go): the lists of users
// leave a suspended account out by it, at no round trip of their own.
var profileFields = []string{"h", "n", "a", FieldSuspended}

// User returns one profile, or NOT_FOUND.
func (s *Service) User(ctx context.Context, id store.ID) (_ *core.User, err error) {
	defer store.Wrap(&err, "read user %d", id)
	us, err := s.Users(ctx, []store.ID{id})
	return store.Single(us, err, "user", id)
}

// UserByHandle returns the profile with handle h, or nil when none has it.
func (s *Service) UserByHandle(ctx context.Context, h string) (_ *core.User, err error) {
	defer store.Wrap(&err, "find user by handle")
	v, err := s.Redis.Do(ctx, s.Redis.B().Get().Key(s.Keys.Handle(h)).Build()).ToString()
	if rueidis.IsRedisNil(err) || err == nil && heldHandle(v) { // held: a deleted account's
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	id, err := store.ParseID(v)
	if err != nil {
		return nil, fmt.Errorf("handle %q holds %q: %w", h, v, err)
	}
	us, err := s.Users(ctx, []store.ID{id})
	if err != nil {
		return nil, err
	}
	return us[0], nil
}

// GraphCounts is how many followers and followees users have.
type GraphCounts struct{ Followers, Following int }

// Counts returns follower and following counts of ids, in one round trip.
// They are the sizes of the graph's sets, so they cannot drift from them.
func (s *Service) Counts(ctx context.Context, ids []store.ID) (_ []GraphCounts, err error) {
	defer store.Wrap(&err, "read follow counts")
	return ParseGraphCounts(s.Redis.DoMulti(ctx, s.GraphCountCmds(ids)...))
}

// GraphCountCmds read the follower and following counts of ids, two
// commands each (ParseGraphCounts reads their replies).
func (s *Service) GraphCountCmds(ids []store.ID) []rueidis.Completed {
	cmds := make([]rueidis.Completed, 0, 2*len(ids))
	for _, id := range ids {
		cmds = append(cmds, s.Redis.B().Zcard().Key(s.Keys.Followers(id)).Build(), s.Redis.B().Zcard().Key(s.Keys.Following(id)).Build())
	}
	return cmds
}

// ParseGraphCounts reads the replies of GraphCountCmds.
func ParseGraphCounts(rs []rueidis.RedisResult) ([]GraphCounts, error) {
	out := make([]GraphCounts, len(rs)/2)
	for i := range out {
		fr, err := rs[2*i].AsInt64()
		if err != nil {
			return nil, err
		}
		fg, err := rs[2*i+1].AsInt64()
		if err != nil {
			return nil, err
		}
		out[i] = GraphCounts{Followers: int(fr), Following: int(fg)}
	}
	return out, nil
}

// IsFollowing reports, for each target, whether viewer follows it.
func (s *Service) IsFollowing(ctx context.Context, viewer store.ID, targets []store.ID) (_ []bool, err error) {
	defer store.Wrap(&err, "read follows of user %d", viewer)
	if len(targets) == 0 {
		return make([]bool, 0), nil
	}
	return ParseFollowing(s.Redis.Do(ctx, s.FollowingCmd(viewer, targets)), len(targets))
}

// FollowingCmd reads which of targets viewer follows (ParseFollowing reads
// its reply); targets must not be empty.
func (s *Service) FollowingCmd(viewer store.ID, targets []store.ID) rueidis.Completed {
	return s.Redis.B().Zmscore().Key(s.Keys.Following(viewer)).Member(store.Members(targets)...).Build()
}

// ParseFollowing reads the reply of FollowingCmd for n targets.
func ParseFollowing(r rueidis.RedisResult, n int) ([]bool, error) {
	scores, err := r.ToArray()
	if err != nil {
		return nil, err
	}
	out := make([]bool, n)
	for i, sc := range scores {
		out[i] = !sc.IsNil()
	}
	return out, nil
}

// UsersExist checks every id names a profile; NOT_FOUND names the first
// that does not. Users this process has seen exist cost no round trip:
// once seen, a user is taken to exist for good (a deleted account's own
// requests are refused by its gone marker, safety_account.go). The others
// are checked in one pipeline and remembered.
func (s *Service) UsersExist(ctx context.Context, ids ...store.ID) error {
	var unknown []store.ID
	for _, id := range ids {
		if !s.Known.Has(id) {
			unknown = append(unknown, id)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	n, err := s.Existing(ctx, unknown)
	if err != nil {
		return err
	}
	for _, id := range unknown[:n] {
		s.Known.Add(id)
	}
	if n < len(unknown) {
		return apierr.Errorf(apierr.NotFound, "no user with id %d", unknown[n])
	}
	return nil
}

func (s *Service) claimHandleCmd(handle string, id store.ID) rueidis.Completed {
	return claimHandle.Cmd(s.Redis.B(), []string{s.Keys.Handle(handle)}, []string{store.FormatID(id), store.ScoreArg(s.NowMS())})
}

// heldHandle reports whether a handle key's value is a deleted account's
// held handle ("id until"), not a user id.
func heldHandle(v string) bool { return strings.Contains(v, " ") }

// claimHandle takes the handle KEYS[1] for user ARGV[1] unless another
// holds it, and replies the holder's value (nil when it was free). A
// deleted account's held handle (value "id until") is free once ARGV[2]
// ms has reached its until.
var claimHandle = store.NewScript(false, `
local v = redis.call('GET', KEYS[1])
if v then
  local untl = string.match(v, ' (%d+)$')
  if not untl or tonumber(untl) > tonumber(ARGV[2]) then return v end
end
redis.call('SET', KEYS[1], ARGV[1])
return false
`)
