// Package feedcore is feedd's domain: timelines and their order, cursors,
// the hybrid push/pull fan-out, the social graph and reader activity, all
// over Redis. It knows nothing of GraphQL.
//
// The concerns call one another (the journal settles follows, follows
// backfill inboxes, activity upgrades readers, workers materialize posts),
// so they share one package and one [Service]; files are named for what
// they do, grouped by prefix.
//
// # Where things are
//
//   - Read path: read_feed.go (FollowingFeed: the reader's view, the scan
//     across the inbox horizon, page and cursors; fill, the page filler
//     of every list within the read bound), read_merge.go (k-way
//     merge), read_timeline.go (posts and replays as one machinery),
//     read_hydrate.go (Hydrate, cached posts), read_cursorkey.go (the
//     cursor key shared in Redis; the sealed cursors are package cursor),
//     read_activity.go (Touch, upgrade, Sweep, the reader locks).
//   - Live: live_session.go (ScheduleLive and the window of a scheduled
//     start, StartLive, EndLive, PutLive, anchor queues), live_feed.go
//     (LiveFeed paging), live_snapshot.go (take, reuse, one snapshot per
//     device).
//   - Fan-out: fanout_dispatch.go (events into tasks, promotion, task
//     execution, inbox writes).
//   - Journal and events: events.go (event streams, the log script, ids
//     from a shard's clock), journal.go (begin, settle, repair),
//     durability.go (commit, WAIT for replicas).
//   - Follows: follows.go (Follow, Unfollow, backfill).
//   - Posts: posts.go (PublishPost and checkNewPost, Delete, Posts); what
//     a post is and may contain is the package content (Post, media, the
//     text and URL rules, how content is stored), whose Post, Media,
//     MediaKind and kinds facade.go keeps as aliases.
//   - Likes: likes.go (Like, Unlike, LikeMany, counters).
//   - Reposts: repost_write.go (Repost, UndoRepost, PutReposts: the
//     commit with the reposter's record, the record's materialization,
//     the original's set of reposts, taking back the reposts of a deleted
//     post, Reposted), repost_list.go (the reposts among a list's items,
//     shown as their originals).
//   - Replies: reply_write.go (who may reply, the parent's set of replies
//     and comments counter, recounting), reply_list.go (Replies: a post's
//     replies, oldest first).
//   - Read path, items: read_items.go (which posts, replies and reposts a
//     viewer may see: the reply rule, both authors of a repost),
//     read_dedupe.go (never the same post twice: the window over the
//     merged feed; collectFeed).
//   - Users: users.go (profiles, handles, counts).
//   - Safety: safety_relations.go (Block, Mute, HidePostsFrom and their
//     undoing: the record's commit; a like across a block), safety_settle.go
//     (settling a pair: mirrors, hidden authors, no-push sets, follows
//     removed, inbox clean-up queued, backfill), safety_list.go
//     (RelationFlags, Blocked, RelationList, PutRelations),
//     safety_account.go (DeleteAccount: the gone marker and the journaled
//     job, its phases; held handles; deleted accounts for export and
//     import).
//   - Rate limit: ratelimit.go (GCRA in Redis; a Charge rides the first
//     pipeline, and a viewer's checks the account is not deleted, with the
//     limit on or off), throttle.go (per-process throttles of activity writes).
//   - Lists: list_page.go (list cursors bound to kind and owner, the
//     seek by rank, collecting a page past filtered entries, separations),
//     list_favorites.go (FavoritePost, Favorites, Favorited, their
//     settle, import, export, rebuild and counters), list_author.go
//     (AuthorPosts), list_follows.go (Followers, Following, follow times;
//     a suspended account left out by its profile's mark).
//   - Ops: ops_export.go (Export), ops_rebuild.go (Rebuild), ops_scan.go
//     (walking every record of a kind).
//   - Safety: safety_filter.go (reads and fan-out leave out authors hidden
//     from a viewer, in the round trips they already make; the page's read
//     of the viewer's keyword filters rides the same script),
//     safety_cleanup.go (the clean-up worker: a hidden author's items out
//     of a viewer's inboxes and live snapshots, CleanupBacklog),
//     safety_keyword.go (keyword filters: the record and its version
//     token, add, remove, list, what a page reads of them, import, export,
//     rebuild); normalization and matching are package keyword.
//   - Moderation: safety_report.go (Report: filed once per reporter and
//     subject, its own allowance; Reports, ResolveReport, the audit
//     stream: AuditLog, appendAudit; their import), safety_moderation.go
//     (Takedown, Suspend, Unsuspend: commits on the shard, journaled jobs,
//     the marks on posts and sessions, second passes; their export and
//     import; finishJobs for Rebuild).
//   - Workers: workers.go (RunWorkers: consumers, reclaim, dead letters,
//     Backlog, Drain).
//   - Storage: the package store below (every key name, 8-byte members,
//     the script runner, batch commands and replies, CodeOf and Wrap);
//     here scripts.go (the seek and inbox scripts shared by the read and
//     write paths), options.go, service.go (Service, which embeds the
//     store), model.go (the domain's types), facade.go (the lower packages'
//     ids, codes and posts under feedcore's names).
//
// # Invariants
//
// Event as log. A publish or delete is committed by appending its event to
// the author's stream shard (a publish's in one script with its id from the
// shard's clock, its idempotency record and its rate charge). Nothing is
// written before; everything after (post hash, outbox, own inbox, followers'
// inboxes) is derived from the event by idempotent writes, by the request
// and again by the dispatcher. A tombstone is final.
//
// Journal. A mutation that writes several cluster slots without an event
// (follow, unfollow, the live mutations, favorites) has one record of
// truth changed atomically in one slot (the following set, the session's
// hash, the user's favorites). It
// journals itself on its shard first, changes the record, settles the rest
// to match it (idempotent, the record re-read until it stops changing) and
// deletes its entry; a worker settles entries older than
// WorkerOptions.RepairAfter.
//
// Inbox horizon. An inbox holds every entry pushed to it at or above its
// horizon: the higher of its cap-th entry (once it holds cap entries) and a
// floor scripts record (before a removal shrinks a full inbox, after a
// partial backfill). The horizon only rises. Reads take the inbox above it
// and pull every followee's outbox (and the reader's own) below it, so the
// feed never ends at the cap.
//
// Big-V. An author over the threshold is big-V, for good. Its posts are
// pushed only to its active followers (its active set); a reader whose
// inbox is not complete pulls its big-V followees' outboxes (its set of
// big-V followees) and merges. A reader is active when it read within
// Options.ActiveWindow; a returning reader is served by merge and upgraded
// in the background (join the active sets, backfill, mark complete); the
// sweeper demotes quiet readers (incomplete first, then out of the active
// sets). Promotion notes the author in every follower's set and builds the
// active set before the fan-out switches to it, so no reader misses a post.
//
// Hidden authors. What a viewer must not see (blocks either way, its
// mutes, hides against it) is derived into the viewer's own slot (hidden
// authors, with when each ends; notes of followed ones until their
// clean-up) and, transposed, into each author's (readers not pushed to).
// A page filters its big-V and following sets and skips noted authors in
// its first round trip, a push skips in the author's slot, a backfill in
// the reader's; a clean-up job takes entries already pushed out. Every
// check compares the end with the service clock, so an ended mute shows
// the author again at once.
//
// Reposts and replies. A repost is an item of its own (its own id and
// time, a record in the post keyspace naming its original), committed by
// an event with the reposter's record and derived like a post; the
// original's set of reposts and a parent's set of replies, with their
// counters, are moved once by scripts in the original's or parent's slot
// and keep what was taken back, so a late write cannot undo it. Which
// replies and reposts a viewer sees, and which reposts the window leaves
// out, is decided at read time over the merged feed, so push and pull
// agree.
//
// Keyword filters. A viewer's filters are one record in its slot, with a
// token that every change replaces and that never repeats. A page's first
// round trip sends the token of the set this process compiled (kept in a
// bounded LRU) and gets the list back only when it changed: no copy is
// ever stale, no round trip is added, a warm page reads a few bytes more.
// A filter's end is compared with the service clock on every page; the
// viewer's own posts are never filtered.
//
// Deleted accounts. A deletion is committed by its gone marker, set in one
// script with its journal entry on the user's stream shard; from then on
// every operation of the user is refused (the charge's script and the
// publish log script read the marker in their own slot), and the journaled
// job, idempotent and checkpointed in the marker, takes everything of the
// account away. The marker stays: export and import carry it.
//
// Suspended accounts. A suspension is committed the same way, by its
// marker on the user's stream shard (deleted again by unsuspending), so
// the charge and the log script refuse the account's requests with
// FORBIDDEN at no round trip of their own; its journaled job marks each of
// its posts and sessions (field sx on their hashes), which reads already
// read, so a page costs what it did; the job re-reads the marker until it
// stops changing, and a second pass marks what requests in flight wrote.
// A takedown is a delete whose event is appended in one script with its
// record and its job. Every moderation action is appended once to the
// audit stream.
//
// Lists. Every list (favorites, an author's posts, followers, following,
// the viewer's relations) pages one sorted set from its cursor by rank, so
// a page costs its size, never the list's; its cursors are sealed with the
// list's kind and owner and open nothing else. Lists obey the feeds'
// safety rules (blocks, mutes, hides, keyword filters, suspensions: see
// Separations in list_page.go), read in their first round trip.
package feedcore
