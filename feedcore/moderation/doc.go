// Package moderation is the operators' and reporters' side of feedd:
// reports (filed once per reporter and subject, with an allowance of their
// own), takedowns, suspensions, the audit trail of every action, and
// account deletion.
//
// Its [Service] embeds the lists (package lists); the facade (package
// feedcore) embeds it.
//
// # Invariants
//
//   - Markers. A deletion or a suspension is committed by its marker on
//     the user's stream shard, set in one script with its journal entry;
//     from then on the rate charge and the publish log script refuse the
//     account's requests in their own slot, at no round trip of their own.
//   - Jobs. The journaled job of a deletion, suspension or takedown is
//     idempotent and checkpointed; it re-reads its marker until it stops
//     changing, and a second pass catches what requests in flight wrote.
//     The journal completes a job that died (kinds [JAccount], [JSuspend],
//     [JTakedown]).
//   - Marks. A suspended account's posts, sessions and profile carry a
//     mark that every read already reads, so a page costs what it did.
//   - Takedown. A takedown is a delete whose event is appended in one
//     script with its record and its job; a second one changes nothing.
//   - Audit. Every action is appended once to the audit stream.
//   - Outliving Redis. Export, import and rebuild carry deleted accounts,
//     suspensions, takedowns, reports and the audit trail.
package moderation
