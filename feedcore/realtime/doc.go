// Package realtime tells open clients that their feeds changed: the
// "N new posts" pill of the following feed and the live-start alerts of
// the live feed, behind the GraphQL subscriptions followingFeedUpdates and
// liveFeedUpdates. It knows nothing of GraphQL or of the transports.
//
// Its [Service] embeds moderation (package moderation); the facade
// (package feedcore) embeds it. [New] installs its publisher in the core
// (core.Service.SetNotifier): the layers below ask it which readers are
// present and tell it what changed, without importing it.
//
// # How a notice travels
//
// A notice is a hint, never the data: it tells a replica that one of its
// subscribers may have something new, and the replica recounts with the
// same read a page makes, so every rule a page follows (blocks, mutes,
// hides, filters, suspensions, takedowns, replies, repost dedupe) holds
// for the count without a second implementation of it.
//
//   - Presence. A replica marks each viewer with a following feed
//     subscription open present, in the sorted set of its bucket (one of
//     store.PresenceBuckets; score: when the mark lapses), renews its
//     marks every 20 s (a mark lapses after a minute), and takes a mark
//     back with the viewer's last subscription there unless another
//     replica renewed it since. A crashed replica's marks lapse by
//     themselves; the fan-out ignores a lapsed mark.
//   - Pushed posts. Once Redis confirmed a chunk's inbox writes, the
//     fan-out asks which of those readers are present (ZMSCORE, one per
//     presence set the chunk touches, at most 8) in its next pipeline,
//     and publishes one notice per viewer bucket (channel) naming the
//     present ones in the one after: realtime rides the fan-out's
//     pipelines, and costs a round trip of its own only after a task's
//     last chunk when it had readers present. Not in the chunk's own
//     pipeline: on a Redis Cluster its writes may land, on other nodes,
//     after the answer and after a subscriber's first count. So:
//     a post of an author with a million followers of whom a hundred are
//     connected makes about a hundred notices. A presence set always
//     holds one long member, which keeps it out of the listpack encoding
//     whose lookups scan it (presence.go). A removal (a delete, a
//     takedown) names the post; an undone repost names none. A dispatch
//     tells the author itself when present (its own inbox is written at
//     publish, never by the fan-out), asked in its first round trip.
//   - Readers merged on read and live sessions. A post of a big-V author
//     (pushed to its active followers alone) is published once on its
//     author bucket's channel; a live session's change once on its
//     anchor bucket's channel. A replica subscribes, reference-counted,
//     to the buckets of the big-V followees and pending follows of its
//     following subscribers, and of the anchors its live subscribers
//     follow (timeline's Followed, less those hidden from them).
//   - Changes of what a viewer sees. A follow, an unfollow, a block, a
//     mute, a hide (both sides) and a keyword filter tell the viewer on
//     its bucket's channel: its subscriptions read its follows again,
//     recount and read its screen again. An account's first live session
//     tells its followers, whose live subscriptions then follow its
//     channel. A suspension, an unsuspension or an account deletion
//     travels on the moderation channel, which every running replica
//     holds: the account's posts may be in any feed (by a repost), so
//     every following subscription recounts.
//   - Channels. On Redis (one server or a cluster) notices travel by
//     sharded pub/sub (SPUBLISH/SSUBSCRIBE, each bucket's channel in its
//     own slot); a replica holds at most one Redis subscription per
//     bucket and kind, never one per client, and drops it with its last
//     local subscriber. The embedded store has no sharded pub/sub: there
//     notices travel inside the one process, on a bus the services of one
//     store share. core.Options.Notices chooses; by default a publish
//     assumes sharded pub/sub until the server answers it has none (so no
//     request waits on the question), and a replica that starts listening
//     asks.
//
// # Guarantees
//
//   - On subscribe, the subscription is registered and its viewer marked
//     present before it counts: a post fanned out after the mark is told
//     to it, one before is in the count. The count is sent at once when
//     above zero, so a reconnecting client misses nothing.
//   - The count is the page's: the pages of last/before since, up to
//     MaxCount items, exact up to MaxCount. Its authors are the distinct
//     authors of the newest counted items (a repost's reposter, whom the
//     viewer follows); past MaxCount, of the newest page from the top.
//   - DeletedPostIDs are those removal notices name, and the posts the
//     subscription saw (the new ones it counted, the viewer's screen at
//     and below since) that its next read no longer shows where it would:
//     a post newly hidden from the viewer is reported as one deleted.
//   - followingFeedUpdates is coalesced: at most one update per
//     Options.MinInterval per subscription, and only when the count, the
//     authors or the posts that left changed. liveFeedUpdates sends every
//     change of a session its viewer's live feed shows (live's
//     ShownSessions, the rule of every live page), in the state the
//     session is in when read, through a queue of Options.LiveQueue; a
//     subscriber that lets it overflow is dropped (its channel closes).
//   - A lost Redis link resubscribes by itself: the receive is looped.
//     Every confirmation of a subscription recounts every subscriber the
//     channel serves (live ones read their anchors' queued sessions), a
//     catch-up for what was published before it; each after the first is
//     counted (Stats.Resubscribes). RealtimeReady reports the
//     subscriptions down meanwhile.
//   - An update is a hint: the client recovers everything through the
//     feed's last/before paging and its gap flag.
//
// Not told: a mute that ends by its time, and a keyword filter that
// expires (the viewer's next notice recounts).
package realtime
