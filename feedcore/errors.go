package feedcore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/redis/rueidis"
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
// Redis that cannot answer now (see isUnavailable), INTERNAL for anything
// else. It is the one place a store error becomes a client-facing code.
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

// retryReplies are the first words of the error replies with which Redis or
// Redis Cluster says "not now, try again": the same command can succeed
// later without anything changing on the client's side.
var retryReplies = map[string]bool{
	"CLUSTERDOWN": true, // the cluster (or this slot's shard) is down
	"TRYAGAIN":    true, // a multi-key command during resharding of its slot
	"MOVED":       true, // redirects rueidis gave up following: topology in motion
	"ASK":         true,
	"LOADING":     true, // the server is loading its dataset after a restart
	"MASTERDOWN":  true, // a replica lost its master and serves no stale data
	"READONLY":    true, // a write reached a master demoted to replica by a failover
	"BUSY":        true, // a script or function runs past its time limit
	"NOREPLICAS":  true, // min-replicas-to-write is not met
	"UNBLOCKED":   true, // a blocked command unblocked by a role change
	"MISCONF":     true, // the server refuses writes after a failed RDB save
	"OOM":         true, // over maxmemory: writes refused until memory frees
}

// isUnavailable reports errors of a Redis that cannot answer now: a "try
// again" error reply, a connection refused, reset or cut, a timeout or an
// expired deadline, a closing client, or a cluster slot with no node. Every
// one of them is UNAVAILABLE to clients, never INTERNAL. Errors wrapped
// with %w are looked through.
func isUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var re *rueidis.RedisError
	if errors.As(err, &re) {
		if re.IsNil() {
			return false
		}
		word, _, _ := strings.Cut(re.Error(), " ")
		return retryReplies[word]
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true // refused, reset, unreachable, i/o timeout, closed
	}
	for _, target := range []error{
		io.EOF, io.ErrUnexpectedEOF, net.ErrClosed,
		syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.ECONNABORTED, syscall.EPIPE,
		syscall.ETIMEDOUT, syscall.EHOSTUNREACH, syscall.ENETUNREACH,
		context.DeadlineExceeded, context.Canceled,
		rueidis.ErrClosing, rueidis.ErrNoSlot, rueidis.ErrNoAddr, rueidis.ErrDoCacheAborted,
		errNotReplicated,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// wrap names the operation that failed on a store error, so an INTERNAL or
// UNAVAILABLE in the log says what feedd was doing. An *Error is left as
// it is: its message is the client's.
func wrap(err *error, format string, args ...any) {
	if *err == nil {
		return
	}
	var e *Error
	if errors.As(*err, &e) {
		return
	}
	*err = fmt.Errorf(format+": %w", append(args, *err)...)
}
