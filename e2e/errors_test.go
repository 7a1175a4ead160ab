package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/redisstore"
)

// tamper flips one character in the middle of a cursor.
func tamper(cursor string) string {
	b := []byte(cursor)
	if i := len(b) / 2; b[i] == 'A' {
		b[i] = 'B'
	} else {
		b[i] = 'A'
	}
	return string(b)
}

// respell returns another spelling of the same base64url bytes: the
// spare low bits of the last character set differently (or, when there
// are none, padding), which a lenient decoder would accept.
func respell(s string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	if len(s)%4 == 0 {
		return s + "="
	}
	i := strings.IndexByte(alphabet, s[len(s)-1])
	return s[:len(s)-1] + string(alphabet[i^1])
}

// TestErrorCodes drives every error code a client can provoke with the
// typed client and checks extensions.code, read from the gqlerror.List
// genqlient returns.
func TestErrorCodes(t *testing.T) {
	e := newEnv(t, feedcore.Options{})
	e.users("ann", "bob", "cat")
	e.workers()
	ann, bob, cat := e.as(1), e.as(2), e.as(3)
	ctx := t.Context()
	must(client.FollowUser(ctx, ann, "2"))(t)
	bobsPost := publish(t, bob, "bob's")
	publish(t, bob, "bob's second")
	bobsShow := schedule(t, bob, "bob's show", time.Hour)
	schedule(t, bob, "bob's other show", 2*time.Hour)
	bobsOnAir := schedule(t, bob, "bob on air", 0)
	must(client.StartLive(ctx, bob, bobsOnAir.Id))(t)
	bobsPast := schedule(t, bob, "bob's past show", -time.Minute)
	must(client.EndLive(ctx, bob, bobsPast.Id))(t)
	e.drain()

	feedPage := must(client.FollowingFeed(ctx, ann, client.Ptr(1), nil, nil, nil))(t).FollowingFeed
	livePage := must(client.LiveFeed(ctx, ann, client.Ptr(1), nil))(t).LiveFeed
	if len(feedPage.Edges) != 1 || len(livePage.Edges) != 1 {
		t.Fatalf("setup: feed %+v, live feed %+v", feedPage, livePage)
	}
	feedCursor, liveCursor := feedPage.Edges[0].Cursor, livePage.Edges[0].Cursor
	missingPost := gqltype.Encode(gqltype.Post, 123456789)
	missingUser := gqltype.Encode(gqltype.User, 999)
	missingSession := gqltype.Encode(gqltype.LiveSession, 123456789)
	anon := e.anon()
	withAuth := func(a client.Auth) func(context.Context) error {
		return func(ctx context.Context) error { _, err := client.Viewer(ctx, e.client(a)); return err }
	}

	for _, c := range []struct {
		name string
		code string
		call func(context.Context) error
	}{
		// Identity.
		{"viewer, anonymous", "UNAUTHENTICATED", func(ctx context.Context) error { _, err := client.Viewer(ctx, anon); return err }},
		{"followingFeed, anonymous", "UNAUTHENTICATED", func(ctx context.Context) error {
			_, err := client.FollowingFeed(ctx, anon, nil, nil, nil, nil)
			return err
		}},
		{"liveFeed, anonymous", "UNAUTHENTICATED", func(ctx context.Context) error { _, err := client.LiveFeed(ctx, anon, nil, nil); return err }},
		{"publishPost, anonymous", "UNAUTHENTICATED", func(ctx context.Context) error {
			_, err := client.PublishPost(ctx, anon, client.PublishPostInput{Text: "x"})
			return err
		}},
		{"followUser, anonymous", "UNAUTHENTICATED", func(ctx context.Context) error { _, err := client.FollowUser(ctx, anon, "2"); return err }},
		{"scheduleLive, anonymous", "UNAUTHENTICATED", func(ctx context.Context) error {
			_, err := client.ScheduleLive(ctx, anon, client.ScheduleLiveInput{Title: "x", ScheduledStartAt: time.Now()})
			return err
		}},
		{"viewer, unknown user", "UNAUTHENTICATED", withAuth(client.Auth{ViewerID: "42"})},
		{"liveFeed, unknown user", "UNAUTHENTICATED", func(ctx context.Context) error {
			_, err := client.LiveFeed(ctx, e.client(client.Auth{ViewerID: "42"}), nil, nil)
			return err
		}},
		{"viewer, malformed dev header", "UNAUTHENTICATED", withAuth(client.Auth{ViewerID: "ann"})},
		{"viewer, token signed with another key", "UNAUTHENTICATED", withAuth(client.Auth{Token: e.token([]byte("another-key-0123456789abcdef-0123"), 1)})},
		{"viewer, garbage token", "UNAUTHENTICATED", withAuth(client.Auth{Token: "not.a.jwt"})},

		// Someone else's things.
		{"deletePost, bob's post", "FORBIDDEN", func(ctx context.Context) error { _, err := client.DeletePost(ctx, ann, bobsPost); return err }},
		{"startLive, bob's session", "FORBIDDEN", func(ctx context.Context) error { _, err := client.StartLive(ctx, ann, bobsShow.Id); return err }},
		{"endLive, bob's session", "FORBIDDEN", func(ctx context.Context) error { _, err := client.EndLive(ctx, cat, bobsOnAir.Id); return err }},

		// Things that do not exist.
		{"deletePost, missing", "NOT_FOUND", func(ctx context.Context) error { _, err := client.DeletePost(ctx, bob, missingPost); return err }},
		{"followUser, missing", "NOT_FOUND", func(ctx context.Context) error { _, err := client.FollowUser(ctx, ann, missingUser); return err }},
		{"startLive, missing", "NOT_FOUND", func(ctx context.Context) error { _, err := client.StartLive(ctx, bob, missingSession); return err }},
		{"endLive, missing", "NOT_FOUND", func(ctx context.Context) error { _, err := client.EndLive(ctx, bob, missingSession); return err }},

		// Bad arguments.
		{"node, malformed id", "BAD_USER_INPUT", func(ctx context.Context) error { _, err := client.Node(ctx, ann, "not-an-id"); return err }},
		{"followingFeed, first 0", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.FollowingFeed(ctx, ann, client.Ptr(0), nil, nil, nil)
			return err
		}},
		{"followingFeed, first 101", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.FollowingFeed(ctx, ann, client.Ptr(101), nil, nil, nil)
			return err
		}},
		{"followingFeed, last 0", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.FollowingFeed(ctx, ann, nil, nil, client.Ptr(0), &feedCursor)
			return err
		}},
		{"followingFeed, first and last", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.FollowingFeed(ctx, ann, client.Ptr(5), nil, client.Ptr(5), nil)
			return err
		}},
		{"liveFeed, first 101", "BAD_USER_INPUT", func(ctx context.Context) error { _, err := client.LiveFeed(ctx, ann, client.Ptr(101), nil); return err }},
		{"publishPost, empty", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.PublishPost(ctx, ann, client.PublishPostInput{Text: ""})
			return err
		}},
		{"publishPost, blank", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.PublishPost(ctx, ann, client.PublishPostInput{Text: " \n\t "})
			return err
		}},
		{"publishPost, 2001 characters", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.PublishPost(ctx, ann, client.PublishPostInput{Text: strings.Repeat("é", 2001)})
			return err
		}},
		{"publishPost, NUL", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.PublishPost(ctx, ann, client.PublishPostInput{Text: "a\x00b"})
			return err
		}},
		{"publishPost, terminal escape", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.PublishPost(ctx, ann, client.PublishPostInput{Text: "\x1b[2Jgotcha"})
			return err
		}},
		{"publishPost, zero-width only", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.PublishPost(ctx, ann, client.PublishPostInput{Text: "\u200b\u200c\u200d\u2060\ufeff "})
			return err
		}},
		{"followUser, non-canonical global id", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.FollowUser(ctx, ann, respell(gqltype.Encode(gqltype.User, 3)))
			return err
		}},
		{"deletePost, a user's id", "BAD_USER_INPUT", func(ctx context.Context) error { _, err := client.DeletePost(ctx, bob, missingUser); return err }},
		{"followUser, self", "BAD_USER_INPUT", func(ctx context.Context) error { _, err := client.FollowUser(ctx, ann, "1"); return err }},
		{"followUser, malformed id", "BAD_USER_INPUT", func(ctx context.Context) error { _, err := client.FollowUser(ctx, ann, "@bob"); return err }},
		{"scheduleLive, empty title", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.ScheduleLive(ctx, bob, client.ScheduleLiveInput{Title: " ", ScheduledStartAt: time.Now()})
			return err
		}},
		{"scheduleLive, 201-character title", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.ScheduleLive(ctx, bob, client.ScheduleLiveInput{Title: strings.Repeat("t", 201), ScheduledStartAt: time.Now()})
			return err
		}},
		{"scheduleLive, at the epoch", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.ScheduleLive(ctx, bob, client.ScheduleLiveInput{Title: "t", ScheduledStartAt: time.Unix(0, 0)})
			return err
		}},
		{"scheduleLive, an hour ago", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.ScheduleLive(ctx, bob, client.ScheduleLiveInput{Title: "t", ScheduledStartAt: time.Now().Add(-time.Hour)})
			return err
		}},
		{"scheduleLive, two years ahead", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.ScheduleLive(ctx, bob, client.ScheduleLiveInput{Title: "t", ScheduledStartAt: time.Now().AddDate(2, 0, 0)})
			return err
		}},
		{"scheduleLive, control character in the title", "BAD_USER_INPUT", func(ctx context.Context) error {
			_, err := client.ScheduleLive(ctx, bob, client.ScheduleLiveInput{Title: "a\x07", ScheduledStartAt: time.Now().Add(time.Hour)})
			return err
		}},
		{"startLive, live already", "BAD_USER_INPUT", func(ctx context.Context) error { _, err := client.StartLive(ctx, bob, bobsOnAir.Id); return err }},
		{"startLive, ended", "BAD_USER_INPUT", func(ctx context.Context) error { _, err := client.StartLive(ctx, bob, bobsPast.Id); return err }},
		{"startLive, a post's id", "BAD_USER_INPUT", func(ctx context.Context) error { _, err := client.StartLive(ctx, bob, bobsPost); return err }},

		// Cursors are sealed and bound to their viewer and feed.
		{"followingFeed, garbage cursor", "INVALID_CURSOR", func(ctx context.Context) error {
			_, err := client.FollowingFeed(ctx, ann, client.Ptr(5), client.Ptr("garbage"), nil, nil)
			return err
		}},
		{"followingFeed, tampered cursor", "INVALID_CURSOR", func(ctx context.Context) error {
			_, err := client.FollowingFeed(ctx, ann, client.Ptr(5), client.Ptr(tamper(feedCursor)), nil, nil)
			return err
		}},
		{"followingFeed, another viewer's cursor", "INVALID_CURSOR", func(ctx context.Context) error {
			_, err := client.FollowingFeed(ctx, bob, client.Ptr(5), &feedCursor, nil, nil)
			return err
		}},
		{"followingFeed, tampered before", "INVALID_CURSOR", func(ctx context.Context) error {
			_, err := client.FollowingFeed(ctx, ann, nil, nil, client.Ptr(5), client.Ptr(tamper(feedCursor)))
			return err
		}},
		{"followingFeed, respelled cursor", "INVALID_CURSOR", func(ctx context.Context) error {
			_, err := client.FollowingFeed(ctx, ann, client.Ptr(5), client.Ptr(respell(feedCursor)), nil, nil)
			return err
		}},
		{"liveFeed, garbage cursor", "INVALID_CURSOR", func(ctx context.Context) error {
			_, err := client.LiveFeed(ctx, ann, nil, client.Ptr("garbage"))
			return err
		}},
		{"liveFeed, tampered cursor", "INVALID_CURSOR", func(ctx context.Context) error {
			_, err := client.LiveFeed(ctx, ann, nil, client.Ptr(tamper(liveCursor)))
			return err
		}},
		{"liveFeed, another viewer's cursor", "INVALID_CURSOR", func(ctx context.Context) error {
			_, err := client.LiveFeed(ctx, cat, nil, &liveCursor)
			return err
		}},
		{"liveFeed, a followingFeed cursor", "INVALID_CURSOR", func(ctx context.Context) error {
			_, err := client.LiveFeed(ctx, ann, nil, &feedCursor)
			return err
		}},
	} {
		err := c.call(ctx)
		wantCode(t, c.name, err, c.code)
		if err != nil {
			t.Logf("%s: %v", c.name, err)
		}
	}
}

// TestCursorExpired lets a live feed snapshot expire between two pages.
// Both stores age keys on a real clock (the embedded one in ticks of
// 100 ms: redisstore's runClock), so the TTL leaves the second page room
// to come first even on a busy machine; a TTL of 1 ms expired between the
// pages whenever a tick fell there.
func TestCursorExpired(t *testing.T) {
	const ttl = 2 * time.Second
	e := newEnv(t, feedcore.Options{SnapshotTTL: ttl})
	e.users("ann", "bob")
	ann, bob := e.as(1), e.as(2)
	ctx := t.Context()
	must(client.FollowUser(ctx, ann, "2"))(t)
	schedule(t, bob, "one", time.Hour)
	schedule(t, bob, "two", 2*time.Hour)
	page := must(client.LiveFeed(ctx, ann, client.Ptr(1), nil))(t).LiveFeed
	if !page.PageInfo.HasNextPage || page.PageInfo.EndCursor == nil {
		t.Fatalf("first page %+v", page)
	}
	next := func() error { _, err := client.LiveFeed(ctx, ann, client.Ptr(1), page.PageInfo.EndCursor); return err }
	if err := next(); err != nil {
		t.Fatalf("second page before the snapshot expired: %v", err)
	}
	if emb := e.st.Embedded; emb != nil {
		emb.FastForward(ttl) // no need to wait for its ticks
	} else {
		// A real Redis expires the key on its own clock: ask until it has.
		deadline := time.Now().Add(ttl + 10*time.Second)
		for err := next(); err == nil && time.Now().Before(deadline); err = next() {
		}
	}
	wantCode(t, "page after the snapshot expired", next(), "CURSOR_EXPIRED")
	// Starting again from the top works.
	if again := must(client.LiveFeed(ctx, ann, client.Ptr(5), nil))(t).LiveFeed; len(again.Edges) != 2 {
		t.Fatalf("first page again: %+v", again)
	}
}

// TestFollowLimit follows up to a small limit, then one more.
func TestFollowLimit(t *testing.T) {
	e := newEnv(t, feedcore.Options{FollowLimit: 2})
	e.users("ann", "bob", "cat", "dan")
	ann := e.as(1)
	ctx := t.Context()
	must(client.FollowUser(ctx, ann, "2"))(t)
	must(client.FollowUser(ctx, ann, "3"))(t)
	_, err := client.FollowUser(ctx, ann, "4")
	wantCode(t, "third follow with a limit of 2", err, "FOLLOW_LIMIT")
	// Following someone already followed still works at the limit, and
	// unfollowing makes room.
	must(client.FollowUser(ctx, ann, "3"))(t)
	must(client.UnfollowUser(ctx, ann, "3"))(t)
	if u := must(client.FollowUser(ctx, ann, "4"))(t).FollowUser.User; !u.ViewerIsFollowing {
		t.Fatalf("follow after making room: %+v", u)
	}
	if me := must(client.Viewer(ctx, ann))(t).Viewer; me.FollowingCount != 2 {
		t.Fatalf("followingCount %d, want 2", me.FollowingCount)
	}
}

// TestUnavailable: with the store gone, requests fail with UNAVAILABLE.
func TestUnavailable(t *testing.T) {
	// A private embedded store, even when FEED_TEST_REDIS is set: closing
	// its client must not disturb a shared store.
	st, err := redisstore.Open(context.Background(), redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	e := newEnvOn(t, st.Client, "down:", feedcore.Options{})
	e.users("ann")
	st.Client.Close()
	_, err = client.User(t.Context(), e.anon(), "ann")
	wantCode(t, "user(ann) with the store closed", err, "UNAVAILABLE")
}
