package e2e

import (
	"slices"
	"testing"

	"github.com/Khan/genqlient/graphql"
	"github.com/feedd/feedd/client"
)

// Replies (issue 21), seen through the client on both feed paths.

// reply posts text as c, replying to the post parent (by its text), a
// second after the world's last item.
func (w *world) reply(c graphql.Client, parent, text string) string {
	w.t.Helper()
	w.clk.advance(1e9)
	p := must(client.PublishPost(w.t.Context(), c, client.PublishPostInput{Text: text, ReplyTo: client.Ptr(w.ids[parent])}))(w.t).PublishPost.Post
	w.ids[text] = p.Id
	return p.Id
}

// posts is items of posts (not reposts), by text.
func posts(texts ...string) []item {
	out := make([]item, len(texts))
	for i, t := range texts {
		out[i] = item{text: t}
	}
	return out
}

// thread is the post text as c sees it through node(id:): what it replies
// to (its text, "" for none) and its replies' texts, paged n at a time,
// with its comments count.
func (w *world) thread(c graphql.Client, text string, n int) (replyTo string, replies []string, comments int) {
	w.t.Helper()
	var after *string
	for range 100 {
		r := must(client.PostThread(w.t.Context(), c, w.ids[text], &n, after))(w.t)
		if r.Node == nil {
			w.t.Fatalf("node(%s) is null", text)
		}
		p := (*r.Node).(*client.PostThreadNodePost)
		if p.ReplyTo != nil {
			replyTo = p.ReplyTo.Text
		}
		comments = p.Counts.Comments
		for _, e := range p.Replies.Edges {
			replies = append(replies, e.Node.Text)
			if e.Node.ReplyTo == nil || e.Node.ReplyTo.Id != w.ids[text] {
				w.t.Errorf("a reply of %q has replyTo %+v", text, e.Node.ReplyTo)
			}
		}
		if !p.Replies.PageInfo.HasNextPage {
			return replyTo, replies, comments
		}
		after = p.Replies.PageInfo.EndCursor
	}
	w.t.Fatalf("the replies of %q never ended", text)
	return
}

// TestReplyRule: a followee's reply shows when the viewer also follows
// the author it answers, when it answers the viewer, and in a thread
// (a reply to its own author); the viewer's own replies show; a reply to
// someone else is left out, and the page fills past it. Following that
// someone shows it at once, muting the author answered hides it again:
// the rule is decided at read time.
func TestReplyRule(t *testing.T) {
	paths(t, func(t *testing.T, w *world) {
		ctx := t.Context()
		xan := w.e.as(6) // not followed by the viewer
		must(client.UnfollowUser(ctx, w.viewer, "5"))(t)
		w.publish(xan, "xan post")
		w.publish(w.ann, "ann post")
		w.publish(w.viewer, "my post")
		w.publish(w.rob, "rob post")
		w.reply(w.rob, "ann post", "rob to ann")
		w.reply(w.rob, "xan post", "rob to xan")
		w.reply(w.rob, "my post", "rob to me")
		w.reply(w.rob, "rob post", "rob to rob")
		w.reply(w.viewer, "xan post", "me to xan")
		w.reply(w.ray, "ann post", "ray to ann") // ray is not followed
		w.want("a followee's replies", posts("me to xan", "rob to rob", "rob to me", "rob to ann", "rob post", "my post", "ann post")...)

		must(client.FollowUser(ctx, w.viewer, "6"))(t)
		w.want("the viewer follows xan", posts("me to xan", "rob to rob", "rob to me", "rob to xan", "rob to ann",
			"rob post", "my post", "ann post", "xan post")...)

		must(client.MuteUser(ctx, w.viewer, "2", nil))(t)
		w.want("the viewer mutes ann", posts("me to xan", "rob to rob", "rob to me", "rob to xan", "rob post", "my post", "xan post")...)
		must(client.UnmuteUser(ctx, w.viewer, "2"))(t)

		// The conversation: oldest first, every page size; ray's reply too.
		for _, n := range []int{1, 2, 20} {
			replyTo, replies, comments := w.thread(w.viewer, "ann post", n)
			if replyTo != "" || !slices.Equal(replies, []string{"rob to ann", "ray to ann"}) || comments != 2 {
				t.Errorf("ann's post, %d a page: replyTo %q, replies %q, %d comments", n, replyTo, replies, comments)
			}
		}
		if replyTo, _, _ := w.thread(w.viewer, "rob to ann", 5); replyTo != "ann post" {
			t.Errorf("rob's reply to ann replies to %q", replyTo)
		}
		// The viewer mutes ray: his reply leaves the conversation, for the viewer only.
		must(client.MuteUser(ctx, w.viewer, "5", nil))(t)
		if _, replies, comments := w.thread(w.viewer, "ann post", 1); !slices.Equal(replies, []string{"rob to ann"}) || comments != 2 {
			t.Errorf("ann's post as the viewer muting ray: replies %q, %d comments", replies, comments)
		}
		if _, replies, _ := w.thread(w.rob, "ann post", 1); !slices.Equal(replies, []string{"rob to ann", "ray to ann"}) {
			t.Errorf("ann's post as rob: replies %q", replies)
		}

		// Cursors are bound to the post and the viewer.
		r := must(client.PostThread(ctx, w.viewer, w.ids["rob post"], client.Ptr(1), nil))(t)
		robReplies := (*r.Node).(*client.PostThreadNodePost).Replies
		cur := robReplies.PageInfo.EndCursor
		if len(robReplies.Edges) != 1 || cur == nil {
			t.Fatalf("replies of rob's post: %+v", robReplies)
		}
		wantCode(t, "a replies cursor on another post", errOf(client.PostThread(ctx, w.viewer, w.ids["ann post"], client.Ptr(1), cur)), "INVALID_CURSOR")
		wantCode(t, "a replies cursor of another viewer", errOf(client.PostThread(ctx, w.rob, w.ids["rob post"], client.Ptr(1), cur)), "INVALID_CURSOR")
		wantCode(t, "a replies cursor on the feed", errOf(client.FollowingFeed(ctx, w.viewer, client.Ptr(1), cur, nil, nil)), "INVALID_CURSOR")

		// The parent deleted: the reply stays, replying to nothing; the
		// rule still knows whom it answered.
		must(client.DeletePost(ctx, w.ann, w.ids["ann post"]))(t)
		if replyTo, _, _ := w.thread(w.viewer, "rob to ann", 5); replyTo != "" {
			t.Errorf("rob's reply to ann's deleted post replies to %q", replyTo)
		}
		w.want("ann deleted her post", posts("me to xan", "rob to rob", "rob to me", "rob to xan", "rob to ann", "rob post", "my post", "xan post")...)

		// Refusals change nothing.
		for _, c := range []struct {
			what, parent, code string
		}{
			{"a reply to a deleted post", w.ids["ann post"], "NOT_FOUND"},
			{"a reply to a missing post", "999999", "NOT_FOUND"},
			{"a reply to a bad id", "nope", "BAD_USER_INPUT"},
		} {
			_, err := client.PublishPost(ctx, w.rob, client.PublishPostInput{Text: "no", ReplyTo: client.Ptr(c.parent)})
			wantCode(t, c.what, err, c.code)
		}
		must(client.BlockUser(ctx, xan, "4"))(t)
		_, err := client.PublishPost(ctx, w.rob, client.PublishPostInput{Text: "no", ReplyTo: client.Ptr(w.ids["xan post"])})
		forbidden(t, "rob replies to xan, who blocks him", err)
		if _, _, comments := w.thread(w.viewer, "xan post", 5); comments != 2 {
			t.Errorf("xan's post has %d comments after the refusals, want 2", comments)
		}
	})
}
