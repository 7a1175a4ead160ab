package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/feedd/feedd/client"
)

// TestMatchesGoClient proves the list holds exactly what the typed Go
// client sends, and that the committed file is up to date.
func TestMatchesGoClient(t *testing.T) {
	docs, err := Documents("../../schema.graphqls", "../../client/operations/*.graphql")
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]string{
		"DeletePost": client.DeletePost_Operation, "EndLive": client.EndLive_Operation,
		"FollowUser": client.FollowUser_Operation, "FollowingFeed": client.FollowingFeed_Operation,
		"LikePost": client.LikePost_Operation, "LiveFeed": client.LiveFeed_Operation,
		"Node": client.Node_Operation, "PublishPost": client.PublishPost_Operation,
		"ScheduleLive": client.ScheduleLive_Operation, "StartLive": client.StartLive_Operation,
		"UnfollowUser": client.UnfollowUser_Operation, "UnlikePost": client.UnlikePost_Operation,
		"User": client.User_Operation, "Viewer": client.Viewer_Operation,
		"BlockUser": client.BlockUser_Operation, "UnblockUser": client.UnblockUser_Operation,
		"MuteUser": client.MuteUser_Operation, "UnmuteUser": client.UnmuteUser_Operation,
		"HideMyPostsFrom": client.HideMyPostsFrom_Operation, "UnhideMyPostsFrom": client.UnhideMyPostsFrom_Operation,
		"UserRelation": client.UserRelation_Operation, "BlockedUsers": client.BlockedUsers_Operation,
		"MutedUsers": client.MutedUsers_Operation, "UsersHiddenFromMyPosts": client.UsersHiddenFromMyPosts_Operation,
		"DeleteAccount": client.DeleteAccount_Operation,

		"AddKeywordFilter": client.AddKeywordFilter_Operation, "RemoveKeywordFilter": client.RemoveKeywordFilter_Operation,
		"KeywordFilters": client.KeywordFilters_Operation, "KeywordFilterNode": client.KeywordFilterNode_Operation,
		"Report": client.Report_Operation, "ReportAndMute": client.ReportAndMute_Operation,
		"Favorites": client.Favorites_Operation, "UserPosts": client.UserPosts_Operation,
		"UserFollowers": client.UserFollowers_Operation, "UserFollowing": client.UserFollowing_Operation,
		"FavoritePost": client.FavoritePost_Operation, "UnfavoritePost": client.UnfavoritePost_Operation,
		"Repost": client.Repost_Operation, "UndoRepost": client.UndoRepost_Operation,
		"PostThread": client.PostThread_Operation, "FeedItems": client.FeedItems_Operation,
	}
	if len(docs) != len(sent) {
		t.Errorf("%d operations in client/operations, %d known to this test", len(docs), len(sent))
	}
	for name, want := range sent {
		if docs[name] != want {
			t.Errorf("%s: generated\n%s\nthe Go client sends\n%s", name, docs[name], want)
		}
	}
	body, err := Encode(docs)
	if err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile("../../client/persisted/persisted.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(old, body) {
		t.Error("client/persisted/persisted.json is stale: run go run ./tools/persisted")
	}
}
