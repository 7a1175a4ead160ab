package e2e

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
)

// Safety: blocks, mutes and hides (issue 18), seen through the client.
// The feeds are read on both paths: an active reader's pushed inbox, and
// a reader who has never read, whose big-V followees' posts are merged in
// on read.

// clock is a service clock the test moves: real time plus an offset.
type clock struct{ off atomic.Int64 }

func (c *clock) now() time.Time          { return time.Now().Add(time.Duration(c.off.Load())) }
func (c *clock) advance(d time.Duration) { c.off.Add(int64(d)) }

// authors counts the posts of each author (by handle) in c's whole
// following feed.
func authors(t *testing.T, c graphql.Client) map[string]int {
	t.Helper()
	n := map[string]int{}
	for _, p := range feedPosts(t, c, 3) {
		n[p.Author.Handle]++
	}
	return n
}

// wantPosts asserts that c's whole following feed holds n posts by author.
func wantPosts(t *testing.T, what string, c graphql.Client, author string, n int) {
	t.Helper()
	if got := authors(t, c); got[author] != n {
		t.Errorf("%s: %d posts by %s, want %d (the feed's authors: %v)", what, got[author], author, n, got)
	}
}

// anchors lists the anchors (by handle) of the sessions on c's live feed.
func anchors(t *testing.T, c graphql.Client) map[string]bool {
	t.Helper()
	page := must(client.LiveFeed(t.Context(), c, client.Ptr(100), nil))(t).LiveFeed
	out := map[string]bool{}
	for _, e := range page.Edges {
		out[e.Node.Anchor.Handle] = true
	}
	return out
}

// relation is user(handle:) as c's viewer sees it, with the relation flags.
func relation(t *testing.T, c graphql.Client, handle string) (client.UserFields, client.RelationFields) {
	t.Helper()
	u := must(client.UserRelation(t.Context(), c, handle))(t).User
	if u == nil {
		t.Fatalf("user(%s) is null", handle)
	}
	return u.UserFields, u.RelationFields
}

// noRelation fails unless r shows no block, mute or hide either way.
func noRelation(t *testing.T, what string, r client.RelationFields) {
	t.Helper()
	if r != (client.RelationFields{}) {
		t.Errorf("%s: relation %+v, want none", what, r)
	}
}

// forbidden asserts err is FORBIDDEN because of a block.
func forbidden(t *testing.T, what string, err error) {
	t.Helper()
	wantCode(t, what, err, "FORBIDDEN")
	if err != nil && !strings.Contains(err.Error(), "a block stands between you and this user") {
		t.Errorf("%s: message %q does not name the block", what, err)
	}
}

// listPage reads one page of a user list.
type listPage func(first *int, after *string) (client.UserPageFields, error)

// listed pages a user list to the end, n at a time, and returns the
// handles in list order, checking that every cursor advances (pageAll).
func listed(t *testing.T, n int, page listPage) []string {
	t.Helper()
	var out []string
	pageAll(t, n, func(first *int, after *string) (client.PageInfoFields, error) {
		p, err := page(first, after)
		if len(p.Edges) > *first {
			t.Fatalf("asked for %d users, got %d", *first, len(p.Edges))
		}
		for _, e := range p.Edges {
			out = append(out, e.Node.Handle)
		}
		return p.PageInfo.PageInfoFields, err
	})
	return out
}

// pageAll reads a list to the end through page, n at a time, checking
// that hasPreviousPage says whether a page started from a cursor and that
// every cursor advances; page takes each page's items.
func pageAll(t *testing.T, n int, page func(first *int, after *string) (client.PageInfoFields, error)) {
	t.Helper()
	var after *string
	for range 100 {
		info := must(page(&n, after))(t)
		if info.HasPreviousPage != (after != nil) {
			t.Errorf("page after %v: hasPreviousPage %v", after, info.HasPreviousPage)
		}
		if !info.HasNextPage {
			return
		}
		if info.EndCursor == nil || after != nil && *info.EndCursor == *after {
			t.Fatalf("hasNextPage but endCursor %v does not advance", info.EndCursor)
		}
		after = info.EndCursor
	}
	t.Fatal("the list never ended")
}

// The three lists of c's viewer.
func blockedList(t *testing.T, c graphql.Client) listPage {
	return func(first *int, after *string) (client.UserPageFields, error) {
		r, err := client.BlockedUsers(t.Context(), c, first, after)
		return r.GetBlockedUsers().UserPageFields, err
	}
}

func mutedList(t *testing.T, c graphql.Client) listPage {
	return func(first *int, after *string) (client.UserPageFields, error) {
		r, err := client.MutedUsers(t.Context(), c, first, after)
		return r.GetMutedUsers().UserPageFields, err
	}
}

func hiddenList(t *testing.T, c graphql.Client) listPage {
	return func(first *int, after *string) (client.UserPageFields, error) {
		r, err := client.UsersHiddenFromMyPosts(t.Context(), c, first, after)
		return r.GetUsersHiddenFromMyPosts().UserPageFields, err
	}
}

// waitFor polls cond until it holds, failing the test after a deadline:
// what the workers finish (a clean-up, a backfill) is awaited, never slept
// on.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// follows makes each client follow the users (database ids) given.
func follows(t *testing.T, f map[graphql.Client][]string) {
	t.Helper()
	for c, ids := range f {
		for _, id := range ids {
			must(client.FollowUser(t.Context(), c, id))(t)
		}
	}
}

// activate makes c's viewer an active reader (it reads once) and waits for
// the workers to complete its inbox: from then on posts are pushed to it.
func (e *env) activate(c graphql.Client) {
	e.t.Helper()
	must(client.FollowingFeed(e.t.Context(), c, client.Ptr(1), nil, nil, nil))(e.t)
	e.drain()
}

// TestBlock: a block hides each side from the other on both feed paths at
// once, removes the follows both ways, refuses follows, likes and opens
// across it with FORBIDDEN (applying nothing), tells the blocked user, and
// unblocking restores no follow.
func TestBlock(t *testing.T) {
	// bob has 4 followers, more than 3: big-V, pushing only to active readers.
	e := newEnv(t, feedcore.Options{BigVThreshold: 3})
	e.users("ann", "bob", "cat", "dan", "eve")
	e.workers()
	ann, bob, cat, dan, eve := e.as(1), e.as(2), e.as(3), e.as(4), e.as(5)
	ctx := t.Context()
	follows(t, map[graphql.Client][]string{ann: {"2"}, bob: {"1"}, cat: {"1", "2"}, dan: {"2"}, eve: {"2"}})
	e.activate(ann)
	e.activate(bob)
	var annPosts, bobPosts []string
	for range 2 {
		annPosts = append(annPosts, publish(t, ann, "by ann"))
	}
	for range 3 {
		bobPosts = append(bobPosts, publish(t, bob, "by bob"))
	}
	annLive, bobLive := schedule(t, ann, "ann live", time.Hour), schedule(t, bob, "bob live", time.Hour)
	must(client.LikePost(ctx, ann, bobPosts[0]))(t) // a like from before the block
	e.drain()
	for name, c := range map[string]graphql.Client{"ann": ann, "bob": bob} {
		if got := authors(t, c); got["ann"] != 2 || got["bob"] != 3 {
			t.Fatalf("%s's feed before the block: %v", name, got)
		}
	}
	if !anchors(t, ann)["bob"] || !anchors(t, bob)["ann"] {
		t.Fatalf("live feeds before the block: ann sees %v, bob sees %v", anchors(t, ann), anchors(t, bob))
	}

	u := must(client.BlockUser(ctx, ann, "2"))(t).BlockUser.User
	if u.Handle != "bob" || !u.ViewerHasBlocked || u.BlocksViewer || u.ViewerIsFollowing || u.FollowerCount != 3 {
		t.Fatalf("blockUser(bob) = %+v %+v", u.UserFields, u.RelationFields)
	}
	// Blocking again changes nothing.
	if again := must(client.BlockUser(ctx, ann, "2"))(t).BlockUser.User; again.RelationFields != u.RelationFields || again.FollowerCount != u.FollowerCount {
		t.Errorf("blocking again: %+v, first %+v", again, u)
	}
	// At once, without waiting for the clean-up: nothing of one reaches the other.
	if got := authors(t, ann); got["bob"] != 0 || got["ann"] != 2 {
		t.Errorf("ann's feed after blocking bob: %v", got)
	}
	if got := authors(t, bob); got["ann"] != 0 || got["bob"] != 3 {
		t.Errorf("bob's feed after ann blocked him: %v", got)
	}
	if anchors(t, ann)["bob"] || anchors(t, bob)["ann"] {
		t.Errorf("live feeds after the block: ann sees %v, bob sees %v", anchors(t, ann), anchors(t, bob))
	}
	if me := must(client.Viewer(ctx, ann))(t).Viewer; me.FollowingCount != 0 || me.FollowerCount != 1 {
		t.Errorf("ann after the block: following %d, followers %d; want 0 and 1 (cat)", me.FollowingCount, me.FollowerCount)
	}
	// bob is told, and still finds ann by handle.
	if au, ar := relation(t, bob, "ann"); !ar.BlocksViewer || ar.ViewerHasBlocked || au.ViewerIsFollowing {
		t.Errorf("ann as bob sees her: %+v %+v", au, ar)
	}
	if _, br := relation(t, ann, "bob"); !br.ViewerHasBlocked || br.BlocksViewer {
		t.Errorf("bob as ann sees him: %+v", br)
	}

	// Across the block, each attempt is FORBIDDEN and nothing is applied.
	_, err := client.FollowUser(ctx, bob, "1")
	forbidden(t, "bob follows ann", err)
	_, err = client.FollowUser(ctx, ann, "2")
	forbidden(t, "ann follows bob", err)
	_, err = client.LikePost(ctx, bob, annPosts[0])
	forbidden(t, "bob likes ann's post", err)
	_, err = client.LikePost(ctx, ann, bobPosts[1])
	forbidden(t, "ann likes bob's post", err)
	for _, c := range []struct {
		who  graphql.Client
		name string
		id   string
	}{{bob, "bob opens ann's post", annPosts[0]}, {ann, "ann opens bob's post", bobPosts[1]},
		{bob, "bob opens ann's live session", annLive.Id}, {ann, "ann opens bob's live session", bobLive.Id}} {
		_, err := client.Node(ctx, c.who, c.id)
		forbidden(t, c.name, err)
	}
	if me := must(client.Viewer(ctx, ann))(t).Viewer; me.FollowingCount != 0 || me.FollowerCount != 1 {
		t.Errorf("ann after the refused follows: following %d, followers %d", me.FollowingCount, me.FollowerCount)
	}
	likes := func(post string) int {
		p, ok := must(client.Node(ctx, cat, post))(t).Node.(*client.NodeNodePost)
		if !ok {
			t.Fatalf("cat cannot open %s", post)
		}
		return p.Counts.Likes
	}
	if likes(annPosts[0]) != 0 || likes(bobPosts[1]) != 0 {
		t.Errorf("a refused like was counted: %d, %d", likes(annPosts[0]), likes(bobPosts[1]))
	}
	// Counts stay global: the like from before the block still counts,
	// and taking it back is allowed.
	if likes(bobPosts[0]) != 1 {
		t.Errorf("the like from before the block: %d likes, want 1", likes(bobPosts[0]))
	}
	must(client.UnlikePost(ctx, ann, bobPosts[0]))(t)
	if likes(bobPosts[0]) != 0 {
		t.Errorf("after ann's unlike across the block: %d likes, want 0", likes(bobPosts[0]))
	}
	// The user itself can still be opened by id.
	if n, ok := must(client.Node(ctx, bob, relationID(t, bob, "ann")))(t).Node.(*client.NodeNodeUser); !ok || n.Handle != "ann" {
		t.Errorf("bob opens ann's profile: %+v", n)
	}
	// Counts stay global; anonymous callers see no relation.
	if bu, _ := relation(t, cat, "bob"); bu.FollowerCount != u.FollowerCount {
		t.Errorf("bob's followers: %d as cat sees him, %d as ann does", bu.FollowerCount, u.FollowerCount)
	}
	_, anon := relation(t, e.anon(), "bob")
	noRelation(t, "bob as an anonymous caller sees him", anon)
	// A third party sees both.
	if got := authors(t, cat); got["ann"] != 2 || got["bob"] != 3 {
		t.Errorf("cat's feed: %v", got)
	}
	if got := listed(t, 5, blockedList(t, ann)); len(got) != 1 || got[0] != "bob" {
		t.Errorf("ann's blockedUsers = %v, want [bob]", got)
	}
	if got := listed(t, 5, blockedList(t, bob)); len(got) != 0 {
		t.Errorf("bob's blockedUsers = %v, want none", got)
	}

	// Posts after the block do not cross it either.
	publish(t, bob, "by bob, after")
	e.drain()
	wantPosts(t, "ann's feed after bob's new post", ann, "bob", 0)

	// A reader merged on read (dan never read): bob blocks dan; eve, who
	// follows bob the same way, is the control.
	must(client.BlockUser(ctx, bob, "4"))(t)
	wantPosts(t, "dan's feed after bob blocked him", dan, "bob", 0)
	wantPosts(t, "eve's feed", eve, "bob", 4)
	if _, r := relation(t, dan, "bob"); !r.BlocksViewer {
		t.Errorf("dan is not told of bob's block: %+v", r)
	}

	// Unblocking restores no follow; following again works.
	un := must(client.UnblockUser(ctx, ann, "2"))(t).UnblockUser.User
	if u := un; u.ViewerHasBlocked || u.ViewerIsFollowing || u.FollowerCount != 2 {
		t.Fatalf("unblockUser(bob) = %+v %+v; want no block, no follow, 2 followers (cat, eve)", u.UserFields, u.RelationFields)
	}
	if _, r := relation(t, bob, "ann"); r.BlocksViewer {
		t.Errorf("bob still told ann blocks him: %+v", r)
	}
	if got := listed(t, 5, blockedList(t, ann)); len(got) != 0 {
		t.Errorf("ann's blockedUsers after unblocking = %v", got)
	}
	must(client.FollowUser(ctx, ann, "2"))(t)
	must(client.Node(ctx, ann, bobPosts[1]))(t)
	e.drain()
	wantPosts(t, "ann's feed after following bob again", ann, "bob", 4)
}

// relationID is the global id of the user with handle, as c finds it.
func relationID(t *testing.T, c graphql.Client, handle string) string {
	t.Helper()
	u, _ := relation(t, c, handle)
	return u.Id
}

// followedBob is the scene of TestMute and TestHide: bob (2) is big-V,
// followed by ann (1), an active reader, and by cat (3) and dan (4), who
// never read (merged on read); he has two posts (returned) and a session.
func followedBob(t *testing.T, opts feedcore.Options) (*env, []string) {
	t.Helper()
	e := newEnv(t, opts)
	e.users("ann", "bob", "cat", "dan")
	e.workers()
	ann, bob := e.as(1), e.as(2)
	follows(t, map[graphql.Client][]string{ann: {"2"}, e.as(3): {"2"}, e.as(4): {"2"}})
	e.activate(ann)
	posts := []string{publish(t, bob, "one"), publish(t, bob, "two")}
	schedule(t, bob, "bob live", time.Hour)
	e.drain()
	if got := authors(t, ann); got["bob"] != 2 || !anchors(t, ann)["bob"] {
		t.Fatalf("ann's feeds: %v, live %v", got, anchors(t, ann))
	}
	return e, posts
}

// TestMute: a mute hides the muted user's posts and sessions from the
// viewer's feeds at once, keeps the follow, tells the muted user nothing,
// forbids nothing, and lapses by itself after its duration.
func TestMute(t *testing.T) {
	clk := &clock{}
	e, posts := followedBob(t, feedcore.Options{BigVThreshold: 2, Now: clk.now})
	ann, bob, cat, dan := e.as(1), e.as(2), e.as(3), e.as(4)
	ctx := t.Context()

	at := clk.now()
	u := must(client.MuteUser(ctx, ann, "2", client.Ptr(60)))(t).MuteUser.User
	if !u.ViewerHasMuted || !u.ViewerIsFollowing || u.FollowerCount != 3 || u.ViewerHasBlocked || u.ViewerMuteExpiresAt == nil {
		t.Fatalf("muteUser(bob, 60) = %+v %+v", u.UserFields, u.RelationFields)
	}
	if end := *u.ViewerMuteExpiresAt; end.Before(at.Add(60*time.Second-time.Millisecond)) || end.After(clk.now().Add(60*time.Second)) {
		t.Errorf("viewerMuteExpiresAt %v, want 60 s after %v", end, at)
	}
	wantPosts(t, "ann's feed right after muting bob", ann, "bob", 0)
	if anchors(t, ann)["bob"] {
		t.Errorf("ann's live feed after muting bob: %v", anchors(t, ann))
	}
	// bob is not told, keeps his follower, and nothing is forbidden.
	_, r := relation(t, bob, "ann")
	noRelation(t, "ann as bob sees her", r)
	if me := must(client.Viewer(ctx, bob))(t).Viewer; me.FollowerCount != 3 {
		t.Errorf("bob's followers after the mute: %d, want 3", me.FollowerCount)
	}
	must(client.Node(ctx, ann, posts[0]))(t)
	must(client.LikePost(ctx, ann, posts[0]))(t)
	muted := listed(t, 5, mutedList(t, ann))
	if len(muted) != 1 || muted[0] != "bob" {
		t.Errorf("ann's mutedUsers = %v, want [bob]", muted)
	}

	// A reader merged on read: dan mutes bob with no end; cat is the control.
	u = must(client.MuteUser(ctx, dan, "2", nil))(t).MuteUser.User
	if !u.ViewerHasMuted || u.ViewerMuteExpiresAt != nil {
		t.Errorf("muteUser(bob) with no duration = %+v", u.RelationFields)
	}
	wantPosts(t, "dan's feed after muting bob", dan, "bob", 0)
	wantPosts(t, "cat's feed", cat, "bob", 2)

	// The mute lapses by itself.
	clk.advance(61 * time.Second)
	_, r = relation(t, ann, "bob")
	if r.ViewerHasMuted || r.ViewerMuteExpiresAt != nil {
		t.Errorf("bob as ann sees him after the mute ended: %+v", r)
	}
	if got := listed(t, 5, mutedList(t, ann)); len(got) != 0 {
		t.Errorf("ann's mutedUsers after the mute ended = %v", got)
	}
	waitFor(t, "bob's posts back in ann's feed after the mute ended", func() bool {
		e.drain()
		return authors(t, ann)["bob"] == 2 && anchors(t, ann)["bob"]
	})
	publish(t, bob, "three")
	e.drain()
	wantPosts(t, "ann's feed after bob's post past the mute", ann, "bob", 3)
	// dan's mute has no end; muting again sets one; unmuting ends it.
	wantPosts(t, "dan's feed past 61 s of a mute with no end", dan, "bob", 0)
	if u := must(client.MuteUser(ctx, dan, "2", client.Ptr(30)))(t).MuteUser.User; u.ViewerMuteExpiresAt == nil {
		t.Errorf("muting again for 30 s left no end: %+v", u.RelationFields)
	}
	if u := must(client.UnmuteUser(ctx, dan, "2"))(t).UnmuteUser.User; u.ViewerHasMuted || !u.ViewerIsFollowing {
		t.Errorf("unmuteUser(bob) = %+v %+v", u.UserFields, u.RelationFields)
	}
	waitFor(t, "bob's posts back in dan's feed after unmuting", func() bool {
		e.drain()
		return authors(t, dan)["bob"] == 3
	})
}

// TestHide: hiding one's posts from a follower takes them out of that
// follower's feeds at once; the follower still follows, is not told, and
// nothing is forbidden; unhiding brings them back.
func TestHide(t *testing.T) {
	e, posts := followedBob(t, feedcore.Options{BigVThreshold: 2})
	ann, bob, cat, dan := e.as(1), e.as(2), e.as(3), e.as(4)
	ctx := t.Context()

	u := must(client.HideMyPostsFrom(ctx, bob, "1"))(t).HideMyPostsFrom.User
	if u.Handle != "ann" || !u.ViewerHidesMyPosts || u.BlocksViewer || u.ViewerHasBlocked {
		t.Fatalf("hideMyPostsFrom(ann) = %+v", u.RelationFields)
	}
	wantPosts(t, "ann's feed right after bob hid his posts", ann, "bob", 0)
	if anchors(t, ann)["bob"] {
		t.Errorf("ann's live feed after bob hid his posts: %v", anchors(t, ann))
	}
	// ann still follows bob and is not told; nothing is forbidden.
	au, ar := relation(t, ann, "bob")
	noRelation(t, "bob as ann sees him", ar)
	if !au.ViewerIsFollowing || au.FollowerCount != 3 {
		t.Errorf("bob as ann sees him: %+v", au)
	}
	must(client.Node(ctx, ann, posts[0]))(t)
	must(client.LikePost(ctx, ann, posts[0]))(t)
	must(client.FollowUser(ctx, ann, "2"))(t)
	if got := listed(t, 5, hiddenList(t, bob)); len(got) != 1 || got[0] != "ann" {
		t.Errorf("bob's usersHiddenFromMyPosts = %v, want [ann]", got)
	}

	// A reader merged on read: bob hides from dan; cat is the control.
	must(client.HideMyPostsFrom(ctx, bob, "4"))(t)
	wantPosts(t, "dan's feed after bob hid his posts", dan, "bob", 0)
	wantPosts(t, "cat's feed", cat, "bob", 2)
	publish(t, bob, "three")
	e.drain()
	wantPosts(t, "ann's feed after bob's new post", ann, "bob", 0)
	wantPosts(t, "cat's feed after bob's new post", cat, "bob", 3)

	if u := must(client.UnhideMyPostsFrom(ctx, bob, "1"))(t).UnhideMyPostsFrom.User; u.ViewerHidesMyPosts {
		t.Fatalf("unhideMyPostsFrom(ann) = %+v", u.RelationFields)
	}
	waitFor(t, "bob's posts back in ann's feed after unhiding", func() bool {
		e.drain()
		return authors(t, ann)["bob"] == 3 && anchors(t, ann)["bob"]
	})
	if got := listed(t, 5, hiddenList(t, bob)); len(got) != 1 || got[0] != "dan" {
		t.Errorf("bob's usersHiddenFromMyPosts after unhiding ann = %v, want [dan]", got)
	}
}

// TestSafetyInput: yourself and negative durations are BAD_USER_INPUT,
// unknown users NOT_FOUND, anonymous callers UNAUTHENTICATED, and the
// --max-blocks limit counts blocks, mutes and hides together, lets a
// repeat through, and does not count an ended mute.
func TestSafetyInput(t *testing.T) {
	clk := &clock{}
	e := newEnv(t, feedcore.Options{MaxRelations: 3, Now: clk.now})
	e.users("ann", "bob", "cat", "dan", "eve")
	ann := e.as(1)
	ctx := t.Context()
	post := publish(t, e.as(2), "a post")
	calls := []struct {
		name, code string
		call       func() error
	}{
		{"block yourself", "BAD_USER_INPUT", func() error { _, err := client.BlockUser(ctx, ann, "1"); return err }},
		{"mute yourself", "BAD_USER_INPUT", func() error { _, err := client.MuteUser(ctx, ann, "1", nil); return err }},
		{"hide from yourself", "BAD_USER_INPUT", func() error { _, err := client.HideMyPostsFrom(ctx, ann, "1"); return err }},
		{"negative duration", "BAD_USER_INPUT", func() error { _, err := client.MuteUser(ctx, ann, "2", client.Ptr(-1)); return err }},
		{"malformed id", "BAD_USER_INPUT", func() error { _, err := client.BlockUser(ctx, ann, "not-an-id"); return err }},
		{"a post's id", "BAD_USER_INPUT", func() error { _, err := client.BlockUser(ctx, ann, post); return err }},
		{"block unknown", "NOT_FOUND", func() error { _, err := client.BlockUser(ctx, ann, "99"); return err }},
		{"mute unknown", "NOT_FOUND", func() error { _, err := client.MuteUser(ctx, ann, "99", client.Ptr(5)); return err }},
		{"hide from unknown", "NOT_FOUND", func() error { _, err := client.HideMyPostsFrom(ctx, ann, "99"); return err }},
		{"unblock unknown", "NOT_FOUND", func() error { _, err := client.UnblockUser(ctx, ann, "99"); return err }},
		{"unmute unknown", "NOT_FOUND", func() error { _, err := client.UnmuteUser(ctx, ann, "99"); return err }},
		{"unhide from unknown", "NOT_FOUND", func() error { _, err := client.UnhideMyPostsFrom(ctx, ann, "99"); return err }},
		{"anonymous block", "UNAUTHENTICATED", func() error { _, err := client.BlockUser(ctx, e.anon(), "2"); return err }},
		{"anonymous list", "UNAUTHENTICATED", func() error { _, err := client.BlockedUsers(ctx, e.anon(), nil, nil); return err }},
		{"first: 0", "BAD_USER_INPUT", func() error { _, err := client.MutedUsers(ctx, ann, client.Ptr(0), nil); return err }},
		{"first: 101", "BAD_USER_INPUT", func() error { _, err := client.UsersHiddenFromMyPosts(ctx, ann, client.Ptr(101), nil); return err }},
	}
	for _, c := range calls {
		wantCode(t, c.name, c.call(), c.code)
	}
	// Nothing of the refused calls was applied.
	if _, r := relation(t, ann, "bob"); r.ViewerHasMuted || r.ViewerHasBlocked {
		t.Errorf("bob after refused calls: %+v", r)
	}

	// The limit: 3 together.
	must(client.BlockUser(ctx, ann, "2"))(t)
	must(client.MuteUser(ctx, ann, "3", client.Ptr(60)))(t)
	must(client.HideMyPostsFrom(ctx, ann, "4"))(t)
	over := []struct {
		name string
		call func() error
	}{
		{"a 4th: block", func() error { _, err := client.BlockUser(ctx, ann, "5"); return err }},
		{"a 4th: mute", func() error { _, err := client.MuteUser(ctx, ann, "5", nil); return err }},
		{"a 4th: hide", func() error { _, err := client.HideMyPostsFrom(ctx, ann, "5"); return err }},
	}
	for _, c := range over {
		err := c.call()
		wantCode(t, c.name, err, "BAD_USER_INPUT")
		if err != nil && !strings.Contains(err.Error(), "--max-blocks") {
			t.Errorf("%s: message %q does not name the limit", c.name, err)
		}
	}
	if _, r := relation(t, ann, "eve"); r != (client.RelationFields{}) {
		t.Errorf("eve after refused relations: %+v", r)
	}
	// Repeating one that exists succeeds at the limit.
	must(client.BlockUser(ctx, ann, "2"))(t)
	must(client.MuteUser(ctx, ann, "3", client.Ptr(30)))(t)
	must(client.HideMyPostsFrom(ctx, ann, "4"))(t)
	// An ended mute no longer counts.
	clk.advance(31 * time.Second)
	if u := must(client.BlockUser(ctx, ann, "5"))(t).BlockUser.User; !u.ViewerHasBlocked {
		t.Errorf("block once the mute ended: %+v", u.RelationFields)
	}
}

// TestSafetyLists pages the viewer's three lists, newest first, with
// cursors bound to the viewer and the list.
func TestSafetyLists(t *testing.T) {
	clk := &clock{}
	e := newEnv(t, feedcore.Options{Now: clk.now})
	e.users("ann", "u2", "u3", "u4", "u5", "u6", "u7")
	ann, bob := e.as(1), e.as(2)
	ctx := t.Context()
	for _, id := range []string{"2", "3", "4", "5", "6"} {
		must(client.BlockUser(ctx, ann, id))(t)
		clk.advance(time.Millisecond) // distinct times: a defined order
	}
	must(client.MuteUser(ctx, ann, "7", nil))(t)
	clk.advance(time.Millisecond)
	must(client.MuteUser(ctx, ann, "2", client.Ptr(3600)))(t)
	must(client.HideMyPostsFrom(ctx, ann, "3"))(t)

	want := []string{"u6", "u5", "u4", "u3", "u2"}
	for _, n := range []int{1, 2, 5, 100} {
		if got := listed(t, n, blockedList(t, ann)); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("blockedUsers by %d: %v, want %v", n, got, want)
		}
	}
	if got := listed(t, 1, mutedList(t, ann)); strings.Join(got, " ") != "u2 u7" {
		t.Errorf("mutedUsers: %v, want [u2 u7]", got)
	}
	if got := listed(t, 1, hiddenList(t, ann)); strings.Join(got, " ") != "u3" {
		t.Errorf("usersHiddenFromMyPosts: %v, want [u3]", got)
	}
	page := must(client.BlockedUsers(ctx, ann, client.Ptr(2), nil))(t).BlockedUsers
	for _, n := range page.Edges {
		if !n.Node.ViewerHasBlocked || n.Node.ViewerIsFollowing {
			t.Errorf("blocked %s: %+v", n.Node.Handle, n.Node.RelationFields)
		}
	}
	// A cursor is bound to its list and its viewer.
	cur := page.PageInfo.EndCursor
	_, err := client.MutedUsers(ctx, ann, client.Ptr(2), cur)
	wantCode(t, "a blockedUsers cursor on mutedUsers", err, "INVALID_CURSOR")
	_, err = client.BlockedUsers(ctx, bob, client.Ptr(2), cur)
	wantCode(t, "ann's cursor used by u2", err, "INVALID_CURSOR")
}
