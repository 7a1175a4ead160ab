package resolvers

import (
	"context"

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
