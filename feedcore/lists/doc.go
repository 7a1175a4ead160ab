// Package lists holds every list feedd pages besides the feeds, and what
// a page's items carry: a user's favorites, an author's posts, followers
// and following, the viewer's blocks, mutes and hides, a post's replies;
// likes and reposts with their counters; and hydration, which reads the
// viewer's flags and the counters of a page's posts and authors in one
// round trip.
//
// Its [Service] embeds the safety rules (package safety): every list obeys
// them.
//
// # Invariants
//
//   - Cost. Every list pages one sorted set from its cursor by rank, so a
//     page costs its size, never the list's; the reads that filter it ride
//     its first round trip.
//   - Cursors. A list's cursors are sealed with the list's kind and owner
//     (package cursor) and open nothing else.
//   - Safety. Lists obey the feeds' rules (blocks, mutes, hides, keyword
//     filters, suspensions), read in their first round trip; a suspended
//     account is in no follower list and its own lists are empty.
//   - Favorites. A user's favorites are the record, in the user's slot;
//     who favorited a post, and its counter, are settled from it through
//     the journal (kind [JFav]).
//   - Reposts. A repost is an item of its own, committed by an event with
//     the reposter's record; the original's set of reposts and its counter
//     are moved once by scripts in the original's slot and keep what was
//     taken back, so a late write cannot undo it.
package lists
