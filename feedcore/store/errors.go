package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
)

// CodeOf returns the code of err: the Code of an *apierr.Error, UNAVAILABLE for a
// Redis that cannot answer now (see isUnavailable), INTERNAL for anything
// else. It is the one place a store error becomes a client-facing code.
func CodeOf(err error) apierr.Code {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e.Code
	}
	if IsUnavailable(err) {
		return apierr.Unavailable
	}
	return apierr.Internal
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

// IsUnavailable reports errors of a Redis that cannot answer now: a "try
// again" error reply, a connection refused, reset or cut, a timeout or an
// expired deadline, a closing client, or a cluster slot with no node. Every
// one of them is UNAVAILABLE to clients, never INTERNAL. Errors wrapped
// with %w are looked through.
func IsUnavailable(err error) bool {
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
		ErrNotReplicated,
	} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

// Wrap names the operation that failed on a store error, so an INTERNAL or
// UNAVAILABLE in the log says what feedd was doing. An *apierr.Error is left as
// it is: its message is the client's.
func Wrap(err *error, format string, args ...any) {
	if *err == nil {
		return
	}
	var e *apierr.Error
	if errors.As(*err, &e) {
		return
	}
	*err = fmt.Errorf(format+": %w", append(args, *err)...)
}

// ErrNotReplicated: a commit write reached its master but not
// Options.WaitReplicas replicas in time. The write may yet replicate, or
// be lost if the master fails first; a retry is safe (publishes carry an
// idempotency key; the other commits are idempotent), so callers see
// UNAVAILABLE.
var ErrNotReplicated = errors.New("write not confirmed by enough replicas in time")
