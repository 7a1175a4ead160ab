package server

import (
	"fmt"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestDeleteAccountTokens: once deleted, the account's token and dev
// identity get UNAUTHENTICATED on every operation (queries that do not read
// the viewer too, and mutations in a process that had seen the user), with
// the rate limit off and on; a retry of the deletion still succeeds.
func TestDeleteAccountTokens(t *testing.T) {
	for _, api := range []APIConfig{{}, {RateLimit: feedcore.RateLimit{Rate: 1000, Burst: 1000}}} {
		t.Run(fmt.Sprintf("rate %v", api.RateLimit.Rate), func(t *testing.T) {
			st := storetest.New(t)
			e := newEnvWith(t, st.Client, st.Prefix, api)
			e.users("ann", "bob")
			tok, err := auth.Mint(testSecret, 1, time.Hour)
			if err != nil {
				t.Fatal(err)
			}
			bearer := []string{"Authorization", "Bearer " + tok}
			var ok struct {
				FollowUser struct{ User struct{ Handle string } }
			}
			e.do(0, `mutation { followUser(userId: "2") { user { handle } } }`, nil, bearer...).as(t, &ok)

			del := `mutation($h: String!) { deleteAccount(confirmHandle: $h) { deletedUserId } }`
			mustCode(t, "wrong handle", e.do(1, del, map[string]any{"h": "bob"}), "BAD_USER_INPUT")
			var got struct {
				DeleteAccount struct{ DeletedUserID string }
			}
			e.do(0, del, map[string]any{"h": "ann"}, bearer...).as(t, &got)
			if got.DeleteAccount.DeletedUserID == "" {
				t.Fatal("no deletedUserId")
			}
			ops := []string{
				`{ viewer { id } }`,
				`{ user(handle: "bob") { handle } }`,
				`{ followingFeed(first: 5) { edges { cursor } } }`,
				`mutation { publishPost(input: {text: "still here?"}) { post { id } } }`,
				`mutation { followUser(userId: "2") { user { handle } } }`,
				`mutation { unfollowUser(userId: "2") { user { handle } } }`,
			}
			for _, op := range ops {
				mustCode(t, "token: "+op, e.do(0, op, nil, bearer...), "UNAUTHENTICATED")
				mustCode(t, "dev identity: "+op, e.do(1, op, nil), "UNAUTHENTICATED")
			}
			// A retry succeeds again.
			got.DeleteAccount.DeletedUserID = ""
			e.do(0, del, map[string]any{"h": "ann"}, bearer...).as(t, &got)
			if got.DeleteAccount.DeletedUserID == "" {
				t.Fatal("retry: no deletedUserId")
			}
			// Others are not affected; bob lost his follower.
			var bob struct{ User struct{ FollowerCount int } }
			e.do(2, `{ user(handle: "bob") { followerCount } }`, nil).as(t, &bob)
			if bob.User.FollowerCount != 0 {
				t.Errorf("bob's followerCount = %d, want 0", bob.User.FollowerCount)
			}
		})
	}
}
