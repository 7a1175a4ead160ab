package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/importer"
)

// The worked example of the Timeline Feed chapter (shared/seeds, 001):
// user 111 follows 200, 211, 222, 233 and 244; 200 and 211 are pulled
// (big-V here), the others pushed to 111's inbox. Paged three at a time,
// the feed is the chapter's: (32850, 25218, 50015), then (38376, 71658,
// 16020), ties on time broken by id. It still holds with conversations
// the rules leave out: a reply of a followee to a stranger, and a
// followee's repost of 32850, which is among the 40 items after it.

// workedPosts are the chapter's lists: author, post id, time (s).
var workedPosts = []struct {
	author, id feedcore.ID
	at         int64
}{
	{200, 32850, 1689089522}, {200, 16020, 1688986368}, {200, 19732, 1688905999}, {200, 61186, 1688718647}, {200, 80723, 1688616936},
	{211, 50015, 1689087139}, {211, 71658, 1688986368}, {211, 18253, 1688975221}, {211, 73798, 1688803287}, {211, 92090, 1688617305},
	{222, 25218, 1689087991}, {233, 38376, 1689087139}, {244, 12572, 1688986368}, {222, 75256, 1688803287},
}

// workedPages is the feed of 111, three a page.
var workedPages = [][]feedcore.ID{{32850, 25218, 50015}, {38376, 71658, 16020}, {12572, 18253, 19732}, {75256, 73798, 61186}, {92090, 80723}}

func workedFile() string {
	var b strings.Builder
	at := func(s int64) string { return time.Unix(s, 0).UTC().Format(time.RFC3339) }
	for _, u := range []feedcore.ID{111, 200, 211, 222, 233, 244, 900, 999} {
		fmt.Fprintf(&b, `{"type":"user","id":"%d","handle":"u%d"}`+"\n", u, u)
	}
	for _, f := range []feedcore.ID{200, 211, 222, 233, 244} {
		fmt.Fprintf(&b, `{"type":"follow","follower":"111","followee":"%d"}`+"\n", f)
	}
	for _, f := range []feedcore.ID{200, 211} { // a second follower each: big-V at threshold 1
		fmt.Fprintf(&b, `{"type":"follow","follower":"900","followee":"%d"}`+"\n", f)
	}
	for _, p := range workedPosts {
		fmt.Fprintf(&b, `{"type":"post","id":"%d","author":"%d","text":"post %d","createdAt":"%s"}`+"\n", p.id, p.author, p.id, at(p.at))
	}
	// What the rules leave out: 999, a stranger to 111, and 222's answer to
	// it; 233's repost of 32850, the first item after it.
	fmt.Fprintf(&b, `{"type":"post","id":"99901","author":"999","text":"a stranger","createdAt":"%s"}`+"\n", at(1689089000))
	fmt.Fprintf(&b, `{"type":"post","id":"99902","author":"222","text":"an answer","createdAt":"%s","replyTo":"99901"}`+"\n", at(1689089100))
	fmt.Fprintf(&b, `{"type":"repost","id":"99903","user":"233","post":"32850","createdAt":"%s"}`+"\n", at(1689090000))
	return b.String()
}

// TestWorkedExample pages 111's feed three at a time through the client,
// merged on read (111 has never read) and from its inbox (active).
func TestWorkedExample(t *testing.T) {
	for _, active := range []bool{false, true} {
		t.Run(fmt.Sprintf("active=%v", active), func(t *testing.T) {
			e := newEnv(t, feedcore.Options{BigVThreshold: 1})
			stop := feedtest.Workers(t, e.svc)
			if _, err := importer.Load(t.Context(), e.svc, strings.NewReader(workedFile())); err != nil {
				t.Fatal(err)
			}
			e.drain()
			c := e.as(111)
			if active {
				e.activate(c)
			} else {
				stop() // 111 is never upgraded: every page merges 200's and 211's outboxes
			}
			var after *string
			for i, want := range workedPages {
				page := must(client.FeedItems(t.Context(), c, client.Ptr(3), after))(t).FollowingFeed
				var got []feedcore.ID
				for _, ed := range page.Edges {
					id, err := feedcore.ParseID(ed.Node.DatabaseId)
					if err != nil {
						t.Fatal(err)
					}
					if ed.RepostedBy != nil {
						t.Errorf("page %d: a repost of %d by %s, which the window leaves out", i+1, id, ed.RepostedBy.Handle)
					}
					got = append(got, id)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("page %d: %v, want %v", i+1, got, want)
				}
				if page.PageInfo.HasNextPage != (i < len(workedPages)-1) {
					t.Fatalf("page %d: hasNextPage %v", i+1, page.PageInfo.HasNextPage)
				}
				after = page.PageInfo.EndCursor
			}
		})
	}
}
