package auth

// Identity is what Resolve learned about the caller.
type Identity struct {
	// ViewerID is the authenticated user's database id; 0 when anonymous.
	ViewerID uint64
	// Problem says why there is no viewer when credentials were sent but
	// refused (expired token, dev header while dev auth is off, ...), so the
	// UNAUTHENTICATED error can tell the client what to fix.
	Problem string
}
