package e2e

import (
	"slices"
	"strings"
	"testing"

	"github.com/Khan/genqlient/graphql"

	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/server"
)

// Reports and operators' moderation (issue 19) through the client. The
// operators' side has no API (it is `feedd moderate`, tested in
// cmd/feedd): here it is called on the service, and what viewers see is
// read through the client, on both feed paths.

var mod = feedcore.ModAction{Operator: "e2e", Reason: "test"}

// report files a report of subject as c's viewer.
func report(t *testing.T, c graphql.Client, subject string, reason client.ReportReason, comment *string) (string, error) {
	t.Helper()
	r, err := client.Report(t.Context(), c, client.ReportInput{SubjectId: subject, Reason: reason, Comment: comment})
	if err != nil {
		return "", err
	}
	return r.Report.ReportId, nil
}

// TestReport: a report of a post, a user or a live session returns an
// id, the same for a repeat; it changes nothing the reporter sees; a
// report and a mute go in one operation; operators list it.
func TestReport(t *testing.T) {
	e, posts := followedBob(t, feedcore.Options{BigVThreshold: 2})
	ann, bob := e.as(1), e.as(2)
	session := must(client.LiveFeed(t.Context(), ann, client.Ptr(5), nil))(t).LiveFeed.Edges[0].Node.Id
	bobID := relationID(t, ann, "bob")
	before := readFeed(t, ann, 5)

	first := must(report(t, ann, posts[0], client.ReportReasonSpam, client.Ptr("  the same link everywhere ")))(t)
	again := must(report(t, ann, posts[0], client.ReportReasonHate, nil))(t)
	if first == "" || again != first {
		t.Errorf("reportId %q, repeat %q: want the same, not empty", first, again)
	}
	user := must(report(t, ann, bobID, client.ReportReasonHarassment, nil))(t)
	live := must(report(t, ann, session, client.ReportReasonOther, client.Ptr("what is this")))(t)
	other := must(report(t, e.as(3), posts[0], client.ReportReasonSpam, nil))(t)
	if len(slices.Compact(slices.Sorted(slices.Values([]string{first, user, live, other})))) != 4 {
		t.Errorf("report ids %q %q %q %q are not distinct", first, user, live, other)
	}
	if got := readFeed(t, ann, 5); !slices.Equal(got, before) {
		t.Errorf("the reporter's feed changed: %v, was %v", got, before)
	}
	if _, r := relation(t, bob, "ann"); r.BlocksViewer {
		t.Error("a report told bob something")
	}

	both := must(client.ReportAndMute(t.Context(), e.as(4), client.ReportInput{SubjectId: bobID, Reason: client.ReportReasonSpam}, "2"))(t)
	if both.Report.ReportId == "" || !both.MuteUser.User.ViewerHasMuted {
		t.Errorf("reportAndMute = %+v", both)
	}
	wantPosts(t, "dan's feed after reporting and muting bob", e.as(4), "bob", 0)

	var listed []string
	if err := e.svc.Reports(t.Context(), feedcore.Since{}, func(rs []feedcore.Report) error {
		for _, r := range rs {
			listed = append(listed, r.ID+" "+r.Subject.String()+" "+r.Reason+" "+r.Comment)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	_, postID, _ := gqltype.Decode(posts[0])
	if len(listed) != 5 || listed[0] != first+" post:"+feedcore.FormatID(postID)+" SPAM the same link everywhere" {
		t.Errorf("reports as operators list them: %q", listed)
	}
}

// TestReportInput: each bad report is refused with its code, and files
// nothing.
func TestReportInput(t *testing.T) {
	e := newEnv(t, feedcore.Options{})
	e.users("ann", "bob")
	e.workers()
	ann, bob := e.as(1), e.as(2)
	post := publish(t, bob, "post")
	gone := publish(t, bob, "deleted")
	must(client.DeletePost(t.Context(), bob, gone))(t)
	for _, c := range []struct {
		name, subject string
		comment       *string
		code          string
	}{
		{"a database id", "2", nil, "BAD_USER_INPUT"},
		{"not an id", "xyz", nil, "BAD_USER_INPUT"},
		{"another type's id", gqltype.Encode("KeywordFilter", 1), nil, "BAD_USER_INPUT"},
		{"oneself", gqltype.Encode(gqltype.User, 1), nil, "BAD_USER_INPUT"},
		{"a long comment", post, client.Ptr(strings.Repeat("x", 1001)), "BAD_USER_INPUT"},
		{"a comment with a control character", post, client.Ptr("a\x07b"), "BAD_USER_INPUT"},
		{"an unknown post", gqltype.Encode(gqltype.Post, 999), nil, "NOT_FOUND"},
		{"a deleted post", gone, nil, "NOT_FOUND"},
		{"an unknown user", gqltype.Encode(gqltype.User, 99), nil, "NOT_FOUND"},
		{"an unknown live session", gqltype.Encode(gqltype.LiveSession, 99), nil, "NOT_FOUND"},
	} {
		_, err := report(t, ann, c.subject, client.ReportReasonSpam, c.comment)
		wantCode(t, c.name, err, c.code)
	}
	_, err := report(t, e.anon(), post, client.ReportReasonSpam, nil)
	wantCode(t, "anonymous", err, "UNAUTHENTICATED")
	must(report(t, ann, post, client.ReportReasonSpam, client.Ptr(strings.Repeat("é", 1000))))(t)
	n := 0
	if err := e.svc.Reports(t.Context(), feedcore.Since{}, func(rs []feedcore.Report) error { n += len(rs); return nil }); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d reports filed, want the one good one", n)
	}
}

// TestReportLimit: past --report-burst a reporter gets RATE_LIMITED with
// a retry hint; another reporter is not affected.
func TestReportLimit(t *testing.T) {
	st := storetest.New(t)
	e := newEnvWith(t, st.Client, st.Prefix, feedcore.Options{}, func(c *server.Config) {
		c.APIConfig.ReportLimit = feedcore.RateLimit{Rate: 10.0 / 60, Burst: 3}
	})
	e.users("ann", "bob", "cat", "dan", "eve")
	ann := e.as(1)
	for id := feedcore.ID(2); id <= 4; id++ {
		must(report(t, ann, gqltype.Encode(gqltype.User, id), client.ReportReasonSpam, nil))(t)
	}
	_, err := report(t, ann, gqltype.Encode(gqltype.User, 5), client.ReportReasonSpam, nil)
	wantCode(t, "past the burst", err, "RATE_LIMITED")
	if list := client.Errors(err); len(list) == 0 || list[0].Extensions["retryAfterMs"] == nil {
		t.Errorf("RATE_LIMITED without retryAfterMs: %v", err)
	}
	must(report(t, e.as(2), gqltype.Encode(gqltype.User, 5), client.ReportReasonSpam, nil))(t)
	// The viewer's other operations go on.
	must(client.Viewer(t.Context(), ann))(t)
}

// TestSuspension: a suspended account's token and dev identity get
// FORBIDDEN on every operation; its posts leave an active reader's inbox
// feed and a merged reader's at once, its sessions the live feeds, its
// posts' nodes read null; follows stay. Unsuspending brings it all back.
func TestSuspension(t *testing.T) {
	e, posts := followedBob(t, feedcore.Options{BigVThreshold: 2})
	ann, cat, dan := e.as(1), e.as(3), e.as(4)
	bobTok := e.client(client.Auth{Token: e.token(secret, 2)})
	ctx := t.Context()

	if out, err := e.svc.Suspend(ctx, 2, mod); err != nil || !out.Changed {
		t.Fatalf("suspend: %+v, %v", out, err)
	}
	for _, op := range []struct {
		name string
		run  func(graphql.Client) error
	}{
		{"viewer", func(c graphql.Client) error { _, err := client.Viewer(ctx, c); return err }},
		{"followingFeed", func(c graphql.Client) error { _, err := client.FollowingFeed(ctx, c, nil, nil, nil, nil); return err }},
		{"publishPost", func(c graphql.Client) error {
			_, err := client.PublishPost(ctx, c, client.PublishPostInput{Text: "still here"})
			return err
		}},
		{"followUser", func(c graphql.Client) error { _, err := client.FollowUser(ctx, c, "3"); return err }},
		{"report", func(c graphql.Client) error {
			_, err := report(t, c, posts[0], client.ReportReasonSpam, nil)
			return err
		}},
	} {
		for who, c := range map[string]graphql.Client{"token": bobTok, "dev identity": e.as(2)} {
			err := op.run(c)
			wantCode(t, op.name+" by bob's "+who, err, "FORBIDDEN")
			if err != nil && !strings.Contains(err.Error(), "this account is suspended") {
				t.Errorf("%s by bob's %s: %v, want it to say the account is suspended", op.name, who, err)
			}
		}
	}
	wantPosts(t, "ann's inbox feed with bob suspended", ann, "bob", 0)
	wantPosts(t, "dan's merged feed with bob suspended", dan, "bob", 0)
	for name, c := range map[string]graphql.Client{"ann": ann, "dan": dan} {
		if anchors(t, c)["bob"] {
			t.Errorf("%s's live feed shows suspended bob", name)
		}
	}
	if n := must(client.Node(ctx, ann, posts[0]))(t).Node; n != nil {
		t.Errorf("node(bob's post) while suspended = %+v, want null", n)
	}
	if u, _ := relation(t, ann, "bob"); !u.ViewerIsFollowing || u.FollowerCount != 3 {
		t.Errorf("bob as ann sees him while suspended: %+v; the follows stay", u)
	}
	if _, err := client.Viewer(ctx, ann); err != nil {
		t.Errorf("ann's own requests: %v", err)
	}
	// His posts are in no feed, so nobody can like, favorite, repost or
	// answer them: NOT_FOUND, as for a deleted post.
	for name, run := range map[string]func() error{
		"likePost":     func() error { _, err := client.LikePost(ctx, ann, posts[0]); return err },
		"favoritePost": func() error { _, err := client.FavoritePost(ctx, ann, posts[0]); return err },
		"repost":       func() error { _, err := client.Repost(ctx, ann, posts[0]); return err },
		"reply": func() error {
			_, err := client.PublishPost(ctx, ann, client.PublishPostInput{Text: "hello?", ReplyTo: &posts[0]})
			return err
		},
	} {
		wantCode(t, name+" of suspended bob's post", run(), "NOT_FOUND")
	}
	// As if bob blocked everyone: he is in no follower list, and his own
	// are empty.
	if got := listed(t, 20, followingList(t, ann, "ann")); slices.Contains(got, "bob") {
		t.Errorf("ann's following list with bob suspended: %v", got)
	}
	if got := listed(t, 20, followersList(t, ann, "bob")); len(got) != 0 {
		t.Errorf("bob's followers list while suspended: %v, want none", got)
	}

	if out, err := e.svc.Unsuspend(ctx, 2, mod); err != nil || !out.Changed {
		t.Fatalf("unsuspend: %+v, %v", out, err)
	}
	must(client.Viewer(ctx, bobTok))(t)
	wantPosts(t, "ann's inbox feed after unsuspending bob", ann, "bob", 2)
	wantPosts(t, "cat's merged feed after unsuspending bob", cat, "bob", 2)
	if !anchors(t, ann)["bob"] || !anchors(t, cat)["bob"] {
		t.Errorf("live feeds after unsuspending bob: ann %v, cat %v", anchors(t, ann), anchors(t, cat))
	}
	if n := must(client.Node(ctx, ann, posts[0]))(t).Node; n == nil {
		t.Error("node(bob's post) after unsuspending = null")
	}
	must(client.LikePost(ctx, ann, posts[0]))(t)
	if got := listed(t, 20, followingList(t, ann, "ann")); !slices.Contains(got, "bob") {
		t.Errorf("ann's following list after unsuspending bob: %v", got)
	}
	if got := listed(t, 20, followersList(t, ann, "bob")); len(got) != 3 {
		t.Errorf("bob's followers list after unsuspending: %v, want his 3 followers", got)
	}
	publish(t, e.as(2), "back")
	e.drain()
	wantPosts(t, "ann's feed after bob's new post", ann, "bob", 3)
}

// TestTakedown: a post taken down leaves every feed as a deleted post
// does (inbox and merged readers), its node reads null, and a like of it
// is NOT_FOUND; the author's other posts stay.
func TestTakedown(t *testing.T) {
	e, posts := followedBob(t, feedcore.Options{BigVThreshold: 2})
	ann, dan := e.as(1), e.as(4)
	_, id, err := gqltype.Decode(posts[0])
	if err != nil {
		t.Fatal(err)
	}
	if out, err := e.svc.Takedown(t.Context(), id, mod); err != nil || !out.Changed {
		t.Fatalf("takedown: %+v, %v", out, err)
	}
	for name, c := range map[string]graphql.Client{"ann": ann, "dan": dan} {
		if got := readFeed(t, c, 2); slices.Contains(got, posts[0]) || !slices.Contains(got, posts[1]) {
			t.Errorf("%s's feed after the takedown: %v; want %s gone and %s kept", name, got, posts[0], posts[1])
		}
	}
	if n := must(client.Node(t.Context(), ann, posts[0]))(t).Node; n != nil {
		t.Errorf("node(taken-down post) = %+v, want null", n)
	}
	_, err = client.LikePost(t.Context(), ann, posts[0])
	wantCode(t, "liking a post taken down", err, "NOT_FOUND")
}
