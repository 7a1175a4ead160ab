// Package feedcore is feedd's domain: timelines and their order, cursors,
// the hybrid push/pull fan-out, the social graph and reader activity, live
// sessions, safety, lists and moderation, all over Redis. It knows nothing
// of GraphQL.
//
// It is a small facade over layers that the compiler keeps apart: each
// package imports only the ones below it, and each layer's Service embeds
// the one below, so [Service] has every feature's methods while no feature
// can call up. Callers (resolvers, loaders, the commands) use this package
// alone; the names they need from the layers are aliased here (facade.go).
// Service's methods are the layers': `go doc ./feedcore/<layer>` lists
// each layer's own.
//
// # Layers, top down
//
//   - feedcore (this package): [New] stacks the layers; the workers
//     (RunWorkers: the dispatcher, the executors, the clean-up consumer,
//     the reclaimer, the journal repair, the sweeper), Export and Rebuild,
//     which span every feature.
//   - realtime: the subscriptions' updates (the following feed's new
//     post count, the live feed's session changes), presence, and the
//     notices that travel between replicas by sharded pub/sub.
//   - moderation: reports, takedowns, suspensions, the audit trail,
//     account deletion.
//   - lists: favorites, an author's posts, followers and following, the
//     viewer's relations, a post's replies; likes and reposts with their
//     counters; hydration.
//   - safety: blocks, mutes and hides, their settling and clean-up;
//     keyword filters.
//   - live: live sessions, anchors' queues, replays, the live feed from a
//     snapshot.
//   - timeline: follows, fan-out, posts and replies, reader activity, the
//     following feed's read path and the filters every read applies.
//   - core: the state every feature shares (options, clock, caches), the
//     event log, the journal and its repair registry (each layer registers
//     its own kinds), durable commits, the worker plumbing, the timeline
//     scripts, and the kinds of record.
//   - Leaves, used by any layer: store (key names, members, the script
//     runner, error codes), ratelimit (allowances in Redis and the charge
//     that rides an operation's first call), content (what a post is and
//     may contain), cursor (sealed cursors), keyword (keyword matching).
//
// Each package's own doc states its invariants; `go doc` on it renders
// them. The ones that span the layers:
//
// # Invariants
//
// Event as log. A publish or delete is committed by appending its event to
// the author's stream shard; everything after (post hash, outbox, inboxes)
// is derived from the event by idempotent writes, by the request and again
// by the dispatcher. A tombstone is final.
//
// Journal. A mutation that writes several cluster slots without an event
// has one record of truth changed atomically in one slot; it journals
// itself first, changes the record, settles the rest to match it and
// deletes its entry; a worker completes entries older than
// WorkerOptions.RepairAfter with the repair their layer registered.
//
// No feature calls up. A lower layer that needs something of a higher one
// (the journal completing a feature's mutation) gets it registered at
// construction, never by a call, so the layers change independently.
package feedcore
