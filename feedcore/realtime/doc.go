// Package realtime tells open clients that their feeds changed: the
// "N new posts" pill of the following feed and the live-start alerts of
// the live feed, behind the GraphQL subscriptions followingFeedUpdates and
// liveFeedUpdates. It knows nothing of GraphQL or of the transports.
//
// Its [Service] embeds moderation (package moderation); the facade
// (package feedcore) embeds it.
//
// # How a notice travels
//
// A notice is a hint, never the data: it tells a replica that one of its
// subscribers may have something new, and the replica recounts with the
// same read a page makes, so every rule a page follows (blocks, mutes,
// hides, filters, suspensions, takedowns, replies, repost dedupe) holds
// for the count without a second implementation of it.
//
//   - Presence. A replica marks each viewer with an open subscription
//     present, in sorted sets of a fixed number of buckets (score: when
//     the mark lapses), and renews the marks while the subscription is
//     open. A crashed replica's marks lapse by themselves.
//   - Pushed posts. The fan-out, as it writes a chunk of inboxes, asks
//     which of those readers are present in the same pipeline, and
//     publishes a notice for the present ones only, on their viewer
//     bucket's channel: a post of an author with a million followers of
//     whom a hundred are connected makes about a hundred notices.
//   - Readers merged on read (big-V followees, pending follows) and live
//     sessions. A post of a big-V author, and a live session's change, is
//     published once on the author's bucket channel; a replica subscribes,
//     reference-counted, to the buckets of the authors and anchors its
//     connected viewers follow.
//   - Channels. On Redis (one server or a cluster) notices travel by
//     sharded pub/sub (SPUBLISH/SSUBSCRIBE); a replica holds at most one
//     Redis subscription per bucket and kind, never one per client. The
//     embedded store has no sharded pub/sub: there notices travel inside
//     the one process.
//
// # Guarantees
//
//   - On subscribe, the current count is sent at once when it is above
//     zero, so a reconnecting client misses nothing.
//   - followingFeedUpdates is coalesced: at most one update per
//     Options.MinInterval per subscription. liveFeedUpdates sends every
//     change through a bounded queue; a subscriber that lets it overflow
//     is dropped (its channel closes).
//   - A lost Redis link resubscribes by itself; once a subscription is
//     confirmed again, every affected subscriber is recounted, and Ready
//     reports the link down meanwhile.
//   - An update is a hint: the client recovers everything through the
//     feed's last/before paging and its gap flag.
package realtime
