package feedcore

import (
	"errors"
	"fmt"
	"time"
)

// Code classifies an error for callers. The GraphQL layer reports it as
// extensions.code; the values are the brief's fixed list.
type Code string

const (
	CodeUnauthenticated Code = "UNAUTHENTICATED"
	CodeForbidden       Code = "FORBIDDEN"
	CodeNotFound        Code = "NOT_FOUND"
	CodeBadInput        Code = "BAD_USER_INPUT"
	CodeInvalidCursor   Code = "INVALID_CURSOR"
	CodeCursorExpired   Code = "CURSOR_EXPIRED"
	CodeFollowLimit     Code = "FOLLOW_LIMIT"
	CodeRateLimited     Code = "RATE_LIMITED"
	CodeUnavailable     Code = "UNAVAILABLE"
	CodeInternal        Code = "INTERNAL"
)

// Error is a failure the caller can act on: its Message is safe to show.
type Error struct {
	Code    Code
	Message string
	// RetryAfter, for RATE_LIMITED, is how long to wait before retrying.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return e.Message }

func errorf(code Code, format string, args ...any) error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// CodeOf returns the code of err: the Code of an *Error, UNAVAILABLE for a
// Redis that cannot be reached, INTERNAL for anything else.
func CodeOf(err error) Code {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if isUnavailable(err) {
		return CodeUnavailable
	}
	return CodeInternal
}
