package timeline

import (
	"context"
	"fmt"
	"slices"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// The marks a suspension and a takedown leave on post and session hashes,
// which every read of a post already reads: a suspended author's posts and
// sessions carry sx, so a page leaves them out at no read of its own. The
// moderation (safety_moderation.go) sets and clears them; a post or session
// written while its author's suspension changes (by the dispatcher, an
// import) is marked here, reading the marker again until it stops changing.

// Fields the moderation writes on post and session hashes.
const (
	FieldSuspended      = "sx" // "1" while the author's account is suspended
	FieldTakenDown      = "td" // ms: when an operator took the post down
	FieldTakedownReason = "tr"
)

func (s *Service) MarkCmd(hash string, on bool) rueidis.Completed {
	if !on {
		return s.Redis.B().Hdel().Key(hash).Field(FieldSuspended).Build()
	}
	return markIfExists.Cmd(s.Redis.B(), []string{hash}, []string{FieldSuspended, "1"})
}

// TestHookAfterMarkerRead runs between the read of the markers and the
// write of the marks, where another process's suspension change can land;
// a test replaces it to put one there (the standard library's testHook
// convention: a package variable, never a field of a product type).
var TestHookAfterMarkerRead = func() {}

// MarkSuspended marks the posts or sessions (hashes) of the authors given
// (one each) whose accounts are suspended: what the dispatcher or an
// import writes after a suspension's job has gone by. The items must be
// in their author's lists already (markSources), so that a suspension or
// unsuspension committed after the markers are read has its own job find
// them.
//
// The marker and the item live in different slots, so reading one and
// writing the other cannot be one step: an unsuspension committed between
// them would have its job walk past the item before its mark is written,
// leaving it hidden until the second pass. So, as settleSuspension does,
// every write is followed by a read of the markers, and the marks follow
// again whatever changed meanwhile, until a read confirms what was last
// written. One round trip when no author is suspended, three when some
// are and nothing changes.
func (s *Service) MarkSuspended(ctx context.Context, authors []store.ID, hashes []string) error {
	distinct := slices.Compact(slices.Sorted(slices.Values(authors)))
	if len(distinct) == 0 {
		return nil
	}
	marked := map[store.ID]bool{} // what the marks written so far say: none yet
	for range core.MaxSettleRounds {
		now, err := s.suspendedNow(ctx, distinct)
		if err != nil {
			return err
		}
		TestHookAfterMarkerRead()
		var marks []rueidis.Completed
		for i, a := range authors {
			if now[a] != marked[a] {
				marks = append(marks, s.MarkCmd(hashes[i], now[a]))
			}
		}
		if len(marks) == 0 {
			return nil
		}
		if err := store.FirstErr(s.DoMulti(ctx, marks...)); err != nil {
			return fmt.Errorf("mark items of suspended accounts: %w", err)
		}
		marked = now
	}
	return fmt.Errorf("mark items of suspended accounts: the suspensions kept changing; the second pass finishes it")
}

// suspendedNow reads whether each of users is suspended (its marker).
func (s *Service) suspendedNow(ctx context.Context, users []store.ID) (map[store.ID]bool, error) {
	rs := s.DoMulti(ctx, store.CmdsFor(users, func(a store.ID) rueidis.Completed {
		return s.Redis.B().Exists().Key(s.Keys.Suspended(s.ShardOf(a), a)).Build()
	})...)
	out := make(map[store.ID]bool, len(users))
	for i, r := range rs {
		n, err := r.AsInt64()
		if err != nil {
			return nil, fmt.Errorf("read the suspension of user %d: %w", users[i], err)
		}
		out[users[i]] = n == 1
	}
	return out, nil
}

// MarkSuspendedPosts is markSuspended for posts.
func (s *Service) MarkSuspendedPosts(ctx context.Context, ps []*content.Post) error {
	authors, hashes := make([]store.ID, len(ps)), make([]string, len(ps))
	for i, p := range ps {
		authors[i], hashes[i] = p.Author, s.Keys.Post(p.ID)
	}
	return s.MarkSuspended(ctx, authors, hashes)
}

// markIfExists sets the field ARGV[1] of the hash KEYS[1] to ARGV[2] when
// the hash exists, or deletes the field when ARGV[2] is empty: a mark
// never creates a post or session hash that is not written yet.
var markIfExists = store.NewScript(false, `
if ARGV[2] == '' then return redis.call('HDEL', KEYS[1], ARGV[1]) end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
`)
