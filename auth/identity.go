package auth

import "context"

// Identity is what the middleware learned about the caller.
type Identity struct {
	// ViewerID is the authenticated user's database id; 0 when anonymous.
	ViewerID uint64
	// Problem says why there is no viewer when credentials were sent but
	// refused (expired token, dev header while dev auth is off, ...), so the
	// UNAUTHENTICATED error can tell the client what to fix.
	Problem string
}

type ctxKey struct{}

// WithIdentity returns ctx carrying id.
func WithIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, ctxKey{}, id)
}

// FromContext returns the caller's identity; the zero Identity (anonymous)
// when the middleware did not run.
func FromContext(ctx context.Context) Identity {
	id, _ := ctx.Value(ctxKey{}).(Identity)
	return id
}
