package resolvers

import (
	"context"
	"time"

	"github.com/feedd/feedd/feedcore"
)

// AvatarURL is null, not "", when the user has none.
func (r *userResolver) AvatarURL(_ context.Context, u *feedcore.User) (*string, error) {
	return nonEmpty(u.AvatarURL), nil
}

func (r *userResolver) FollowerCount(ctx context.Context, u *feedcore.User) (int, error) {
	c, err := r.counts(ctx, u)
	return c.Followers, err
}

func (r *userResolver) FollowingCount(ctx context.Context, u *feedcore.User) (int, error) {
	c, err := r.counts(ctx, u)
	return c.Following, err
}

// profile reads user id's profile through the request's loaders; missing
// is the error when the user has none.
func (r *Resolver) profile(ctx context.Context, id feedcore.ID, missing func() error) (*feedcore.User, error) {
	u, err := r.loaders(ctx).User(ctx, id)
	if err == nil && u == nil {
		err = missing()
	}
	return u, err
}

// counts reads a user's graph counts through the request's loaders.
func (r *userResolver) counts(ctx context.Context, u *feedcore.User) (feedcore.GraphCounts, error) {
	return r.loaders(ctx).GraphCounts(ctx, u.ID)
}

// ViewerIsFollowing is false for anonymous callers and for the viewer's own
// profile, so public queries need no sign-in.
func (r *userResolver) ViewerIsFollowing(ctx context.Context, u *feedcore.User) (bool, error) {
	return r.loaders(ctx).Following(ctx, u.ID)
}

// The viewer's relation flags read through the request's loaders: a feed
// page has primed them in its hydration read, anything else is batched.
// All are false (and viewerMuteExpiresAt null) for anonymous callers and
// for the viewer's own profile.
func (r *userResolver) ViewerHasBlocked(ctx context.Context, u *feedcore.User) (bool, error) {
	f, err := r.loaders(ctx).Relation(ctx, u.ID)
	return f.Blocked, err
}

func (r *userResolver) BlocksViewer(ctx context.Context, u *feedcore.User) (bool, error) {
	f, err := r.loaders(ctx).Relation(ctx, u.ID)
	return f.BlocksViewer, err
}

func (r *userResolver) ViewerHasMuted(ctx context.Context, u *feedcore.User) (bool, error) {
	f, err := r.loaders(ctx).Relation(ctx, u.ID)
	return f.Muted, err
}

// ViewerMuteExpiresAt is null unless a mute with an end stands.
func (r *userResolver) ViewerMuteExpiresAt(ctx context.Context, u *feedcore.User) (*time.Time, error) {
	f, err := r.loaders(ctx).Relation(ctx, u.ID)
	if err != nil || !f.Muted || f.MuteEnds.IsZero() {
		return nil, err
	}
	return &f.MuteEnds, nil
}

func (r *userResolver) ViewerHidesMyPosts(ctx context.Context, u *feedcore.User) (bool, error) {
	f, err := r.loaders(ctx).Relation(ctx, u.ID)
	return f.HidesFrom, err
}
