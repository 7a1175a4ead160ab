package store

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
)

// Most reads and writes of a batch (ids, edges, streams) are one command
// per item, sent as one pipeline (doMulti), their replies read in the same
// order.

// CmdsFor is the command cmd builds for each of xs, in order.
func CmdsFor[T, C any](xs []T, cmd func(T) C) []C {
	cmds := make([]C, len(xs))
	for i, x := range xs {
		cmds[i] = cmd(x)
	}
	return cmds
}

// ParseEach reads each of xs (replies, members) with parse, in order; the
// first error stops it.
func ParseEach[S, T any](xs []S, parse func(S) (T, error)) ([]T, error) {
	out := make([]T, len(xs))
	for i, x := range xs {
		v, err := parse(x)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

// IsMember reads a ZSCORE reply: whether the member is in the set.
func IsMember(r rueidis.RedisResult) (bool, error) {
	_, err := r.AsFloat64()
	if rueidis.IsRedisNil(err) {
		return false, nil
	}
	return err == nil, err
}

// Single is the one value of a batch read of id (vs, err), or NOT_FOUND
// naming what was looked for when it does not exist.
func Single[T any](vs []*T, err error, what string, id ID) (*T, error) {
	if err != nil {
		return nil, err
	}
	if vs[0] == nil {
		return nil, apierr.Errorf(apierr.NotFound, "no %s with id %d", what, id)
	}
	return vs[0], nil
}

// ScoreArg writes a sorted-set score argument.
func ScoreArg(ts int64) string { return strconv.FormatInt(ts, 10) }

func Itoa(n int) string { return strconv.Itoa(n) }

// first returns the first error among results, ignoring nil replies.
func FirstErr(rs []rueidis.RedisResult) error {
	for _, r := range rs {
		if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
			return err
		}
	}
	return nil
}

// Batch is one pipeline of several reads, each added with the parser of
// its own replies: a read is one call to Add, commands and parser
// together, and Parse hands each parser exactly its replies, in order. A
// new read is then a change in one place, never a matter of positions.
type Batch struct {
	cmds  []rueidis.Completed
	reads []batchRead
}

type batchRead struct {
	n     int
	parse func([]rueidis.RedisResult) error
}

// Grow makes room for cmds more commands in reads more reads, so a batch
// whose size is known allocates once.
func (b *Batch) Grow(cmds, reads int) {
	b.cmds = slices.Grow(b.cmds, cmds)
	b.reads = slices.Grow(b.reads, reads)
}

// Add appends cmds (none is allowed) and the parser of their replies.
func (b *Batch) Add(cmds []rueidis.Completed, parse func([]rueidis.RedisResult) error) {
	b.cmds = append(b.cmds, cmds...)
	b.reads = append(b.reads, batchRead{n: len(cmds), parse: parse})
}

// Cmds are the commands added, in order.
func (b *Batch) Cmds() []rueidis.Completed { return b.cmds }

// Parse runs each read's parser on its replies; the first error stops it.
func (b *Batch) Parse(rs []rueidis.RedisResult) error {
	if len(rs) != len(b.cmds) {
		return fmt.Errorf("batch of %d commands got %d replies", len(b.cmds), len(rs))
	}
	for _, r := range b.reads {
		if err := r.parse(rs[:r.n]); err != nil {
			return err
		}
		rs = rs[r.n:]
	}
	return nil
}
