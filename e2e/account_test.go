package e2e

import (
	"slices"
	"testing"

	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
)

// TestDeleteAccount through the typed client: a wrong handle is refused;
// the deletion takes the account's posts out of its follower's feed, its
// follows and likes out of every count, and its token and dev identity
// stop working; a retry succeeds again.
func TestDeleteAccount(t *testing.T) {
	e := newEnv(t, feedcore.Options{})
	e.workers()
	e.users("ann", "bob")
	ctx := t.Context()
	annTok := e.client(client.Auth{Token: e.token(secret, 1)})
	ann, bob := e.as(1), e.as(2)
	bobs := publish(t, bob, "bob's")
	anns := publish(t, ann, "ann's")
	must(client.FollowUser(ctx, ann, "2"))(t)
	must(client.FollowUser(ctx, bob, "1"))(t)
	must(client.LikePost(ctx, ann, bobs))(t)
	e.drain()
	if got := readFeed(t, bob, 10); !slices.Contains(got, anns) {
		t.Fatalf("bob's feed %v lacks ann's post", got)
	}

	_, err := client.DeleteAccount(ctx, annTok, "bob")
	wantCode(t, "wrong handle", err, "BAD_USER_INPUT")
	del := must(client.DeleteAccount(ctx, annTok, "ann"))(t).DeleteAccount
	if del.DeletedUserId == "" {
		t.Fatal("deleteAccount: no deletedUserId")
	}
	if got := readFeed(t, bob, 10); slices.Contains(got, anns) {
		t.Errorf("bob's feed %v still shows the deleted account's post", got)
	}
	u := must(client.User(ctx, bob, "bob"))(t).User
	if u.FollowerCount != 0 || u.FollowingCount != 0 {
		t.Errorf("bob's counts after the deletion: %d followers, %d following; want 0, 0", u.FollowerCount, u.FollowingCount)
	}
	if p := must(client.LikePost(ctx, bob, bobs))(t).LikePost.Post; p.Counts.Likes != 1 {
		t.Errorf("bob's post has %d likes after ann's deletion and bob's like, want 1", p.Counts.Likes)
	}
	if gone := must(client.User(ctx, bob, "ann"))(t).User; gone != nil {
		t.Errorf("user(handle: ann) = %+v after the deletion, want null", gone)
	}
	_, err = client.Viewer(ctx, annTok)
	wantCode(t, "viewer by token", err, "UNAUTHENTICATED")
	_, err = client.Viewer(ctx, ann)
	wantCode(t, "viewer by dev identity", err, "UNAUTHENTICATED")
	_, err = client.PublishPost(ctx, annTok, client.PublishPostInput{Text: "back?"})
	wantCode(t, "publish by token", err, "UNAUTHENTICATED")
	_, err = client.User(ctx, ann, "bob")
	wantCode(t, "a query that does not read the viewer", err, "UNAUTHENTICATED")
	_, err = client.LiveFeed(ctx, ann, nil, nil) // ann was seen to exist: no profile read
	wantCode(t, "liveFeed", err, "UNAUTHENTICATED")
	if again := must(client.DeleteAccount(ctx, annTok, "ann"))(t).DeleteAccount; again.DeletedUserId != del.DeletedUserId {
		t.Errorf("retry: deletedUserId %q, want %q", again.DeletedUserId, del.DeletedUserId)
	}
}
