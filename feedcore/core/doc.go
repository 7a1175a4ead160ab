// Package core is what every feature of feedcore shares: the service's
// state (options and clock, the cursor sealer, the rate limiter,
// per-process throttles and caches), the event log, the journal, durable
// commits, the worker plumbing, and the timeline scripts the read and
// write paths both use. Features (package feedcore and those above this one) add
// their methods on top of [Service] and register what the core must call
// back ([Service.OnRepair]); the core calls no feature.
//
// # Invariants
//
// Event as log. A publish or delete is committed by appending its event to
// the author's stream shard ([Service.Emit], [LogScript]: a publish's in one
// script with its id from the shard's clock, its idempotency record and its
// rate charge). Nothing is written before; everything after is derived
// from the event by idempotent writes, by the request and again by the
// dispatcher. A tombstone is final.
//
// Journal. A mutation that writes several cluster slots without an event
// has one record of truth changed atomically in one slot. It journals
// itself on its shard first ([Service.Begin]), changes the record, settles
// the rest to match it (idempotent, the record re-read until it stops
// changing, at most [MaxSettleRounds] rounds) and deletes its entry
// ([Service.End]). A worker completes entries older than
// WorkerOptions.RepairAfter with the [RepairFunc] their feature registered
// for their kind; an entry of no registered kind, or one its repair cannot
// read ([ErrMalformed]), goes to the dead letters.
//
// Durable commits. With Options.WaitReplicas set, a mutation's commit write
// ([Service.Commit]) is acknowledged only once that many replicas have it,
// so a master failover cannot lose an acknowledged mutation.
//
// Rate charge. An operation's cost (package ratelimit) rides its first
// Redis call, so checking the allowance costs no round trip; a refused
// operation writes nothing. A durable commit spends it first, since its
// dedicated connection carries no charge.
//
// Inbox horizon. An inbox holds every entry pushed to it at or above its
// horizon: the higher of its cap-th entry and a floor scripts record. The
// horizon only rises, so entries read before the horizon are complete at
// or above it: a feed read seeks its entries (plain commands, the
// timeline's seekCmds; the seek scripts [SeekOlder], [SeekNewer] where
// many entries share the cursor's millisecond) and reads the horizon
// after them, so it knows where the inbox is complete and pulls outboxes
// only below it.
//
// Workers. Each stream shard's events and tasks are read by consumer
// groups, one entry at a time and in order (an upgrade beside the others),
// acknowledged once handled; entries a crashed worker left pending are
// reclaimed after WorkerOptions.ReclaimIdle, and moved to the shard's dead
// letters after WorkerOptions.MaxDeliveries.
package core
