// Package timeline is the following feed: follows and the social graph,
// posts and replies as they are published and deleted, the hybrid
// push/pull fan-out into inboxes, reader activity (who is active, the
// upgrade of a returning reader), and the read path that merges a page
// from the inbox and the outboxes below its horizon, with the filters
// every read applies (hidden authors, keyword filters, suspensions).
//
// Its [Service] embeds the shared core (package core); the features above
// it (live, safety, lists, moderation) embed it in turn.
//
// # Invariants
//
//   - Inbox horizon. Reads take the inbox above its horizon and pull every
//     followee's outbox (and the reader's own) below it, so a feed never
//     ends at the inbox's cap; the horizon only rises.
//   - Big-V. An author over the threshold is big-V, for good: its posts
//     are pushed only to its active followers, and a reader whose inbox is
//     not complete pulls its big-V followees' outboxes and merges.
//     Promotion notes the author in every follower's set and builds the
//     active set before the fan-out switches to it, so no reader misses a
//     post.
//   - Follows. The follower's following set is the record of truth; the
//     followee's followers, active set and the follower's inbox are
//     settled from it through the journal (kind [JEdges]), idempotently.
//   - Hidden authors. What a viewer must not see is derived into the
//     viewer's own slot, so a page filters in its first round trip and a
//     push skips in the author's; every check compares an end with the
//     service clock, so an ended mute shows the author again at once.
//   - Never the same post twice. Which replies and reposts a viewer sees,
//     and which reposts the dedupe window leaves out, is decided at read
//     time over the merged feed, so push and pull agree.
//   - Suspension marks. A post or session written while its author's
//     suspension changes is marked after reading the marker again until it
//     stops changing, so no interleaving leaves a stale mark.
package timeline
