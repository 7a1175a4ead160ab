package auth

import "time"

// Identity is what Resolve learned about the caller.
type Identity struct {
	// ViewerID is the authenticated user's database id; 0 when anonymous.
	ViewerID uint64
	// Problem says why there is no viewer when credentials were sent but
	// refused (expired token, dev header while dev auth is off, ...), so the
	// UNAUTHENTICATED error can tell the client what to fix.
	Problem string
	// Expires is when the bearer token that proved ViewerID expires (its
	// "exp"); zero for dev auth and for no viewer. A request ends long
	// before it; a WebSocket or an event stream is ended then.
	Expires time.Time
}
