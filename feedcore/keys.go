package feedcore

import "strconv"

// keys names every Redis key. Per-user keys carry the user id as a hash tag,
// so one user's inbox, outbox, graph and reader state share a Redis Cluster
// slot and may be touched by one script.
type keys struct{ p string }

func (k keys) tag(id ID) string { return "{" + strconv.FormatUint(id, 10) + "}" }

func (k keys) user(id ID) string         { return k.p + "u:" + k.tag(id) }  // hash: profile
func (k keys) handle(h string) string    { return k.p + "h:" + h }          // string: handle -> id
func (k keys) following(id ID) string    { return k.p + "fg:" + k.tag(id) } // zset(0, member): followees
func (k keys) followers(id ID) string    { return k.p + "fr:" + k.tag(id) } // zset(0, member): followers
func (k keys) active(id ID) string       { return k.p + "ac:" + k.tag(id) } // zset(0, member): active followers of a big-V
func (k keys) inbox(id ID) string        { return k.p + "i:" + k.tag(id) }  // zset(ts, member): pushed timeline
func (k keys) outbox(id ID) string       { return k.p + "o:" + k.tag(id) }  // zset(ts, member): own posts, all of them
func (k keys) reader(id ID) string       { return k.p + "rs:" + k.tag(id) } // hash: complete flag, inbox horizon
func (k keys) pushMode(id ID) string     { return k.p + "pm:" + k.tag(id) } // string: "active" once a big-V pushes selectively
func (k keys) lock(id ID) string         { return k.p + "lk:" + k.tag(id) } // string: serialises upgrade and demotion
func (k keys) post(id ID) string         { return k.p + "p:" + k.tag(id) }  // hash: post
func (k keys) bigV() string              { return k.p + "bigv" }            // set(member): authors readers pull
func (k keys) seen() string              { return k.p + "seen" }            // zset(last read ms, member)
func (k keys) replayInbox(id ID) string  { return k.p + "ri:" + k.tag(id) } // zset(ended ms, member): pushed replays
func (k keys) replayOutbox(id ID) string { return k.p + "ro:" + k.tag(id) } // zset(ended ms, member): an anchor's replays
func (k keys) replayReader(id ID) string { return k.p + "rr:" + k.tag(id) } // hash: replay inbox horizon
func (k keys) live(id ID) string         { return k.p + "ls:" + k.tag(id) } // hash: live session
func (k keys) liveQueue(id ID) string    { return k.p + "lq:" + k.tag(id) } // zset(+started or -scheduled, member): an anchor's LIVE and PREVIEW sessions
func (k keys) liveAnchors() string       { return k.p + "lanchors" }        // set(member): anchors with a non-empty queue
func (k keys) snapshot(viewer ID, snap string) string {
	return k.p + "lsn:" + k.tag(viewer) + ":" + snap // zset: a live feed snapshot
}
func (k keys) liveDevices(viewer ID) string {
	return k.p + "lsd:" + k.tag(viewer) // zset(taken ms, ref+device): each device's live feed snapshot
}
func (k keys) rateLimit(id ID) string { return k.p + "rl:" + k.tag(id) } // string: GCRA arrival time
func (k keys) rateLimitAddr(addr string) string {
	return k.p + "rla:" + addr // string: GCRA arrival time of a client address
}
func (k keys) cursorKey() string { return k.p + "ckey" }    // shared cursor sealing key
func (k keys) rebuild() string   { return k.p + "rebuild" } // hash: phase, last: where an unfinished rebuild stopped

// Stream shards. Everything one shard's scripts touch together carries the
// shard's hash tag, so a Redis Cluster keeps it in one slot: the events
// stream, the tasks stream of the events queued there, the dead letters,
// the journal, the id clock, checkpoints and idempotency records.
func (k keys) shard(n int) string       { return k.p + "fo:{s" + itoa(n) + "}:" }
func (k keys) events(n int) string      { return k.shard(n) + "ev" }  // stream: publish/delete/replay/activate/promote
func (k keys) tasks(n int) string       { return k.shard(n) + "tk" }  // stream: fan-out tasks
func (k keys) deadLetters(n int) string { return k.shard(n) + "dl" }  // stream: entries given up on
func (k keys) journal(n int) string     { return k.shard(n) + "jn" }  // stream: multi-slot mutations in flight
func (k keys) clock(n int) string       { return k.shard(n) + "clk" } // hash m, n: the shard's last id time and count
func (k keys) checkpoint(n int, name string) string {
	return k.shard(n) + "ck:" + name // string: how far an event or task got
}
func (k keys) idempotency(n int, user ID, key string) string {
	return k.shard(n) + "idem:" + FormatID(user) + ":" + key // string: the post a publish with this key made
}
