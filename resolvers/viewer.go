package resolvers

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/reqinfo"
)

// viewer returns the authenticated viewer's profile, or UNAUTHENTICATED.
// An id whose user does not exist is not an identity: a stale token or a
// mistyped X-Viewer-Id must not act as a ghost. The profile read goes
// through the client-side cache, so on a real Redis it is usually free;
// it is read at once, not batched, and primes the request's loaders.
func (r *Resolver) viewer(ctx context.Context) (*feedcore.User, error) {
	id, err := claimedViewer(ctx)
	if err != nil {
		return nil, err
	}
	us, err := r.Svc.Users(ctx, []feedcore.ID{id})
	if err != nil {
		return nil, err
	}
	if us[0] == nil {
		return nil, ghost(id)
	}
	r.loaders(ctx).PrimeUsers(us[0])
	return us[0], nil
}

// ghost is the error for a viewer id whose user does not exist.
func ghost(id feedcore.ID) error {
	return fail(apierr.Unauthenticated, "not signed in: no user has id %d", id)
}

// ghostFirst is err, unless the viewer is a ghost (an id with no
// profile), who is told so first.
func (r *Resolver) ghostFirst(ctx context.Context, err error) error {
	if _, verr := r.viewer(ctx); verr != nil {
		return verr
	}
	return err
}

// claimedViewer is the id the caller authenticated as, not yet checked
// against the store, or UNAUTHENTICATED.
func claimedViewer(ctx context.Context) (feedcore.ID, error) {
	id := reqinfo.Of(ctx).Identity
	if id.ViewerID == 0 {
		if id.Problem != "" {
			return 0, fail(apierr.Unauthenticated, "not signed in: %s", id.Problem)
		}
		return 0, fail(apierr.Unauthenticated, "sign in first: send Authorization: Bearer <token> (or X-Viewer-Id when the server runs with --dev-auth)")
	}
	return id.ViewerID, nil
}

// viewerID is viewer for resolvers that need only the id: it checks the
// viewer exists without reading the profile when this process has seen
// it exist (feedcore.UserExists), so a mutation (a publish: 2 round trips)
// pays no read for it.
func (r *Resolver) viewerID(ctx context.Context) (feedcore.ID, error) {
	id, err := claimedViewer(ctx)
	if err != nil {
		return 0, err
	}
	ok, err := r.Svc.UserExists(ctx, id)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 0, ghost(id)
	}
	return id, nil
}

// optionalViewer is the caller's id for fields that also answer
// anonymous callers (viewerIsFollowing, viewerHasLiked); 0 when none.
func optionalViewer(ctx context.Context) feedcore.ID {
	return reqinfo.Viewer(ctx)
}
