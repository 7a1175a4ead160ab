// Package store is the core every part of feedcore stands on: the name of
// every Redis key, ids and their 8-byte sorted-set members, Lua scripts run
// inside ordinary pipelines, and the mapping of store errors to the codes
// clients see. It knows no feature of its own.
//
// # Invariants
//
//   - Keys. Per-user keys carry the user's id as a hash tag, so one user's
//     inbox, outbox, graph and reader state share a Redis Cluster slot and
//     one script may touch them together. Every key name is spelled once,
//     in [Keys]; scans and batches derive a kind's prefix from its method
//     ([TagHead]).
//   - Members. Ids in sorted sets are 8 big-endian bytes ([Member]): byte
//     order is numeric order, and an entry stays within a listpack's
//     budget.
//   - Scripts. A [Script] is sent by its hash (EVALSHA) inside the same
//     pipeline as the commands around it, so it costs no round trip of its
//     own; [Store.DoMulti] loads the scripts where a server answers
//     NOSCRIPT (first use, restart, failover) and resends only those
//     calls, since the others ran and some must not run twice.
//   - Errors. [CodeOf] is the one place a store error becomes a client
//     code: a Redis that cannot answer now is UNAVAILABLE (a retry is
//     safe), anything else unexpected INTERNAL. [Wrap] names the operation
//     that failed, leaving client errors as they are.
package store
