package auth

import (
	"net/http"
	"strconv"
	"strings"
)

// DevHeader carries the viewer's database id when dev auth is on.
const DevHeader = "X-Viewer-Id"

// Config says which credentials Resolve accepts.
type Config struct {
	// DevAuth accepts X-Viewer-Id without proof. Never enable it where
	// strangers can reach the server.
	DevAuth bool
	// Verifier checks bearer tokens; nil or empty refuses them.
	Verifier *Verifier
}

// Resolve reads the identity from r's headers. It never refuses a
// request: an identity without a viewer says why (Identity.Problem). A
// bearer token wins over the dev header, so a client holding a real token
// is never silently someone else.
func Resolve(cfg Config, r *http.Request) Identity {
	return Credentials{Authorization: r.Header.Get("Authorization"), DevViewer: r.Header.Get(DevHeader)}.Resolve(cfg)
}

// Credentials are what a caller sent to prove who it is, wherever it sent
// them: the headers of a request, or the payload of a WebSocket's
// connection_init, which a browser fills in since it cannot set a
// WebSocket's headers. Either way they are checked by the one Resolve.
type Credentials struct {
	// Authorization is an Authorization header's value: "Bearer <token>".
	Authorization string
	// DevViewer is the X-Viewer-Id header's value (dev auth only).
	DevViewer string
}

// Empty reports whether no credentials were sent.
func (c Credentials) Empty() bool { return c.Authorization == "" && c.DevViewer == "" }

// Resolve is the identity c proves under cfg (see the function Resolve).
func (c Credentials) Resolve(cfg Config) Identity {
	if h := c.Authorization; h != "" {
		scheme, token, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
			return Identity{Problem: "the Authorization header must be \"Bearer <token>\""}
		}
		id, exp, err := cfg.Verifier.VerifyExpiry(strings.TrimSpace(token))
		if err != nil {
			return Identity{Problem: err.Error()}
		}
		return Identity{ViewerID: id, Expires: exp}
	}
	if h := c.DevViewer; h != "" {
		if !cfg.DevAuth {
			return Identity{Problem: DevHeader + " is accepted only when the server runs with --dev-auth"}
		}
		id, err := strconv.ParseUint(strings.TrimSpace(h), 10, 64)
		if err != nil || id == 0 {
			return Identity{Problem: DevHeader + " must be a user's decimal database id"}
		}
		return Identity{ViewerID: id}
	}
	return Identity{}
}
