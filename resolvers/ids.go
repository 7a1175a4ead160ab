package resolvers

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
)

// nodeIDs resolves the id (global, of type typ) and databaseId fields of
// the nodes of type T, for the type resolvers that embed it.
type nodeIDs[T any] struct {
	typ gqltype.Type
	of  func(*T) feedcore.ID
}

func (n nodeIDs[T]) ID(_ context.Context, v *T) (string, error) {
	return gqltype.Encode(n.typ, n.of(v)), nil
}

func (n nodeIDs[T]) DatabaseID(_ context.Context, v *T) (string, error) {
	return feedcore.FormatID(n.of(v)), nil
}

// decodeID reads a global id of type want, or a plain decimal database id.
// A malformed id is the client's mistake (BAD_USER_INPUT); whether the
// object exists is the domain's to say (NOT_FOUND).
func decodeID(arg, raw string, want gqltype.Type) (feedcore.ID, error) {
	id, err := gqltype.DecodeAs(raw, want)
	if err != nil {
		return 0, fail(apierr.BadInput, "%s: %q is not a %s id", arg, raw, want)
	}
	return id, nil
}
