package resolvers

import (
	"context"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
)

// ID is a keyword filter's global id.
func (keywordFilterResolver) ID(_ context.Context, f *feedcore.KeywordFilter) (string, error) {
	return gqltype.Encode(gqltype.KeywordFilter, f.ID), nil
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
