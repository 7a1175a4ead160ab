// Package live is the live-stream feed: sessions an anchor schedules,
// starts and ends; each anchor's queue of sessions live now and upcoming;
// the replay timelines, pushed and pulled like posts; and the live feed
// (live now, then upcoming, then replays) paged consistently from a
// snapshot of the anchors the viewer follows.
//
// Its [Service] embeds the timeline (package timeline), whose follows,
// fan-out and filters it uses.
//
// # Invariants
//
//   - Record of truth. A session's hash is its record; the anchor's queue
//     and the replay timelines are settled from it through the journal
//     (kind [JLive]), idempotently, whatever the order of writes.
//   - Snapshot. A first page takes a snapshot of the live and upcoming
//     sessions of the anchors the viewer follows, one per viewer and
//     device; later pages read the same snapshot, so sessions that start or
//     end between pages neither jump nor repeat, and a page past the
//     snapshot's lifetime is CURSOR_EXPIRED. Replays follow the snapshot's
//     sessions, merged like posts.
//   - Stale previews. A preview whose scheduled start is further past than
//     Options.PreviewGrace when the snapshot is taken comes after every
//     timely preview (still before the replays), the longest overdue last;
//     decided once per snapshot, so it never moves within one.
//   - Safety. Every section obeys the viewer's hidden authors and keyword
//     filters (titles), and a suspended anchor's sessions are in no feed.
package live
