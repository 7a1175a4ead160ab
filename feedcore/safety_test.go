package feedcore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/safety"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

// hideForTest writes what a relation's settle writes when author becomes
// hidden from viewer until until (ms): the derived sets in each one's
// slot and, when viewer follows author, the viewer's note (the clean-up
// job is queueCleanup's).
func hideForTest(tb testing.TB, s *Service, viewer, author store.ID, until int64) {
	tb.Helper()
	ctx := context.Background()
	b := s.Redis.B()
	cmds := []rueidis.Completed{
		b.Zadd().Key(s.Keys.HiddenAuthors(viewer)).ScoreMember().ScoreMember(float64(until), store.Member(author)).Build(),
		b.Zadd().Key(s.Keys.NoPush(author)).ScoreMember().ScoreMember(float64(until), store.Member(viewer)).Build(),
	}
	follows, err := s.Do(ctx, b.Zscore().Key(s.Keys.Following(viewer)).Member(store.Member(author)).Build()).ToString()
	if err == nil && follows != "" {
		cmds = append(cmds, b.Zadd().Key(s.Keys.HideNotes(viewer)).ScoreMember().ScoreMember(float64(core.RelationForever), store.Member(author)).Build())
	}
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		tb.Fatal(err)
	}
}

// queueCleanup queues the clean-up job of author's items out of viewer's
// feeds, as a relation's settle does.
func queueCleanup(tb testing.TB, s *Service, viewer, author store.ID) {
	tb.Helper()
	err := s.Do(context.Background(), s.Redis.B().Xadd().Key(s.Keys.Cleanup(s.ShardOf(viewer))).Id("*").FieldValue().
		FieldValue("v", store.FormatID(viewer)).FieldValue("a", store.FormatID(author)).FieldValue("t", "hide").Build()).Error()
	if err != nil {
		tb.Fatal(err)
	}
}

// publishN has author publish n posts and returns their ids.
func publishN(tb testing.TB, s *Service, author store.ID, n int) []store.ID {
	tb.Helper()
	ids := make([]store.ID, n)
	for i := range ids {
		p, err := s.Publish(context.Background(), author, "post "+store.Itoa(i))
		if err != nil {
			tb.Fatal(err)
		}
		ids[i] = p.ID
	}
	return ids
}

// newestFirst is ids in feed order (ids grow with time).
func newestFirst(ids ...[]store.ID) []store.ID {
	out := slices.Concat(ids...)
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

// TestHiddenAuthorLeavesAnActiveReadersFeed: an author hidden from an
// active reader (whose inbox is complete) leaves its pages at once, before
// the clean-up, and the pages stay full past the hidden entries with the
// cursor advancing; the clean-up then takes the entries out of the inbox
// and shortens the note; the author's next post is not pushed.
func TestHiddenAuthorLeavesAnActiveReadersFeed(t *testing.T) {
	clk := clockAt(testEpoch)
	st := storetest.New(t)
	s := newService(t, st, Options{Now: clk.now})
	startWorkers(t, s, WorkerOptions{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	follow(t, s, 1, []store.ID{2, 3})
	if err := s.Touch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	older := publishN(t, s, 3, 3)
	publishN(t, s, 2, 30) // hidden below
	newer := publishN(t, s, 3, 3)
	drain(t, s)
	// No clean-up job yet: the read must hide the entries itself.
	hideForTest(t, s, 1, 2, core.RelationForever)
	want := newestFirst(older, newer)
	for _, n := range []int{1, 2, 5} {
		if got := readAll(t, s, 1, n); !slices.Equal(got, want) {
			t.Fatalf("pages of %d after hiding 2: %v, want %v", n, got, want)
		}
	}
	pg, err := s.FollowingFeed(ctx, FeedRequest{Viewer: 1, First: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Edges) != 4 || !pg.HasNext {
		t.Fatalf("a page across 30 hidden posts has %d edges (next %v), want 4 and more", len(pg.Edges), pg.HasNext)
	}
	if got := timelineIDs(t, s, s.Keys.Inbox(1)); len(got) != 36 {
		t.Fatalf("before the clean-up the inbox holds %d entries, want 36", len(got))
	}
	queueCleanup(t, s, 1, 2)
	drain(t, s)
	if n, err := s.CleanupBacklog(ctx); err != nil || n != 0 {
		t.Fatalf("clean-up backlog after draining %d, %v; want 0", n, err)
	}
	if got := timelineIDs(t, s, s.Keys.Inbox(1)); !slices.Equal(got, want) {
		t.Fatalf("after the clean-up the inbox holds %v, want %v", got, want)
	}
	until, err := s.Do(ctx, s.Redis.B().Zscore().Key(s.Keys.HideNotes(1)).Member(store.Member(2)).Build()).AsInt64()
	if err != nil || until != clk.now().Add(core.DefaultCleanupGrace).UnixMilli() {
		t.Fatalf("note after the clean-up ends at %d (%v), want now + grace", until, err)
	}
	late := publishN(t, s, 2, 1)
	drain(t, s)
	if in := timelineIDs(t, s, s.Keys.Inbox(1)); slices.Contains(in, late[0]) {
		t.Fatal("a post of the hidden author was pushed")
	}
	clk.advance(core.DefaultCleanupGrace + time.Second)
	if got := readAll(t, s, 1, 2); !slices.Equal(got, want) {
		t.Fatalf("after the note lapsed: %v, want %v", got, want)
	}
}

// TestHiddenBigVLeavesAMergedFeed: a reader served by merge on read (its
// inbox incomplete, a big-V followee pulled) and below its inbox horizon
// (every followee's outbox pulled) reads neither outbox of a hidden
// followee; the author's posts leave at once and the pages stay full. A
// mute that has ended shows the author again at once.
func TestHiddenBigVLeavesAMergedFeed(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now, BigVThreshold: 1, InboxCap: 4})
	mustUsers(t, s, 1, 2, 3, 4, 5)
	follow(t, s, 1, []store.ID{2, 3, 4})
	follow(t, s, 5, []store.ID{2}) // 2 has two followers: big-V
	drain(t, s)
	var all [][]store.ID
	for range 4 {
		all = append(all, publishN(t, s, 2, 5), publishN(t, s, 3, 2), publishN(t, s, 4, 2))
	}
	drain(t, s)
	if !isBigV(t, s, 2) {
		t.Fatal("2 was not promoted")
	}
	want := newestFirst(all...)
	if got := readAll(t, s, 1, 3); !slices.Equal(got, want) {
		t.Fatalf("before: %v, want %v", got, want)
	}
	hideForTest(t, s, 1, 2, clk.now().Add(time.Hour).UnixMilli()) // a mute of an hour
	hideForTest(t, s, 1, 4, core.RelationForever)
	var visible [][]store.ID
	for i := 1; i < len(all); i += 3 {
		visible = append(visible, all[i])
	}
	for _, n := range []int{1, 3, 7} {
		if got := readAll(t, s, 1, n); !slices.Equal(got, newestFirst(visible...)) {
			t.Fatalf("pages of %d with 2 muted and 4 hidden: %v, want %v", n, got, newestFirst(visible...))
		}
	}
	clk.advance(time.Hour + time.Millisecond) // the mute ends
	for i := 0; i < len(all); i += 3 {
		visible = append(visible, all[i])
	}
	if got := readAll(t, s, 1, 3); !slices.Equal(got, newestFirst(visible...)) {
		t.Fatalf("after the mute ended: %v, want %v", got, newestFirst(visible...))
	}
}

// TestLatePushToAMuterIsHidden: a fan-out that read its targets before a
// mute writes the post after it (and after the clean-up): the reader's
// note hides it. A backfill (an upgrade, a rebuild) never copies a hidden
// author in.
func TestLatePushToAMuterIsHidden(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	follow(t, s, 1, []store.ID{2, 3})
	mine := publishN(t, s, 3, 2)
	drain(t, s)
	p := publishN(t, s, 2, 1)[0]
	hideForTest(t, s, 1, 2, core.RelationForever)
	queueCleanup(t, s, 1, 2)
	drain(t, s)
	post, err := s.Posts(ctx, []store.ID{p})
	if err != nil {
		t.Fatal(err)
	}
	late := s.AppendPush(nil, s.PostsTL(), 1, store.Item{TS: post[0].CreatedAt.UnixMilli(), ID: p}, false)
	if err := store.FirstErr(s.DoMulti(ctx, late...)); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(timelineIDs(t, s, s.Keys.Inbox(1)), p) {
		t.Fatal("the straggler did not reach the inbox")
	}
	if got := readAll(t, s, 1, 5); !slices.Equal(got, newestFirst(mine)) {
		t.Fatalf("feed with a late push of the muted author: %v, want %v", got, newestFirst(mine))
	}
	if err := s.BackfillMany(ctx, []Edge{{Follower: 1, Followee: 2}, {Follower: 1, Followee: 3}}); err != nil {
		t.Fatal(err)
	}
	if got := timelineIDs(t, s, s.Keys.Inbox(1)); len(got) != 3 {
		t.Fatalf("after a backfill the inbox holds %v, want the two of 3 and the straggler", got)
	}
}

// TestSafetyPageCost: a warm followingFeed page of a viewer with 10,000
// blocks and mutes (its hidden authors; two of them followed, muted
// through Mute, their clean-up done and their notes still running) costs
// the same round trips as one with none, and at most twice its reply
// bytes. The bytes are counted on the connection.
func TestSafetyPageCost(t *testing.T) {
	st := storetest.New(t)
	o := Options{}
	s := newService(t, st, o)
	startWorkers(t, s, WorkerOptions{})
	cs, bytes := countedService(t, st, o)
	ctx := context.Background()
	const plain, guarded = store.ID(1), store.ID(2)
	authors := idRange(11, 10)
	mustUsers(t, s, plain, guarded)
	putUsers(t, s, authors)
	follow(t, s, plain, authors)
	follow(t, s, guarded, authors)
	for range 3 {
		for _, a := range authors {
			publishN(t, s, a, 1)
		}
	}
	for _, r := range []store.ID{plain, guarded} {
		if err := s.Touch(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	muted := idRange(31, 2)
	putUsers(t, s, muted)
	follow(t, s, guarded, muted)
	drain(t, s)
	for _, a := range muted {
		publishN(t, s, a, 5) // the newest posts guarded could see
	}
	drain(t, s)
	for _, a := range muted {
		if err := s.Mute(ctx, guarded, a, 0); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	// 9,998 more authors hidden from guarded, none of whom it follows,
	// in one write.
	hx := s.Redis.B().Zadd().Key(s.Keys.HiddenAuthors(guarded)).ScoreMember()
	for i, a := range idRange(100_000, 9_998) {
		until := float64(core.RelationForever)
		if i%2 == 1 {
			until = float64(s.NowMS() + time.Hour.Milliseconds()) // the mutes
		}
		hx = hx.ScoreMember(until, store.Member(a))
	}
	if err := s.Do(ctx, hx.Build()).Error(); err != nil {
		t.Fatal(err)
	}
	cost := func(viewer store.ID) (trips int, n int64) {
		t.Helper()
		if _, err := cs.FollowingFeed(ctx, FeedRequest{Viewer: viewer, First: 20}); err != nil { // warms the cache
			t.Fatal(err)
		}
		rctx, rt := roundtrip.NewContext(ctx)
		before := bytes.Load()
		pg, err := cs.FollowingFeed(rctx, FeedRequest{Viewer: viewer, First: 20})
		if err != nil {
			t.Fatal(err)
		}
		n = bytes.Load() - before
		if len(pg.Edges) != 20 {
			t.Fatalf("viewer %d: page of %d, want 20", viewer, len(pg.Edges))
		}
		return rt.Trips(), n
	}
	baseTrips, base := cost(plain)
	trips, n := cost(guarded)
	t.Logf("warm page: %d round trips, %d reply bytes without safety state; %d, %d with 10,000 blocks and mutes", baseTrips, base, trips, n)
	if trips != baseTrips {
		t.Errorf("with 10,000 blocks and mutes a page costs %d round trips, want %d", trips, baseTrips)
	}
	if n > 2*base {
		t.Errorf("with 10,000 blocks and mutes a page reads %d reply bytes, more than twice %d", n, base)
	}
}

// TestHiddenAnchorLeavesTheLiveFeed: a hidden anchor's sessions never
// enter a new snapshot; an anchor hidden after a snapshot was taken leaves
// its later pages at once, and the clean-up takes its sessions out of the
// snapshot, so they stay out once the note lapses. A first page still
// costs 3 round trips.
func TestHiddenAnchorLeavesTheLiveFeed(t *testing.T) {
	clk := clockAt(testEpoch)
	s := newService(t, storetest.New(t), Options{Now: clk.now})
	startWorkers(t, s, WorkerOptions{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4)
	follow(t, s, 1, []store.ID{2, 3, 4})
	byAnchor := map[store.ID][]store.ID{}
	for i := range 3 {
		for _, a := range []store.ID{2, 3, 4} {
			l, err := s.ScheduleLive(ctx, a, "show", clk.now().Add(time.Duration(10+3*i+int(a))*time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			byAnchor[a] = append(byAnchor[a], l.ID)
		}
	}
	drain(t, s)
	hideForTest(t, s, 1, 2, core.RelationForever)
	anchors := func(pg *LivePage) []store.ID {
		var out []store.ID
		for _, e := range pg.Edges {
			out = append(out, e.Session.Anchor)
		}
		return out
	}
	rctx, rt := roundtrip.NewContext(ctx)
	pg, err := s.LiveFeed(rctx, LiveRequest{Viewer: 1, First: 2})
	if err != nil {
		t.Fatal(err)
	}
	if rt.Trips() > 3 {
		t.Errorf("first live page: %d round trips, want at most 3", rt.Trips())
	}
	if got := anchors(pg); len(got) != 2 || slices.Contains(got, 2) {
		t.Fatalf("first page anchors %v: want two sessions, none of 2", got)
	}
	hideForTest(t, s, 1, 3, core.RelationForever) // after the snapshot, its clean-up not queued yet
	rest := func(after string) []store.ID {
		var out []store.ID
		for after != "" {
			pg, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1, After: after})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, anchors(pg)...)
			if !pg.HasNext {
				break
			}
			after = pg.EndCursor
		}
		return out
	}
	first := anchors(pg)
	if got := rest(pg.EndCursor); slices.Contains(got, 2) || slices.Contains(got, 3) || len(got)+len(first) < 4 {
		t.Fatalf("later pages show anchors %v after %v; want only 4's sessions after the hide", got, first)
	}
	key := s.Keys.Snapshot(1, mustRef(t, s, pg.EndCursor))
	before := snapshotRecords(t, s, key)
	queueCleanup(t, s, 1, 3)
	drain(t, s)
	// The clean-up cleared 3's entries in place: every other entry, and so
	// every cursor, kept its place.
	after := snapshotRecords(t, s, key)
	if len(after) != len(before) {
		t.Fatalf("the clean-up left %d entries of %d: entries moved", len(after), len(before))
	}
	for i, it := range before {
		want := it
		if slices.Contains(byAnchor[3], it.ID) {
			want.ID = 0
		}
		if after[i] != want {
			t.Errorf("entry %d after the clean-up: %+v, want %+v", i, after[i], want)
		}
	}
	clk.advance(core.DefaultCleanupGrace + time.Second)
	if got := rest(pg.EndCursor); slices.Contains(got, 2) || slices.Contains(got, 3) {
		t.Fatalf("once the note lapsed later pages show anchors %v", got)
	}
}

// snapshotRecords reads a stored live snapshot's entries.
func snapshotRecords(t *testing.T, s *Service, key string) []store.Item {
	t.Helper()
	raw, err := s.Redis.Do(context.Background(), s.Redis.B().Get().Key(key).Build()).ToString()
	if err != nil {
		t.Fatalf("read snapshot %q: %v", key, err)
	}
	items, err := core.ParseSnapshot(raw)
	if err != nil {
		t.Fatal(err)
	}
	return items
}

// TestRelationsFilterBothFeedPaths, through the relation mutations: a
// mute takes a pushed author out of an active reader's pages at once and,
// after the clean-up, out of its inbox, and its next post is not pushed; a
// hide takes a big-V author out of a reader served by merge; a block
// takes each side out of the other's feed; unmuting brings the author back.
func TestRelationsFilterBothFeedPaths(t *testing.T) {
	s := testService(t, Options{BigVThreshold: 1})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4, 5)
	follow(t, s, 1, []store.ID{2, 3})
	follow(t, s, 4, []store.ID{2, 3})
	follow(t, s, 5, []store.ID{1})
	if err := s.Touch(ctx, 4); err != nil { // 4 reads its inbox; 1 is served by merge
		t.Fatal(err)
	}
	drain(t, s)
	twos, threes := publishN(t, s, 2, 12), publishN(t, s, 3, 12)
	drain(t, s)
	if !isBigV(t, s, 2) || !isBigV(t, s, 3) {
		t.Fatal("2 and 3 were not promoted")
	}
	for _, r := range []store.ID{1, 4} {
		if got := readAll(t, s, r, 5); !slices.Equal(got, newestFirst(twos, threes)) {
			t.Fatalf("reader %d before: %v", r, got)
		}
	}
	if err := s.Mute(ctx, 4, 3, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.HidePostsFrom(ctx, 2, 1); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, 4, 5); !slices.Equal(got, newestFirst(twos)) {
		t.Fatalf("active reader 4 after muting 3: %v, want 2's only", got)
	}
	if got := readAll(t, s, 1, 5); !slices.Equal(got, newestFirst(threes)) {
		t.Fatalf("merged reader 1 after 2 hid from it: %v, want 3's only", got)
	}
	drain(t, s)
	if in := timelineIDs(t, s, s.Keys.Inbox(4)); !slices.Equal(in, newestFirst(twos)) {
		t.Fatalf("4's inbox after the clean-up: %v, want 2's only", in)
	}
	late := publishN(t, s, 3, 1)
	drain(t, s)
	if slices.Contains(timelineIDs(t, s, s.Keys.Inbox(4)), late[0]) {
		t.Fatal("the muted author's new post was pushed")
	}
	if err := s.Unmute(ctx, 4, 3); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	if got := readAll(t, s, 4, 5); !slices.Equal(got, newestFirst(twos, threes, late)) {
		t.Fatalf("4 after unmuting 3: %v", got)
	}
	mine := publishN(t, s, 1, 2)
	drain(t, s)
	if err := s.Block(ctx, 5, 1); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, 5, 5); len(got) != 0 {
		t.Fatalf("5 after blocking 1 still sees %v (of %v)", got, mine)
	}
}

// queuedCleanups reads the clean-up jobs queued on viewer's shard, as the
// worker parses them.
func queuedCleanups(tb testing.TB, s *Service, viewer store.ID) []safety.CleanupJob {
	tb.Helper()
	es, err := s.Redis.Do(context.Background(), s.Redis.B().Xrange().Key(s.Keys.Cleanup(s.ShardOf(viewer))).Start("-").End("+").Build()).AsXRange()
	if err != nil {
		tb.Fatal(err)
	}
	out := make([]safety.CleanupJob, len(es))
	for i, e := range es {
		if out[i], err = safety.ParseCleanupJob(e.FieldValues); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}

// TestStaleCleanupKeepsANewMutesNote: a clean-up job of a mute straddles
// an unmute and a mute again of the pair: its inbox step runs before the
// unmute (which backfills the author's post), its note step after the new
// mute. It must leave the new mute's note alone, so the post stays hidden
// however long the new job waits; the new job then shortens it.
func TestStaleCleanupKeepsANewMutesNote(t *testing.T) {
	clk := clockAt(testEpoch)
	s := newService(t, storetest.New(t), Options{Now: clk.now})
	stop := startWorkers(t, s, WorkerOptions{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	follow(t, s, 1, []store.ID{2, 3})
	if err := s.Touch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	other := publishN(t, s, 3, 1)
	muted := publishN(t, s, 2, 1)
	drain(t, s)
	stop() // the jobs are run by hand below, in the straddling order
	note := func() int64 { return zscores(t, s, s.Keys.HideNotes(1))[2] }

	if err := s.Mute(ctx, 1, 2, 0); err != nil {
		t.Fatal(err)
	}
	jobs := queuedCleanups(t, s, 1)
	if len(jobs) != 1 || jobs[0].Note != safety.NoteToken(clk.now().UnixMilli()) || note() != jobs[0].Note {
		t.Fatalf("after the mute: jobs %+v, note %d; want one carrying the note's token", jobs, note())
	}
	old := jobs[0]
	if err := s.CleanFeeds(ctx, old); err != nil { // the old job's inbox step
		t.Fatal(err)
	}
	if got := timelineIDs(t, s, s.Keys.Inbox(1)); slices.Contains(got, muted[0]) {
		t.Fatalf("inbox after the old job's inbox step %v still holds %d", got, muted[0])
	}
	clk.advance(time.Second)
	if err := s.Unmute(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	if got := timelineIDs(t, s, s.Keys.Inbox(1)); !slices.Contains(got, muted[0]) {
		t.Fatalf("inbox after the unmute %v, want %d backfilled", got, muted[0])
	}
	clk.advance(time.Second)
	if err := s.Mute(ctx, 1, 2, 0); err != nil {
		t.Fatal(err)
	}
	token := note()
	if jobs := queuedCleanups(t, s, 1); len(jobs) != 2 || jobs[1].Note != token || token == old.Note {
		t.Fatalf("after the mute again: jobs %+v, note %d; want a second carrying the new token", jobs, token)
	}
	if err := s.ShortenNote(ctx, old); err != nil { // the old job's note step
		t.Fatal(err)
	}
	if got := note(); got != token {
		t.Fatalf("the old job changed the new mute's note from %d to %d", token, got)
	}
	// The new job waits past the grace (a backlog): the post stays hidden.
	clk.advance(core.DefaultCleanupGrace + time.Minute)
	want := other
	if got := readAll(t, s, 1, 2); !slices.Equal(got, want) {
		t.Fatalf("feed while the new job waits: %v, want %v", got, want)
	}
	if err := s.CleanUp(ctx, queuedCleanups(t, s, 1)[1]); err != nil {
		t.Fatal(err)
	}
	if got := note(); got != clk.now().Add(core.DefaultCleanupGrace).UnixMilli() {
		t.Fatalf("note after the new job %d, want now + grace", got)
	}
	if got := timelineIDs(t, s, s.Keys.Inbox(1)); slices.Contains(got, muted[0]) {
		t.Fatalf("inbox after the new job %v still holds %d", got, muted[0])
	}
	clk.advance(core.DefaultCleanupGrace + time.Second)
	if got := readAll(t, s, 1, 2); !slices.Equal(got, want) {
		t.Fatalf("feed after the note lapsed: %v, want %v", got, want)
	}
}

// A job queued without a token (before tokens) parses with none, so it
// shortens whatever note it finds as it always did (queueCleanup's jobs in
// TestHiddenAuthorLeavesAnActiveReadersFeed); a malformed token is refused.
func TestLegacyCleanupJobShortensAnyNote(t *testing.T) {
	j, err := safety.ParseCleanupJob(map[string]string{"v": "1", "a": "2", "t": "hide"})
	if err != nil || j != (safety.CleanupJob{Viewer: 1, Author: 2}) {
		t.Fatalf("legacy job parsed as %+v, %v", j, err)
	}
	if _, err := safety.ParseCleanupJob(map[string]string{"v": "1", "a": "2", "n": "x"}); err == nil {
		t.Fatal("a job with a malformed token parsed")
	}
}
