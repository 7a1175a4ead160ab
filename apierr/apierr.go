// Package apierr holds the errors a client is shown: a Code, reported as
// the GraphQL error's extensions.code, and a message safe to show. It is a
// leaf, so every layer (feedcore, the scalars, the server's guards) names
// the same codes without importing the others.
package apierr

import (
	"fmt"
	"time"
)

// Code classifies an error for callers. The GraphQL layer reports it as
// extensions.code; the list is fixed by DESIGN.md ("Errors"), and clients
// switch on it.
type Code string

const (
	Unauthenticated Code = "UNAUTHENTICATED"
	Forbidden       Code = "FORBIDDEN"
	NotFound        Code = "NOT_FOUND"
	BadInput        Code = "BAD_USER_INPUT"
	InvalidCursor   Code = "INVALID_CURSOR"
	CursorExpired   Code = "CURSOR_EXPIRED"
	FollowLimit     Code = "FOLLOW_LIMIT"
	RateLimited     Code = "RATE_LIMITED"
	Unavailable     Code = "UNAVAILABLE"
	Internal        Code = "INTERNAL"
)

// Error is a failure the caller can act on: its Message is safe to show.
type Error struct {
	Code    Code
	Message string
	// RetryAfter, for RATE_LIMITED, is how long to wait before retrying.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Message }

// Errorf returns an *Error with code and a formatted message.
func Errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
