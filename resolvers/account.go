package resolvers

import (
	"context"

	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/graph"
)

// DeleteAccount deletes the viewer's account. Not through mutate: a retry
// comes from an account already deleted, whose id names no user any more
// (mutate's viewerID would call it a ghost); feedcore checks the handle
// against the profile or, on a retry, against the deletion's record, and
// answers UNAUTHENTICATED for an id that never had an account.
func (r *mutationResolver) DeleteAccount(ctx context.Context, confirmHandle string) (*graph.DeleteAccountPayload, error) {
	viewer, err := claimedViewer(ctx)
	if err != nil {
		return nil, err
	}
	wctx, cancel := r.writeContext(ctx)
	defer cancel()
	if err := r.Svc.DeleteAccount(wctx, viewer, confirmHandle); err != nil {
		return nil, err
	}
	return &graph.DeleteAccountPayload{DeletedUserID: gqltype.Encode(gqltype.User, viewer)}, nil
}
