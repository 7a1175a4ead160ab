package store

import (
	"strconv"
	"strings"
)

// Keys names every Redis key. Per-user keys carry the user id as a hash tag,
// so one user's inbox, outbox, graph and reader state share a Redis Cluster
// slot and may be touched by one script.
type Keys struct{ Prefix string }

func (k Keys) Tag(id ID) string { return "{" + strconv.FormatUint(id, 10) + "}" }

// tagged is k.p + kind + k.tag(id), built in one allocation: a page names
// a hundred or so of these keys.
func (k Keys) tagged(kind string, id ID) string {
	var buf [96]byte
	b := append(buf[:0], k.Prefix...)
	b = append(b, kind...)
	b = append(b, '{')
	b = strconv.AppendUint(b, id, 10)
	b = append(b, '}')
	return string(b)
}

func (k Keys) User(id ID) string         { return k.tagged("u:", id) }  // hash: profile
func (k Keys) Handle(h string) string    { return k.Prefix + "h:" + h } // string: handle -> id
func (k Keys) Following(id ID) string    { return k.tagged("fg:", id) } // zset(0, member): followees
func (k Keys) Followers(id ID) string    { return k.tagged("fr:", id) } // zset(0, member): followers
func (k Keys) Active(id ID) string       { return k.tagged("ac:", id) } // zset(0, member): active followers of a big-V
func (k Keys) Dormant(id ID) string      { return k.tagged("df:", id) } // zset(0, member): followers gone dormant, whom the fan-out skips (a zset: small ones are listpacks, a set of 8-byte members a hashtable)
func (k Keys) Inbox(id ID) string        { return k.tagged("i:", id) }  // zset(ts, member): pushed timeline
func (k Keys) Outbox(id ID) string       { return k.tagged("o:", id) }  // zset(ts, member): own posts, all of them
func (k Keys) Reader(id ID) string       { return k.tagged("rs:", id) } // hash: complete flag, inbox horizon
func (k Keys) PushMode(id ID) string     { return k.tagged("pm:", id) } // string: "pull" once big-V (readers pull), "active" once it pushes selectively
func (k Keys) Post(id ID) string         { return k.tagged("p:", id) }  // hash: post: a author, t ms, x text, d "1" once deleted, m media (content.EncodeMedia), cw content warning
func (k Keys) BigFollowees(id ID) string { return k.tagged("bf:", id) } // set(member): big-V accounts a reader follows
func (k Keys) Unfollowed(id ID) string   { return k.tagged("uf:", id) } // zset(ms, member): accounts a reader unfollowed lately
func (k Keys) ReplayInbox(id ID) string  { return k.tagged("ri:", id) } // zset(ended ms, member): pushed replays
func (k Keys) ReplayOutbox(id ID) string { return k.tagged("ro:", id) } // zset(ended ms, member): an anchor's replays
func (k Keys) ReplayReader(id ID) string { return k.tagged("rr:", id) } // hash: replay inbox horizon
func (k Keys) Live(id ID) string         { return k.tagged("ls:", id) } // hash: live session: a anchor, t title, s/b/e scheduled/started/ended ms, cv cover URL
func (k Keys) LiveQueue(id ID) string    { return k.LiveQueueIn(LiveShardOf(id), id) }

// The anchors a reader follows (live_anchors.go): the replay timeline's
// followees, whose queues a first live page reads and whose replay outboxes
// a read below the replay inbox's horizon pulls. Derived, like the big-V
// followees: a follow adds the followee once it is marked an anchor, and
// marking one adds it to every follower's set, each only while the
// follower still follows it; the follow's settle takes it out again.
func (k Keys) FollowedAnchors(id ID) string { return k.tagged("fa:", id) } // zset(0, member): anchors a reader follows
func (k Keys) AnchorMark(id ID) string      { return k.tagged("an:", id) } // string "1": the user has had a live session (sticky), in its followers set's slot

// PendingFollows are a reader's follows that answered before they
// settled (timeline/follows.go): followee members, scored with the
// follow's ms. Until a follow's settle backfills the inbox and clears its
// mark, the reader's pages merge the followee's outbox; in the reader's
// slot, so the page's first round trip reads it with the reader's state.
func (k Keys) PendingFollows(id ID) string { return k.tagged("pf:", id) } // zset(followed ms, member)

// When each follow was made (list_follows.go), beside the graph's sets,
// whose scores stay 0 (the fan-out pages followers by member): fgt in
// the follower's slot, written by the follow's own script with fg; frt in
// the followee's slot, settled with fr. A list checks each entry against
// fg or fr in the same script, so an entry a settle has yet to remove
// never shows.
func (k Keys) FollowingTimes(id ID) string { return k.tagged("fgt:", id) } // zset(followed ms, member): followees, when followed
func (k Keys) FollowerTimes(id ID) string  { return k.tagged("frt:", id) } // zset(followed ms, member): followers, when they followed

// Favorites (list_favorites.go): the record is the user's own list, in
// the user's slot; who favorited a post is settled from it, through the
// journal, into the post's slot, with the post's favorites counter.
func (k Keys) Favorites(id ID) string    { return k.tagged("fv:", id) }    // zset(favorited ms, post member): a user's favorites (record)
func (k Keys) Favoriters(post ID) string { return k.tagged("pfv:", post) } // set(member): who favorited a post (settled)

// Relations between people (safety_*.go). Records are what a user set,
// in the user's own slot; mirrors and derived sets are written by the
// relation's settle, through the journal, into the slot of the user whose
// reads or pushes they steer, so a page and a push read only their own
// slot. Scores "until" are ms, relationForever for no end.
func (k Keys) Blocks(id ID) string        { return k.tagged("bk:", id) }  // zset(created ms, member): users id blocks (record)
func (k Keys) Mutes(id ID) string         { return k.tagged("mu:", id) }  // zset(created ms, member): users id mutes (record)
func (k Keys) MuteEnds(id ID) string      { return k.tagged("mue:", id) } // zset(until ms, member): when each of id's mutes ends
func (k Keys) Hides(id ID) string         { return k.tagged("hd:", id) }  // zset(created ms, member): users id hides its posts from (record)
func (k Keys) BlockedBy(id ID) string     { return k.tagged("bb:", id) }  // zset(created ms, member): users who block id (mirror)
func (k Keys) HiddenAuthors(id ID) string { return k.tagged("hx:", id) }  // zset(until ms, member): authors hidden from id's feeds (derived)
func (k Keys) NoPush(id ID) string        { return k.tagged("nx:", id) }  // zset(until ms, member): readers id's posts are not pushed to (derived)
func (k Keys) HideNotes(id ID) string     { return k.tagged("xn:", id) }  // zset(until ms, member): followed authors hidden at read until cleaned up

// A user's keyword filters (safety_keyword.go), in the user's slot: the
// record, and the token of its version, replaced on every change (never
// reused), that pages compare with the filters a replica has compiled.
func (k Keys) KeywordFilters(id ID) string { return k.tagged("kf:", id) }  // hash(filter id, "w created expires keyword"): filters (record)
func (k Keys) KeywordVersion(id ID) string { return k.tagged("kfv:", id) } // string(8 random bytes): the filters' version; absent with no filter
func (k Keys) Snapshot(viewer ID, snap string) string {
	return k.Prefix + "lss:" + k.Tag(viewer) + ":" + snap // string(16-byte records, core.AppendSnapshot): a live feed snapshot
}
func (k Keys) LiveDevices(viewer ID) string {
	return k.Prefix + "lsd:" + k.Tag(viewer) // zset(taken ms, ref+device): each device's live feed snapshot
}
func (k Keys) RateLimitAddr(addr, kind string) string {
	return withKind(k.Prefix+"rla:"+addr, kind) // string: GCRA arrival time of a client address
}
func (k Keys) PersistedQuery(hash string) string {
	return k.Prefix + "apq:" + hash // string: a persisted query's text, by its SHA-256 (persisted.go)
}

// withKind names a separate allowance of the same subject beside key
// (Subject.Kind); an empty kind is the operations' allowance, key itself.
func withKind(key, kind string) string {
	if kind == "" {
		return key
	}
	return key + ":" + kind
}

// A reader's upgrade/demotion lock is taken with rueidislock, which spells
// its key itself: KeyPrefix (lockPrefix), ":", the key's index (0: a lock
// is one key, KeyMajority 1), ":" and the lock's name (lockName, the
// reader's hash tag, so the key sits in the reader's slot). lock is that
// key: string(random token), with a TTL the holder extends.
func (k Keys) LockPrefix() string    { return k.Prefix + "lk" }
func (k Keys) LockName(id ID) string { return k.Tag(id) }
func (k Keys) Lock(id ID) string     { return k.LockPrefix() + ":0:" + k.LockName(id) }

// Seen is one shard of the activity index: readers' last reads. A reader
// belongs to the shard activityShard gives; each shard has its own hash
// tag, so the shards spread over a cluster's slots.
func (k Keys) Seen(shard int) string { return k.Prefix + "seen:{a" + Itoa(shard) + "}" } // zset(last read ms, member)

// Quiet is the shard of the activity index beside Seen (the same slot)
// that holds the readers demoted for quiet, by their last read, until they
// read again or go dormant.
func (k Keys) Quiet(shard int) string { return k.Prefix + "quiet:{a" + Itoa(shard) + "}" } // zset(last read ms, member)

func (k Keys) CursorKey() string { return k.Prefix + "ckey" }    // shared cursor sealing key
func (k Keys) Rebuild() string   { return k.Prefix + "rebuild" } // hash: phase, last: where an unfinished rebuild stopped

// Stream shards. Everything one shard's scripts touch together carries the
// shard's hash tag, so a Redis Cluster keeps it in one slot: the events
// stream, the tasks stream of the events queued there, the dead letters,
// the journal, the id clock, checkpoints and idempotency records.
func (k Keys) shard(n int) string       { return k.Prefix + "fo:{s" + Itoa(n) + "}:" }
func (k Keys) Events(n int) string      { return k.shard(n) + "ev" }  // stream: publish/delete/replay/activate/promote
func (k Keys) Tasks(n int) string       { return k.shard(n) + "tk" }  // stream: fan-out tasks
func (k Keys) DeadLetters(n int) string { return k.shard(n) + "dl" }  // stream: entries given up on
func (k Keys) Journal(n int) string     { return k.shard(n) + "jn" }  // stream: multi-slot mutations in flight
func (k Keys) Cleanup(n int) string     { return k.shard(n) + "cl" }  // stream: inbox clean-ups of authors newly hidden (fields v, a, t)
func (k Keys) MuteTimers(n int) string  { return k.shard(n) + "me" }  // zset(until ms, "viewer:author"): mutes of the shard's viewers that end
func (k Keys) Clock(n int) string       { return k.shard(n) + "clk" } // hash m, n: the shard's last id time and count

// Gone marks a deleted account, on its stream shard (safety_account.go):
// hash at (deleted ms), h (handle), ph (the deletion job's next phase).
// Kept for good: the shard's scripts that admit the user's requests (the
// rate charge, the log script) find it in their own slot.
func (k Keys) Gone(n int, id ID) string { return k.shard(n) + "gone:" + FormatID(id) }

// AccountSweeps is when each deletion committed on shard n (zset: commit
// ms by the server's clock, user id) is owed its second pass, which
// catches what requests in flight at the commit wrote after the job.
func (k Keys) AccountSweeps(n int) string { return k.shard(n) + "acs" }

// Moderation (safety_moderation.go). A suspension's marker sits on the
// user's stream shard beside gone, for the same reason: the scripts that
// admit the user's requests (the rate charge, the log script) read it in
// their own slot. Hash at (suspended ms), r (reason), o (operator); it
// exists while the account is suspended, and unsuspend deletes it.
func (k Keys) Suspended(n int, id ID) string { return k.shard(n) + "sus:" + FormatID(id) }

// SuspendSweeps is when each suspension or unsuspension committed on
// shard n (zset: commit ms by the server's clock, user id) is owed its
// second pass, as accountSweeps.
func (k Keys) SuspendSweeps(n int) string { return k.shard(n) + "sss" }

// SuspendCheckpoint is where a journaled suspension job stands (string
// "state source ts id": the marks it is setting, and the last item done).
func (k Keys) SuspendCheckpoint(n int, entry string) string { return k.shard(n) + "ck:sus:" + entry }

// TakenDown is a takedown's commit record (string: taken-down ms), on the
// post's author's stream shard, set in one script with its delete event:
// a second takedown of the post finds it and changes nothing.
func (k Keys) TakenDown(n int, post ID) string { return k.shard(n) + "td:" + FormatID(post) }

// Reports and the moderation audit trail share one slot (hash tag {rp}):
// a report's idempotency check and its append, and a resolve with its
// audit entry, are each one script. Reports are rare (a person files
// them, rate limited per reporter) and read only by operators, so one
// slot carries them easily and is on no path of reads, publishes or
// fan-out.
func (k Keys) mod() string         { return k.Prefix + "mod:{rp}:" }
func (k Keys) Reports() string     { return k.mod() + "rp" } // stream: reports, fields r (reporter), s (subject), n (reason), c (comment); the entry id is the report id
func (k Keys) ReportIndex() string { return k.mod() + "ix" } // hash: "reporter subject" -> report id
func (k Keys) ReportState() string { return k.mod() + "st" } // hash: report id -> resolved ms (open reports have none)
func (k Keys) Audit() string       { return k.mod() + "au" } // stream: moderation actions, fields t (ms), o (operator), a (action), s (subject), r (reason)
func (k Keys) AuditDone() string   { return k.mod() + "ad" } // set: actions already in the audit stream (a job appends once)
func (k Keys) EventCheckpoint(n int, entry string) string {
	return k.shard(n) + "ck:ev:" + entry // string: the lower bound of the event's next task
}
func (k Keys) TaskCheckpoint(n int, entry string) string {
	return k.shard(n) + "ck:tk:" + entry // string: the last target the task wrote
}

// RepostRecord is user's repost of post, on user's stream shard n: the
// string "c ms count" (the repost's id as the shard's clock handed it out)
// or "g id ms" (an imported one). Its existence makes repost idempotent;
// undoing the repost deletes it, in one script with each event.
func (k Keys) RepostRecord(n int, user, post ID) string {
	return k.shard(n) + "rp:" + FormatID(user) + ":" + FormatID(post)
}
func (k Keys) Idempotency(n int, user ID, key string) string {
	return k.shard(n) + "idem:" + FormatID(user) + ":" + key // string: the post a publish with this key made
}

// RateLimitIn is a viewer's GCRA arrival time (string), on the viewer's
// stream shard n: a publish's log script spends the charge and appends
// the event in one step, so the rate check costs no round trip of its own
// and a refused publish writes nothing (posts.go logPublish).
func (k Keys) RateLimitIn(n int, viewer ID, kind string) string {
	return withKind(k.shard(n)+"rl:"+FormatID(viewer), kind)
}

// LiveShards is how many slots the anchors' live queues are spread over.
// A first live page reads the queues of the anchors its viewer follows
// with one script per live shard holding any of them, in one round trip:
// no single key is on that path, and its cost follows the followees, not
// the network. Fixed, because an anchor's queue key depends on it; a
// change needs `feedd rebuild` (which refiles every queued session).
const LiveShards = 16

// LiveShardOf is the live shard of an anchor's queue.
func LiveShardOf(anchor ID) int { return Spread(anchor, LiveShards) }

// Spread maps id to one of n shards (Fibonacci hashing: ids that are
// near one another land on different shards).
func Spread(id ID, n int) int { return int((id * 0x9E3779B97F4A7C15 >> 32) % uint64(n)) }

// LiveQueueIn is the queue of anchor on live shard n: zset(+started or
// -scheduled, member) of its LIVE and PREVIEW sessions. The tag is the
// shard's, not the anchor's, so one script reads many anchors' queues.
func (k Keys) LiveQueueIn(n int, anchor ID) string {
	return k.Prefix + "lq:{l" + Itoa(n) + "}:" + FormatID(anchor)
}

// Realtime (package realtime): who has a subscription open, and the
// shard channels notices travel on between replicas. Both are bucketed,
// each bucket with a hash tag of its own: RealtimeBuckets buckets of
// viewers and as many of authors and anchors for the channels, so a
// replica holds at most one Redis subscription per bucket and kind,
// whatever its clients; PresenceBuckets presence sets. The channels hold
// no data: a notice only says whom to recount.
const RealtimeBuckets = 64

// RealtimeBucket is the realtime bucket of a viewer, author or anchor.
func RealtimeBucket(id ID) int { return Spread(id, RealtimeBuckets) }

func (k Keys) rt(bucket int) string { return k.Prefix + "rt:{r" + Itoa(bucket) + "}:" }

// PresenceBuckets is how many presence sets viewers are spread over:
// fewer than the channels' buckets, because every chunk of a fan-out
// asks each set its readers fall in (one ZMSCORE each): 8 keep that to
// at most 8 commands beside a chunk's 500 writes, and to about 7 beside
// a small post's 20, while still spreading the sets over a cluster.
const PresenceBuckets = 8

// PresenceBucket is the presence set of a viewer.
func PresenceBucket(id ID) int { return Spread(id, PresenceBuckets) }

// Presence is a presence set: zset(lapse ms, member) of the viewers of
// its bucket (PresenceBucket) with a following feed subscription open on
// some replica, the score when the mark lapses unless renewed.
func (k Keys) Presence(bucket int) string { return k.Prefix + "rt:{p" + Itoa(bucket) + "}:pr" }

// ViewerChannel carries the notices for the viewers of bucket (posts
// pushed to those present, removals, changes of their follows and
// relations).
func (k Keys) ViewerChannel(bucket int) string { return k.rt(bucket) + "v" }

// AuthorChannel carries the posts and removals of the big-V authors of
// bucket, published once for every reader merged on read.
func (k Keys) AuthorChannel(bucket int) string { return k.rt(bucket) + "a" }

// AnchorChannel carries the live session changes of the anchors of
// bucket.
func (k Keys) AnchorChannel(bucket int) string { return k.rt(bucket) + "l" }

// ModerationChannel carries suspensions and unsuspensions, which every
// replica serving subscriptions hears (they are rare).
func (k Keys) ModerationChannel() string { return k.Prefix + "rt:{m}:m" }

// Engagement keys share the post's hash tag, so the like script may touch
// the post, its likers and its counters together on a Redis Cluster.
// Counters live apart from the post hash: a like must not invalidate the
// client-side cached copies of a hot post on every replica.
func (k Keys) Likers(post ID) string     { return k.tagged("pl:", post) } // set(member): who liked a post
func (k Keys) PostCounts(post ID) string { return k.tagged("pc:", post) } // hash l, c, r, f: a post's counters; lb, fb: their imported bases (SetCounts)

// Conversations and reposts (reply_*.go, repost_*.go) keep their per-post
// sets in the post's slot too: a reply or repost moves its parent's or
// original's set and counter in one script, and a repost's script sees
// the original's tombstone in the same step.
func (k Keys) Reposts(post ID) string { return k.tagged("rb:", post) } // hash(reposter member -> "+"/"-" and repost member): reposts of a post, live (+) or taken back (-)
func (k Keys) Replies(post ID) string { return k.tagged("rl:", post) } // zset(created ms, member): replies of a post; a deleted one stays at score -1

// TagHead is what every key keyOf names has before its id: k.p, the
// kind and "{". keyOf is one of the per-id key methods above (k.tagged).
// Scans for a kind of key (scanIDs) and the fan-out's batch of inbox keys
// (inboxKeys) derive it from the method, so a key's name is spelled once.
func TagHead(keyOf func(ID) string) string {
	key := keyOf(0)
	return key[:strings.LastIndexByte(key, '{')+1]
}
