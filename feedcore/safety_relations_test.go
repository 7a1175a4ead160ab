package feedcore

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/safety"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"

	"github.com/feedd/feedd/apierr"
)

// zscores reads a sorted set of the test's as member id -> score.
func zscores(tb testing.TB, s *Service, key string) map[store.ID]int64 {
	tb.Helper()
	items, err := core.ParseEntries(s.Do(context.Background(), s.Redis.B().Zrange().Key(key).Min("0").Max("-1").Withscores().Build()))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[store.ID]int64{}
	for _, it := range items {
		out[it.ID] = it.TS
	}
	return out
}

// Bad input: oneself, a negative duration, an unknown user; the limit,
// which a repeat at the limit passes.
func TestRelationInput(t *testing.T) {
	s := testService(t, Options{MaxRelations: 2})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4)
	wantCode(t, "block oneself", s.Block(ctx, 1, 1), apierr.BadInput)
	wantCode(t, "mute oneself", s.Mute(ctx, 1, 1, 0), apierr.BadInput)
	wantCode(t, "hide from oneself", s.HidePostsFrom(ctx, 1, 1), apierr.BadInput)
	wantCode(t, "negative mute", s.Mute(ctx, 1, 2, -time.Second), apierr.BadInput)
	wantCode(t, "block a stranger", s.Block(ctx, 1, 99), apierr.NotFound)
	if err := s.Block(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Mute(ctx, 1, 3, time.Hour); err != nil {
		t.Fatal(err)
	}
	err := s.HidePostsFrom(ctx, 1, 4)
	wantCode(t, "past the limit", err, apierr.BadInput)
	if !strings.Contains(err.Error(), "--max-blocks") {
		t.Errorf("limit error %q does not name --max-blocks", err)
	}
	for _, again := range []func() error{
		func() error { return s.Block(ctx, 1, 2) },
		func() error { return s.Mute(ctx, 1, 3, 2*time.Hour) },
	} {
		if err := again(); err != nil {
			t.Fatalf("repeat at the limit: %v", err)
		}
	}
	if got := zscores(t, s, s.Keys.Hides(1)); len(got) != 0 {
		t.Fatalf("refused hide recorded: %v", got)
	}
	if err := s.Unmute(ctx, 1, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.HidePostsFrom(ctx, 1, 4); err != nil {
		t.Fatalf("hide after an unmute made room: %v", err)
	}
}

// The records and the sets derived from them, in both users' slots, for
// each control; repeating a mutation changes nothing, and undoing it
// leaves nothing behind.
func TestRelationSets(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	now := clk.now().UnixMilli()
	check := func(what string, want map[string]map[store.ID]int64) {
		t.Helper()
		for name, key := range map[string]string{
			"bk:1": s.Keys.Blocks(1), "bb:2": s.Keys.BlockedBy(2), "hx:1": s.Keys.HiddenAuthors(1), "hx:2": s.Keys.HiddenAuthors(2),
			"nx:1": s.Keys.NoPush(1), "nx:2": s.Keys.NoPush(2), "hd:1": s.Keys.Hides(1), "mu:1": s.Keys.Mutes(1), "mue:1": s.Keys.MuteEnds(1),
			"bb:1": s.Keys.BlockedBy(1), "bk:2": s.Keys.Blocks(2),
		} {
			got := zscores(t, s, key)
			w := want[name]
			if len(got) != len(w) {
				t.Fatalf("%s: %s = %v, want %v", what, name, got, w)
			}
			for id, sc := range w {
				if got[id] != sc {
					t.Fatalf("%s: %s = %v, want %v", what, name, got, w)
				}
			}
		}
	}
	for range 2 { // the second time changes nothing
		if err := s.Block(ctx, 1, 2); err != nil {
			t.Fatal(err)
		}
		check("block", map[string]map[store.ID]int64{"bk:1": {2: now}, "bb:2": {1: now},
			"hx:1": {2: core.RelationForever}, "hx:2": {1: core.RelationForever}, "nx:1": {2: core.RelationForever}, "nx:2": {1: core.RelationForever}})
	}
	if err := s.Unblock(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	check("unblock", nil)
	end := now + time.Hour.Milliseconds()
	for range 2 {
		if err := s.Mute(ctx, 1, 2, time.Hour); err != nil {
			t.Fatal(err)
		}
		check("mute", map[string]map[store.ID]int64{"mu:1": {2: now}, "mue:1": {2: end}, "hx:1": {2: end}, "nx:2": {1: end}})
	}
	if err := s.Unmute(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	check("unmute", nil)
	for range 2 {
		if err := s.HidePostsFrom(ctx, 1, 2); err != nil {
			t.Fatal(err)
		}
		check("hide", map[string]map[store.ID]int64{"hd:1": {2: now}, "hx:2": {1: core.RelationForever}, "nx:1": {2: core.RelationForever}})
	}
	if err := s.UnhidePostsFrom(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	check("unhide", nil)
}

// A block removes the follows both ways, with the counts; while it
// stands, neither side can follow or like the other (FORBIDDEN, nothing
// applied); unliking stays allowed, others are not hindered, and
// unblocking restores no follow.
func TestBlockForbids(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4)
	followEdges(t, s, []Edge{{Follower: 1, Followee: 2}, {Follower: 2, Followee: 1}, {Follower: 3, Followee: 2}})
	p2, err := s.Publish(ctx, 2, "two's")
	if err != nil {
		t.Fatal(err)
	}
	p1, err := s.Publish(ctx, 1, "one's")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Like(ctx, 2, p1.ID); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	if err := s.Block(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	counts, err := s.Counts(ctx, []store.ID{1, 2})
	if err != nil || counts[0] != (GraphCounts{}) || counts[1] != (GraphCounts{Followers: 1}) {
		t.Fatalf("counts after the block: %+v, %v; want 1 none, 2 one follower (3)", counts, err)
	}
	if got := readAll(t, s, 1, 5); slices.Contains(got, p2.ID) {
		t.Errorf("blocked author's post in the blocker's feed: %v", got)
	}
	if got := readAll(t, s, 2, 5); slices.Contains(got, p1.ID) {
		t.Errorf("blocker's post in the blocked user's feed: %v", got)
	}
	wantCode(t, "blocker follows", s.Follow(ctx, 1, 2), apierr.Forbidden)
	wantCode(t, "blocked follows", s.Follow(ctx, 2, 1), apierr.Forbidden)
	if n, err := s.FollowMany(ctx, []Edge{{Follower: 3, Followee: 1}, {Follower: 2, Followee: 1}, {Follower: 4, Followee: 1}}); n != 1 || store.CodeOf(err) != apierr.Forbidden {
		t.Errorf("a batch with a follow across the block: %d applied, %v; want 1, FORBIDDEN", n, err)
	}
	_, _, err = s.Like(ctx, 1, p2.ID)
	wantCode(t, "blocker likes", err, apierr.Forbidden)
	if err != nil && !strings.Contains(err.Error(), "block") {
		t.Errorf("like across a block: %q does not say a block stands in the way", err)
	}
	_, _, err = s.Like(ctx, 2, p1.ID)
	wantCode(t, "blocked likes", err, apierr.Forbidden)
	counts, err = s.Counts(ctx, []store.ID{1, 2, 4})
	if err != nil || counts[0] != (GraphCounts{Followers: 1}) || counts[1] != (GraphCounts{Followers: 1}) || counts[2].Following != 0 {
		t.Fatalf("counts after the refusals: %+v, %v; want only 3's follow of 1 added", counts, err)
	}
	if liked, err := s.Liked(ctx, 1, []store.ID{p2.ID}); err != nil || liked[0] {
		t.Fatalf("refused like recorded: %v, %v", liked, err)
	}
	if _, c, err := s.Unlike(ctx, 2, p1.ID); err != nil || c.Likes != 0 {
		t.Fatalf("unlike across a block: %+v, %v; want allowed, 0 likes", c, err)
	}
	if _, c, err := s.Like(ctx, 3, p2.ID); err != nil || c.Likes != 1 {
		t.Fatalf("a bystander's like: %+v, %v", c, err)
	}
	if err := s.Block(ctx, 3, 4); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Like(ctx, 3, p1.ID); err != nil {
		t.Fatalf("like by a user with blocks elsewhere: %v", err)
	}
	if err := s.Unblock(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	if fg, err := s.FollowingIDs(ctx, 1); err != nil || len(fg) != 0 {
		t.Fatalf("after the unblock 1 follows %v (%v), want none", fg, err)
	}
	if err := s.Follow(ctx, 2, 1); err != nil {
		t.Fatalf("follow after the unblock: %v", err)
	}
}

// cleanupJobs reads the clean-up stream of viewer's shard as "v>a" pairs.
func cleanupJobs(tb testing.TB, s *Service, viewer store.ID) []string {
	tb.Helper()
	es, err := s.Redis.Do(context.Background(), s.Redis.B().Xrange().Key(s.Keys.Cleanup(s.ShardOf(viewer))).Start("-").End("+").Build()).AsXRange()
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, e := range es {
		if e.FieldValues["t"] != "hide" {
			tb.Fatalf("clean-up job %v: t is not hide", e.FieldValues)
		}
		out = append(out, e.FieldValues["v"]+">"+e.FieldValues["a"])
	}
	return out
}

// Hiding an author from a follower queues its inbox clean-up and notes it
// for reads; showing it again drops the note and backfills.
func TestHideQueuesCleanupAndShowBackfills(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	stop := startWorkers(t, s, WorkerOptions{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	followEdges(t, s, []Edge{{Follower: 1, Followee: 2}})
	p, err := s.Publish(ctx, 2, "two's")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	stop() // the clean-up jobs stay queued: this test reads them (the worker's are safety_test.go's)
	if err := s.Mute(ctx, 1, 2, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Mute(ctx, 3, 2, 0); err != nil { // 3 does not follow 2: nothing to clean
		t.Fatal(err)
	}
	if got := cleanupJobs(t, s, 1); !slices.Equal(got, []string{"1>2"}) {
		t.Fatalf("clean-up jobs %v, want [1>2]", got)
	}
	if got := zscores(t, s, s.Keys.HideNotes(1)); got[2] <= safety.NotePendingFloor || len(got) != 1 {
		t.Fatalf("notes %v, want 2 until cleaned up", got)
	}
	if err := s.Mute(ctx, 1, 2, time.Hour); err != nil { // still hidden, clean-up pending: queued again
		t.Fatal(err)
	}
	// The clean-up (helper B's worker) removes the posts and shortens the note.
	if err := s.Do(ctx, s.InboxRemoveCmd(s.PostsTL(), 1, p.ID)).Error(); err != nil {
		t.Fatal(err)
	}
	if err := s.Do(ctx, s.Redis.B().Zadd().Key(s.Keys.HideNotes(1)).ScoreMember().ScoreMember(float64(s.NowMS()), store.Member(2)).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := s.Mute(ctx, 1, 2, 2*time.Hour); err != nil { // cleaned: not queued again
		t.Fatal(err)
	}
	if got := cleanupJobs(t, s, 1); len(got) != 2 {
		t.Fatalf("clean-up jobs %v, want 2 (the mute, the repeat while pending)", got)
	}
	if err := s.Unmute(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	if got := timelineIDs(t, s, s.Keys.Inbox(1)); !slices.Contains(got, p.ID) {
		t.Fatalf("inbox after the unmute %v, want %d backfilled", got, p.ID)
	}
	for _, key := range []string{s.Keys.HiddenAuthors(1), s.Keys.HideNotes(1)} {
		if got := zscores(t, s, key); len(got) != 0 {
			t.Fatalf("%s after the unmute: %v", key, got)
		}
	}
	if got := zscores(t, s, s.Keys.NoPush(2)); len(got) != 1 || got[3] != core.RelationForever {
		t.Fatalf("2's no-push set after 1's unmute: %v, want only 3", got)
	}
}

// A mute with a duration lapses by itself on the service's clock: the
// flags, the list and the limit count it as absent once it ended.
func TestMuteExpires(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now, MaxRelations: 1})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	if err := s.Mute(ctx, 1, 2, time.Hour); err != nil {
		t.Fatal(err)
	}
	f, err := s.RelationFlags(ctx, 1, []store.ID{2, 3})
	if err != nil || !f[0].Muted || !f[0].MuteEnds.Equal(clk.now().Add(time.Hour)) || f[1] != (RelationFlags{}) {
		t.Fatalf("flags while muted: %+v, %v", f, err)
	}
	wantCode(t, "a second relation at the limit", s.Block(ctx, 1, 3), apierr.BadInput)
	clk.advance(time.Hour)
	f, err = s.RelationFlags(ctx, 1, []store.ID{2})
	if err != nil || f[0].Muted || !f[0].MuteEnds.IsZero() {
		t.Fatalf("flags once the mute ended: %+v, %v", f, err)
	}
	if page, err := s.RelationList(ctx, 1, RelationMute, 10, ""); err != nil || len(page.Users) != 0 {
		t.Fatalf("mutes listed once ended: %+v, %v", page, err)
	}
	if err := s.Block(ctx, 1, 3); err != nil {
		t.Fatalf("block once the mute ended freed the room: %v", err)
	}
	if err := s.Mute(ctx, 1, 2, 0); store.CodeOf(err) != apierr.BadInput {
		t.Fatalf("a new mute at the limit: %v, want BAD_USER_INPUT", err)
	}
	f, err = s.RelationFlags(ctx, 1, []store.ID{3})
	if err != nil || !f[0].Blocked || f[0].MuteEnds != (time.Time{}) {
		t.Fatalf("flags of the block: %+v, %v", f, err)
	}
	if f, err := s.RelationFlags(ctx, 3, []store.ID{1}); err != nil || !f[0].BlocksViewer || f[0].Blocked {
		t.Fatalf("flags of the blocked user: %+v, %v", f, err)
	}
}

// Relation lists page newest first, their cursors bound to the viewer and
// the list: not another viewer's, another list's or a feed's.
func TestRelationList(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4, 5, 6, 7)
	for _, u := range []store.ID{2, 3, 4, 5} {
		if err := s.Block(ctx, 1, u); err != nil {
			t.Fatal(err)
		}
		clk.advance(time.Second)
	}
	for _, u := range []store.ID{7, 6} { // the same time: the higher id first
		if err := s.Block(ctx, 1, u); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Mute(ctx, 1, 2, 0); err != nil {
		t.Fatal(err)
	}
	var got []store.ID
	after := ""
	for pages := 0; ; pages++ {
		page, err := s.RelationList(ctx, 1, RelationBlock, 4, after)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page.Users...)
		if len(page.Cursors) != len(page.Users) || page.EndCursor != page.Cursors[len(page.Cursors)-1] {
			t.Fatalf("page %+v: a cursor per user, the last the end", page)
		}
		if !page.HasNextPage {
			break
		}
		after = page.EndCursor
	}
	if want := []store.ID{7, 6, 5, 4, 3, 2}; !slices.Equal(got, want) {
		t.Fatalf("blocks listed %v, want %v", got, want)
	}
	page, err := s.RelationList(ctx, 1, RelationBlock, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.RelationList(ctx, 2, RelationBlock, 1, page.EndCursor)
	wantCode(t, "another viewer's cursor", err, apierr.InvalidCursor)
	_, err = s.RelationList(ctx, 1, RelationMute, 1, page.EndCursor)
	wantCode(t, "another list's cursor", err, apierr.InvalidCursor)
	_, err = s.Sealer.Load().Open(page.EndCursor, 1)
	wantCode(t, "a list cursor opening a feed", err, apierr.InvalidCursor)
	feed := s.Sealer.Load().Seal(cursor.Cursor{State: cursor.StateTimeline, LastID: 5, TS: 1, Viewer: 1})
	_, err = s.RelationList(ctx, 1, RelationBlock, 1, feed)
	wantCode(t, "a feed cursor opening a list", err, apierr.InvalidCursor)
	_, err = s.RelationList(ctx, 1, "friend", 1, "")
	wantCode(t, "an unknown list", err, apierr.BadInput)
	if page, err := s.RelationList(ctx, 1, RelationMute, 0, ""); err != nil || !slices.Equal(page.Users, []store.ID{2}) || page.HasNextPage {
		t.Fatalf("mutes %+v, %v", page, err)
	}
}

// A relation whose request died after its record changed is settled by
// the journal repair: mirrors, derived sets and the follows.
func TestRelationRepair(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	followEdges(t, s, []Edge{{Follower: 1, Followee: 2}, {Follower: 2, Followee: 1}})
	if _, err := s.Begin(ctx, s.ShardOf(1), "k", safety.JRel, "p", core.EncodeEdges([]Edge{{Follower: 1, Followee: 2}})); err != nil {
		t.Fatal(err)
	}
	keys, args := s.RelationCommitArgs(RelationBlock, 1, 2, true, s.NowMS(), 0)
	if err := s.Do(ctx, safety.RelationCommit.Cmd(s.Redis.B(), keys, args)).Error(); err != nil {
		t.Fatal(err)
	}
	if got := zscores(t, s, s.Keys.BlockedBy(2)); len(got) != 0 {
		t.Fatalf("mirror before the repair: %v", got)
	}
	startWorkers(t, s, WorkerOptions{RepairAfter: 50 * time.Millisecond})
	drain(t, s)
	if s.Stats().Repairs != 1 {
		t.Fatalf("repairs = %d, want 1", s.Stats().Repairs)
	}
	if got := zscores(t, s, s.Keys.BlockedBy(2)); len(got) != 1 {
		t.Fatalf("mirror after the repair: %v", got)
	}
	if got := zscores(t, s, s.Keys.HiddenAuthors(2)); got[1] != core.RelationForever {
		t.Fatalf("hidden from 2 after the repair: %v", got)
	}
	counts, err := s.Counts(ctx, []store.ID{1, 2})
	if err != nil || counts[0] != (GraphCounts{}) || counts[1] != (GraphCounts{}) {
		t.Fatalf("counts after the repair: %+v, %v; want no follows left", counts, err)
	}
}

// PutRelations records and settles relations (import); ended mutes are
// skipped, creation times kept.
func TestPutRelations(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	at := clk.now().Add(-time.Hour)
	n, err := s.PutRelations(ctx, []Relation{
		{Kind: RelationBlock, User: 1, Target: 2, CreatedAt: at},
		{Kind: RelationMute, User: 1, Target: 3, CreatedAt: at, Until: clk.now().Add(time.Hour)},
		{Kind: RelationMute, User: 2, Target: 3, CreatedAt: at, Until: clk.now().Add(-time.Minute)},
		{Kind: RelationHide, User: 3, Target: 1, CreatedAt: at},
		{Kind: RelationHide, User: 3, Target: 9},
	})
	if n != 4 || store.CodeOf(err) != apierr.NotFound {
		t.Fatalf("PutRelations = %d, %v; want 4 and NOT_FOUND for user 9", n, err)
	}
	if got := zscores(t, s, s.Keys.BlockedBy(2)); got[1] != at.UnixMilli() {
		t.Fatalf("mirror %v, want 1 at its time", got)
	}
	if got := zscores(t, s, s.Keys.Mutes(2)); len(got) != 0 {
		t.Fatalf("ended mute imported: %v", got)
	}
	if got := zscores(t, s, s.Keys.HiddenAuthors(1)); got[3] != core.RelationForever || got[2] != core.RelationForever {
		t.Fatalf("hidden from 1: %v; want 2 (block) and 3 (hides from 1)", got)
	}
	if got := zscores(t, s, s.Keys.MuteEnds(1)); got[3] != clk.now().Add(time.Hour).UnixMilli() {
		t.Fatalf("mute end %v", got)
	}
}

// Rebuild re-derives the block mirrors, hidden authors and no-push sets
// from the records, drops what no record backs, and never brings a
// hidden author's posts back into an inbox.
func TestRebuildRelations(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4)
	followEdges(t, s, []Edge{{Follower: 1, Followee: 2}, {Follower: 3, Followee: 2}, {Follower: 4, Followee: 2}})
	p, err := s.Publish(ctx, 2, "two's")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	for _, err := range []error{s.Mute(ctx, 1, 2, 0), s.HidePostsFrom(ctx, 2, 4), s.Block(ctx, 1, 3)} {
		if err != nil {
			t.Fatal(err)
		}
	}
	// Lose the derived sets, put the hidden posts back, add a stray.
	var cmds []rueidis.Completed
	for u := store.ID(1); u <= 4; u++ {
		cmds = append(cmds, s.Redis.B().Del().Key(s.Keys.BlockedBy(u), s.Keys.HiddenAuthors(u), s.Keys.NoPush(u), s.Keys.HideNotes(u)).Build())
	}
	cmds = append(cmds,
		s.Redis.B().Zadd().Key(s.Keys.Inbox(1)).ScoreMember().ScoreMember(float64(p.CreatedAt.UnixMilli()), store.Member(p.ID)).Build(),
		s.Redis.B().Zadd().Key(s.Keys.HiddenAuthors(3)).ScoreMember().ScoreMember(float64(core.RelationForever), store.Member(2)).Build())
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		t.Fatal(err)
	}
	st, err := s.Rebuild(ctx, RebuildOptions{Restart: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.Relations != 4 {
		t.Errorf("rebuild settled %d pairs, want 4 (1-2, 2-4, 1-3, the stray 3-2)", st.Relations)
	}
	for _, c := range []struct {
		key  string
		want []store.ID
	}{
		{s.Keys.HiddenAuthors(1), []store.ID{2, 3}}, {s.Keys.HiddenAuthors(3), []store.ID{1}}, {s.Keys.HiddenAuthors(4), []store.ID{2}},
		{s.Keys.NoPush(2), []store.ID{1, 4}}, {s.Keys.BlockedBy(3), []store.ID{1}}, {s.Keys.BlockedBy(1), nil},
	} {
		got := zscores(t, s, c.key)
		if len(got) != len(c.want) {
			t.Errorf("%s = %v, want %v", c.key, got, c.want)
		}
		for _, id := range c.want {
			if _, ok := got[id]; !ok {
				t.Errorf("%s = %v, want %v", c.key, got, c.want)
			}
		}
	}
	for v, want := range map[store.ID]bool{1: false, 3: true, 4: false} {
		if got := slices.Contains(timelineIDs(t, s, s.Keys.Inbox(v)), p.ID); got != want {
			t.Errorf("after the rebuild, 2's post in %d's inbox: %v, want %v", v, got, want)
		}
	}
}

// When a mute ends, the workers settle it: the author leaves the derived
// sets and what was published meanwhile is backfilled.
func TestMuteEndSettles(t *testing.T) {
	clk := clockAt(testEpoch)
	s := newService(t, storetest.New(t), Options{Now: clk.now})
	startWorkers(t, s, WorkerOptions{RepairAfter: 40 * time.Millisecond})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	followEdges(t, s, []Edge{{Follower: 1, Followee: 2}})
	if err := s.Mute(ctx, 1, 2, time.Hour); err != nil {
		t.Fatal(err)
	}
	p, err := s.Publish(ctx, 2, "during the mute")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	// Kept out of 1's inbox, as the fan-out does for a muted author.
	if err := s.Do(ctx, s.InboxRemoveCmd(s.PostsTL(), 1, p.ID)).Error(); err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Hour)
	waitFor(t, "the ended mute settled and backfilled", func() bool {
		return len(zscores(t, s, s.Keys.HiddenAuthors(1))) == 0 && len(zscores(t, s, s.Keys.NoPush(2))) == 0 &&
			len(zscores(t, s, s.Keys.MuteTimers(s.ShardOf(1)))) == 0 && slices.Contains(timelineIDs(t, s, s.Keys.Inbox(1)), p.ID)
	})
}
