package core

import (
	"context"
	"errors"
	"fmt"
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

// Journal entry kinds are the features' own: each registers how its
// entries are repaired (OnRepair) when the service is made, so the journal
// knows none of them.

// A RepairFunc completes the mutation that a journal entry of its kind
// records, as the mutation would have: it settles what the entry names
// (idempotently) and returns ErrMalformed (wrapped) for an entry it cannot
// read, which goes to the dead letters.
type RepairFunc func(ctx context.Context, shard int, e rueidis.XRangeEntry) error

// RepairPairs is the RepairFunc of a kind whose entries name pairs of
// users (or a user and a post) in field, as EncodeEdges writes them: the
// pairs settle again, as the mutation that died would have settled them.
func RepairPairs(field string, settle func(context.Context, []Edge) error) RepairFunc {
	return func(ctx context.Context, _ int, e rueidis.XRangeEntry) error {
		pairs, err := DecodeEdges(e.FieldValues[field])
		if err != nil {
			return err
		}
		return settle(ctx, pairs)
	}
}

// OnRepair registers how the journal's repair completes entries of kind.
// Register every kind before the workers start.
func (s *Service) OnRepair(kind string, f RepairFunc) { s.repairs[kind] = f }

// MaxSettleRounds bounds how often settling re-reads a record of truth
// that keeps changing under it; the journal repairs what is left.
const MaxSettleRounds = 4

// Begin journals a mutation on shard and returns its entry id.
func (s *Service) Begin(ctx context.Context, shard int, fields ...string) (string, error) {
	b := s.Redis.B().Xadd().Key(s.Keys.Journal(shard)).Id("*").FieldValue()
	for i := 0; i+1 < len(fields); i += 2 {
		b = b.FieldValue(fields[i], fields[i+1])
	}
	id, err := s.Commit(ctx, nil, nil, nil, b.Build()).ToString()
	if err != nil {
		return "", fmt.Errorf("journal %s: %w", fields[1], err)
	}
	return id, nil
}

// End drops a finished mutation's journal entry. Failing to is harmless: a
// worker settles the entry again, which changes nothing.
func (s *Service) End(ctx context.Context, shard int, id string) {
	s.EndTelling(ctx, shard, id)
}

// EndTelling is End telling realtime subscribers of ns (Notify) in the
// same round trip: the mutation has settled, so what they recount shows
// it.
func (s *Service) EndTelling(ctx context.Context, shard int, id string, ns ...Notice) {
	notices, told := s.NoticeCmds(ns...)
	rs := s.DoMulti(context.WithoutCancel(ctx), append([]rueidis.Completed{s.Redis.B().Xdel().Key(s.Keys.Journal(shard)).Id(id).Build()}, notices...)...)
	told(rs[1:])
}

func EncodeEdges(edges []Edge) string {
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

func DecodeEdges(s string) ([]Edge, error) {
	var out []Edge
	for _, pair := range strings.Split(s, ",") {
		a, b, ok := strings.Cut(pair, ":")
		f, err1 := strconv.ParseUint(a, 10, 64)
		t, err2 := strconv.ParseUint(b, 10, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%w: journal edge %q", ErrMalformed, pair)
		}
		out = append(out, Edge{Follower: f, Followee: t})
	}
	return out, nil
}

// RepairLoop settles the journal entries of mutations that died.
func (s *Service) RepairLoop(ctx context.Context, o WorkerOptions) {
	for SleepCtx(ctx, o.RepairAfter/4) {
		for sh := 0; sh < s.Opts.StreamShards; sh++ {
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
	entries, err := s.Redis.Do(ctx, s.Redis.B().Xrange().Key(s.Keys.Journal(shard)).Start("-").End(Itoa64(cutoff)).
		Count(64).Build()).AsXRange()
	if err != nil {
		return fmt.Errorf("read journal: %w", err)
	}
	for _, e := range entries {
		err := s.Repair(ctx, shard, e)
		if errors.Is(err, ErrMalformed) {
			s.deadLetter(ctx, o, Stream{Shard: shard, Key: s.Keys.Journal(shard), Name: "journal"}, e.ID, err.Error())
			continue
		}
		if err != nil {
			return fmt.Errorf("journal entry %s: %w", e.ID, err)
		}
		s.Counters.Repairs.Add(1)
		o.Logger.Warn("journal: completed a mutation that did not finish", "shard", shard, "id", e.ID, "kind", e.FieldValues["k"])
		s.End(ctx, shard, e.ID)
	}
	return nil
}

func (s *Service) Repair(ctx context.Context, shard int, e rueidis.XRangeEntry) error {
	if f, ok := s.repairs[e.FieldValues["k"]]; ok {
		return f(ctx, shard, e)
	}
	return fmt.Errorf("%w: journal entry kind %q", ErrMalformed, e.FieldValues["k"])
}
