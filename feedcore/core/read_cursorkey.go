package core

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// The cursor sealing key, when not configured, lives in Redis and is
// shared by every replica. A Redis that loses its data (a restart without
// persistence, a failover that lost the last writes) loses it too: the next
// replica to start would create another, and replicas would then refuse
// each other's cursors until all restarted. So every replica re-reads the
// shared key now and then, and when a cursor fails to open: a missing key
// is put back (SET NX: the first replica to notice wins), a changed one is
// adopted. Replicas converge on one key within cursorKeyEvery, no restart.

// cursorKeyEvery is how often a replica re-reads the shared key; a cursor
// that fails to open makes it re-read at most once per cursorKeyRetry.
const (
	cursorKeyEvery = 30 * time.Second
	cursorKeyRetry = time.Second
)

// Cursors is the sealer in force. It starts a background re-read of the
// shared key when the last is older than cursorKeyEvery.
func (s *Service) Cursors() *cursor.Sealer {
	if s.fixedKey() {
		return s.Sealer.Load()
	}
	now := time.Now().UnixMilli()
	last := s.keyReadAt.Load()
	if now-last > cursorKeyEvery.Milliseconds() && s.keyReadAt.CompareAndSwap(last, now) {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = s.RefreshCursorKey(ctx)
		}()
	}
	return s.Sealer.Load()
}

// OpenCursor opens raw, a feed's cursor; if it fails, it re-reads the
// shared key (at most once per cursorKeyRetry) and tries once more with a
// key that changed.
func (s *Service) OpenCursor(ctx context.Context, raw string, viewer store.ID) (cursor.Cursor, error) {
	return s.OpenWith(ctx, raw, viewer, (*cursor.Sealer).Open)
}

// OpenWith is openCursor opening with open (a feed's or any cursor).
func (s *Service) OpenWith(ctx context.Context, raw string, viewer store.ID, open func(*cursor.Sealer, string, store.ID) (cursor.Cursor, error)) (cursor.Cursor, error) {
	c, err := open(s.Cursors(), raw, viewer)
	if err == nil || s.fixedKey() {
		return c, err
	}
	now := time.Now().UnixMilli()
	last := s.keyRetryAt.Load()
	if now-last < cursorKeyRetry.Milliseconds() || !s.keyRetryAt.CompareAndSwap(last, now) {
		return c, err
	}
	before := s.Sealer.Load()
	if rerr := s.RefreshCursorKey(ctx); rerr != nil || s.Sealer.Load() == before {
		return c, err
	}
	return open(s.Sealer.Load(), raw, viewer)
}

// RefreshCursorKey re-reads the shared cursor key: puts this replica's key
// back if Redis lost it, adopts another if it changed. A configured
// CursorKey is never replaced.
func (s *Service) RefreshCursorKey(ctx context.Context) error {
	if s.fixedKey() {
		return nil
	}
	s.keyReadAt.Store(time.Now().UnixMilli())
	cur := s.Sealer.Load()
	key := cur.Key()
	got, err := s.sharedCursorKey(ctx, key)
	if err != nil {
		return fmt.Errorf("re-read the shared cursor key: %w", err)
	}
	if bytes.Equal(got, key) {
		return nil
	}
	next, err := cursor.NewSealer(got)
	if err != nil {
		return fmt.Errorf("shared cursor key: %w", err)
	}
	s.Sealer.CompareAndSwap(cur, next)
	return nil
}

// sharedCursorKey returns the key in Redis, storing mine there first if
// there is none (a fresh random key when mine is nil).
func (s *Service) sharedCursorKey(ctx context.Context, mine []byte) ([]byte, error) {
	if mine == nil {
		mine = make([]byte, 32)
		if _, err := rand.Read(mine); err != nil {
			return nil, err
		}
	}
	// SET NX, then GET, in one pipeline on the key's node: the first
	// replica's key wins and everyone reads it.
	rs := s.Redis.DoMulti(ctx, s.Redis.B().Set().Key(s.Keys.CursorKey()).Value(string(mine)).Nx().Build(),
		s.Redis.B().Get().Key(s.Keys.CursorKey()).Build())
	if err := rs[0].Error(); err != nil && !rueidis.IsRedisNil(err) {
		return nil, err
	}
	got, err := rs[1].ToString()
	if err != nil {
		return nil, err
	}
	return []byte(got), nil
}

// fixedKey reports a configured cursor key, which never changes.
func (s *Service) fixedKey() bool { return len(s.Opts.CursorKey) > 0 }
