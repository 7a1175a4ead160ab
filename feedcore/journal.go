package feedcore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/redis/rueidis"
)

// The journal makes mutations that write several Redis Cluster slots
// all-or-nothing without a transaction. Each such mutation has one record
// of truth, changed atomically in one slot (the follower's following set,
// the live session's hash), and derived state elsewhere (the followee's
// followers and active sets and the follower's inbox; an anchor's queue
// and the replay timelines).
//
// A mutation first appends what it is about to change to its shard's
// journal stream, then changes the record of truth, then settles: brings
// the derived state in line with the record as it reads it then, and reads
// it again to check nothing moved meanwhile. Settling is idempotent and
// converges whatever the order. Last, the mutation deletes its journal
// entry. A mutation that dies half way leaves its entry behind; a worker
// settles every entry older than RepairAfter and deletes it. So once the
// system has recovered, a mutation either took effect everywhere or (its
// record of truth unchanged) nowhere.

// Journal entry kinds.
const (
	jEdges = "edges" // field e: follower:followee pairs, comma-separated
	jLive  = "live"  // fields a (anchor) and p (session), or s and q for a new session's id
	jRel   = "rel"   // field p: user:other pairs whose relations changed (safety_settle.go)
	// jAccount (safety_account.go): field u, the deleted user.
	// jSuspend, jTakedown (safety_moderation.go): a suspension's or a
	// takedown's job.
	// jFav (list_favorites.go): field p, user:post pairs whose favorites changed.
)

// maxSettleRounds bounds how often settling re-reads a record of truth
// that keeps changing under it; the journal repairs what is left.
const maxSettleRounds = 4

// begin journals a mutation on shard and returns its entry id.
func (s *Service) begin(ctx context.Context, shard int, fields ...string) (string, error) {
	b := s.Redis.B().Xadd().Key(s.Keys.Journal(shard)).Id("*").FieldValue()
	for i := 0; i+1 < len(fields); i += 2 {
		b = b.FieldValue(fields[i], fields[i+1])
	}
	id, err := s.commit(ctx, nil, nil, nil, b.Build()).ToString()
	if err != nil {
		return "", fmt.Errorf("journal %s: %w", fields[1], err)
	}
	return id, nil
}

// end drops a finished mutation's journal entry. Failing to is harmless: a
// worker settles the entry again, which changes nothing.
func (s *Service) end(ctx context.Context, shard int, id string) {
	s.Do(context.WithoutCancel(ctx), s.Redis.B().Xdel().Key(s.Keys.Journal(shard)).Id(id).Build())
}

func encodeEdges(edges []Edge) string {
	var b strings.Builder
	for i, e := range edges {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(store.FormatID(e.Follower))
		b.WriteByte(':')
		b.WriteString(store.FormatID(e.Followee))
	}
	return b.String()
}

func decodeEdges(s string) ([]Edge, error) {
	var out []Edge
	for _, pair := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(pair, ":")
		f, err1 := strconv.ParseUint(a, 10, 64)
		t, err2 := strconv.ParseUint(b, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w: journal edge %q", errMalformed, pair)
		}
		out = append(out, Edge{Follower: f, Followee: t})
	}
	return out, nil
}

// settleEdges brings the followers side, active sets and inboxes of edges
// in line with the following sets, their record of truth (and the follow
// times kept beside them).
func (s *Service) settleEdges(ctx context.Context, edges []Edge) error {
	var applied []bool
	for range maxSettleRounds {
		truth, times, err := s.following(ctx, edges)
		if err != nil {
			return err
		}
		if applied != nil && slices.Equal(truth, applied) {
			return nil
		}
		var on, off []Edge
		var at []int64
		for i, e := range edges {
			if truth[i] {
				on, at = append(on, e), append(at, times[i])
			} else {
				off = append(off, e)
			}
		}
		if err := s.addFollows(ctx, on, at); err != nil {
			return err
		}
		if err := s.removeFollows(ctx, off); err != nil {
			return err
		}
		applied = truth
	}
	return errors.New("settle follows: the following sets kept changing; the journal repair finishes it")
}

// following reports, for each edge, whether its follower follows its
// followee now, and since when (ms; 0 when no time is kept).
func (s *Service) following(ctx context.Context, edges []Edge) ([]bool, []int64, error) {
	cmds := make([]rueidis.Completed, 0, 2*len(edges))
	for _, e := range edges {
		m := store.Member(e.Followee)
		cmds = append(cmds, s.Redis.B().Zscore().Key(s.Keys.Following(e.Follower)).Member(m).Build(),
			s.Redis.B().Zscore().Key(s.Keys.FollowingTimes(e.Follower)).Member(m).Build())
	}
	rs := s.DoMulti(ctx, cmds...)
	out, at := make([]bool, len(edges)), make([]int64, len(edges))
	for i := range edges {
		var err error
		if out[i], err = store.IsMember(rs[2*i]); err == nil {
			at[i], err = scoreOrZero(rs[2*i+1])
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read following: %w", err)
		}
	}
	return out, at, nil
}

// settleLive brings an anchor's queue and the replay
// timelines in line with the session's hash, its record of truth.
func (s *Service) settleLive(ctx context.Context, anchor, id store.ID) error {
	var applied *LiveSession
	for range maxSettleRounds {
		ls, err := s.LiveSessions(ctx, []store.ID{id})
		if err != nil {
			return fmt.Errorf("settle live session %d: %w", id, err)
		}
		l := ls[0]
		if applied != nil && l != nil && l.State() == applied.State() && l.Cancelled() == applied.Cancelled() {
			return nil
		}
		if err := s.fileLive(ctx, anchor, id, l); err != nil {
			return fmt.Errorf("settle live session %d: %w", id, err)
		}
		if l == nil {
			return nil // never stored: nothing of it may exist
		}
		applied = l
	}
	return fmt.Errorf("settle live session %d: it kept changing; the journal repair finishes it", id)
}

// fileLive files a session where its state belongs: an anchor's queue
// while PREVIEW or LIVE, the replay timelines once ended after starting,
// nowhere when cancelled or missing (l nil).
func (s *Service) fileLive(ctx context.Context, anchor, id store.ID, l *LiveSession) error {
	switch {
	case l == nil || l.Cancelled():
		return s.dequeue(ctx, anchor, id)
	case l.State() == StateReplay:
		if err := s.dequeue(ctx, anchor, id); err != nil {
			return err
		}
		return s.fileReplay(ctx, anchor, store.Item{TS: l.EndedAt.UnixMilli(), ID: id})
	}
	return s.enqueue(ctx, anchor, store.Item{TS: queueScore(l), ID: id})
}

// repairLoop settles the journal entries of mutations that died.
func (s *Service) repairLoop(ctx context.Context, o WorkerOptions) {
	for sleepCtx(ctx, o.RepairAfter/4) {
		for sh := 0; sh < s.o.StreamShards; sh++ {
			if err := s.repairShard(ctx, o, sh); err != nil && ctx.Err() == nil {
				o.Logger.Warn("journal: repair", "shard", sh, "err", err)
			}
		}
	}
}

// repairShard settles and drops shard's journal entries older than
// RepairAfter. Entry ids are the Redis server's clock, so their age is
// measured on the wall clock, not the service's (tests move that one).
func (s *Service) repairShard(ctx context.Context, o WorkerOptions, shard int) error {
	cutoff := time.Now().Add(-o.RepairAfter).UnixMilli()
	entries, err := s.Redis.Do(ctx, s.Redis.B().Xrange().Key(s.Keys.Journal(shard)).Start("-").End(itoa64(cutoff)).
		Count(64).Build()).AsXRange()
	if err != nil {
		return fmt.Errorf("read journal: %w", err)
	}
	for _, e := range entries {
		err := s.repair(ctx, shard, e)
		if errors.Is(err, errMalformed) {
			s.deadLetter(ctx, o, stream{shard: shard, key: s.Keys.Journal(shard), name: "journal"}, e.ID, err.Error())
			continue
		}
		if err != nil {
			return fmt.Errorf("journal entry %s: %w", e.ID, err)
		}
		s.stats.repairs.Add(1)
		o.Logger.Warn("journal: completed a mutation that did not finish", "shard", shard, "id", e.ID, "kind", e.FieldValues["k"])
		s.end(ctx, shard, e.ID)
	}
	return nil
}

func (s *Service) repair(ctx context.Context, shard int, e rueidis.XRangeEntry) error {
	fv := e.FieldValues
	switch fv["k"] {
	case jEdges:
		edges, err := decodeEdges(fv["e"])
		if err != nil {
			return err
		}
		return s.settleEdges(ctx, edges)
	case jRel:
		pairs, err := decodeEdges(fv["p"])
		if err != nil {
			return err
		}
		return s.settleRelations(ctx, pairs)
	case jLive:
		ev, err := parseEvent(map[string]string{"t": jLive, "u": fv["a"], "p": fv["p"], "s": fv["s"], "q": fv["q"]}, shard)
		if err != nil {
			return fmt.Errorf("%w: %w", errMalformed, err)
		}
		return s.settleLive(ctx, ev.User, ev.Item.ID)
	case jAccount:
		return s.repairAccount(ctx, fv)
	case jSuspend:
		return s.repairSuspension(ctx, shard, e)
	case jTakedown:
		return s.repairTakedown(ctx, e)
	case jFav:
		pairs, err := decodeEdges(fv["p"])
		if err != nil {
			return err
		}
		_, err = s.settleFavorites(ctx, pairs, nil)
		return err
	}
	return fmt.Errorf("%w: journal entry kind %q", errMalformed, fv["k"])
}
