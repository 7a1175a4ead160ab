package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/redisstore/storetest"
)

// rtOptions are the options of every service in the round trip: a low
// big-V threshold, so author 1 is big-V, and a fixed cursor key.
func rtOptions(prefix string) feedcore.Options {
	return feedcore.Options{Prefix: prefix, BigVThreshold: 3,
		CursorKey: []byte("export-test-cursor-key-0123456789ab"), MediaHosts: []string{"cdn.example.com"}}
}

// rtService opens a service on st under prefix with its workers; stop
// stops them.
func rtService(t *testing.T, st *storetest.Store, prefix string) (*feedcore.Service, func()) {
	t.Helper()
	svc, err := feedcore.New(context.Background(), st.Client, rtOptions(prefix))
	if err != nil {
		t.Fatal(err)
	}
	return svc, feedtest.Workers(t, svc)
}

const rtUsers = 12

// rtFixture: users 1..12; author 1 has 7 followers (big-V at threshold 3);
// posts with equal createdAt; live sessions in every state; likes and
// counts.
func rtFixture() string {
	var b strings.Builder
	for u := 1; u <= rtUsers; u++ {
		fmt.Fprintf(&b, `{"type":"user","id":"%d","handle":"u%d","displayName":"User <%d> & co","avatarUrl":"https://img.example/%d.png"}`+"\n", u, u, u, u)
	}
	edges := [][2]int{{2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {7, 1}, {8, 1},
		{3, 2}, {4, 2}, {5, 2}, {1, 2}, {4, 3}, {5, 3}, {9, 3}, {10, 11}, {11, 10}, {12, 2}}
	for i, e := range edges {
		if i%3 == 0 { // some with the time they were made (ties too), the rest in import order
			fmt.Fprintf(&b, `{"type":"follow","follower":"%d","followee":"%d","createdAt":"2024-03-01T00:00:%02dZ"}`+"\n", e[0], e[1], i%4)
			continue
		}
		fmt.Fprintf(&b, `{"type":"follow","follower":"%d","followee":"%d"}`+"\n", e[0], e[1])
	}
	// Relations: 12's block of 2 removes its follow; the mute that ended
	// is skipped, and not exported.
	b.WriteString(`{"type":"block","user":"12","target":"2","createdAt":"2024-04-01T00:00:00Z"}` + "\n")
	b.WriteString(`{"type":"mute","user":"3","target":"1","createdAt":"2024-04-01T00:00:01Z","until":"2099-01-01T00:00:00Z"}` + "\n")
	b.WriteString(`{"type":"mute","user":"4","target":"2","createdAt":"2024-04-01T00:00:02Z"}` + "\n")
	b.WriteString(`{"type":"mute","user":"6","target":"1","createdAt":"2024-04-01T00:00:03Z","until":"2020-01-01T00:00:00Z"}` + "\n")
	b.WriteString(`{"type":"hide","user":"5","target":"9","createdAt":"2024-04-01T00:00:04Z"}` + "\n")
	id := 1000
	for i := range 30 {
		author := 1 + i%3
		at := time.Date(2024, 5, 1, 12, 0, i/4, 0, time.UTC) // four posts a second: ties
		id++
		fmt.Fprintf(&b, `{"type":"post","id":"%d","author":"%d","text":"post %d of %d","createdAt":"%s"}`+"\n",
			id, author, i, author, at.Format(time.RFC3339Nano))
	}
	fmt.Fprintf(&b, `{"type":"post","id":"2001","author":"10","text":"ten","createdAt":"2024-05-01T12:00:00Z"}`+"\n")
	fmt.Fprintf(&b, `{"type":"post","id":"2002","author":"11","text":"eleven \"quoted\"","createdAt":"2024-05-01T12:00:00Z"}`+"\n")
	// Media: four images (one sensitive, with alt text and a thumbnail), a
	// GIF, media only with a content warning, and a dev-auth store's
	// loopback URL.
	b.WriteString(`{"type":"post","id":"2003","author":"1","text":"four","createdAt":"2024-05-01T12:00:01Z","media":[` +
		`{"url":"https://cdn.example.com/1.jpg","kind":"IMAGE","width":1080,"height":720,"altText":"a \"cat\" & a mat","thumbnailUrl":"https://cdn.example.com/1t.jpg","sensitive":true},` +
		`{"url":"https://cdn.example.com/2.gif?a=1&b=2","kind":"GIF","durationMs":1500},{"url":"https://cdn.example.com/3.jpg","kind":"IMAGE"},` +
		`{"url":"http://127.0.0.1:8080/demo/media/4.png","kind":"IMAGE","width":64,"height":64}]}` + "\n")
	b.WriteString(`{"type":"post","id":"2004","author":"2","createdAt":"2024-05-01T12:00:02Z","contentWarning":"flashing lights","media":[{"url":"https://cdn.example.com/v.mp4","kind":"VIDEO","durationMs":9000,"thumbnailUrl":"https://cdn.example.com/v.jpg"}]}` + "\n")
	// Replies (a thread; one to a post deleted later) and reposts (one of
	// a post deleted later: taken back, not exported).
	for _, l := range []string{
		`{"type":"post","id":"3001","author":"4","text":"four answers one","createdAt":"2024-05-01T13:00:00Z","replyTo":"1001"}`,
		`{"type":"post","id":"3002","author":"1","text":"one answers four","createdAt":"2024-05-01T13:00:01Z","replyTo":"3001"}`,
		`{"type":"post","id":"3003","author":"2","text":"two goes on","createdAt":"2024-05-01T13:00:02Z","replyTo":"1002"}`,
		`{"type":"repost","id":"4001","user":"3","post":"1001","createdAt":"2024-05-02T00:00:00Z"}`,
		`{"type":"repost","id":"4002","user":"5","post":"2001","createdAt":"2024-05-02T00:00:01Z"}`,
		`{"type":"repost","id":"4003","user":"2","post":"1004","createdAt":"2024-05-02T00:00:02Z"}`,
	} {
		b.WriteString(l + "\n")
	}
	lives := []string{
		`{"type":"live","id":"501","anchor":"1","title":"preview","scheduledStartAt":"2099-01-01T10:00:00Z"}`,
		`{"type":"live","id":"502","anchor":"1","title":"live now","scheduledStartAt":"2024-05-01T09:00:00Z","startedAt":"2024-05-01T09:01:00.25Z"}`,
		`{"type":"live","id":"503","anchor":"2","title":"replay","startedAt":"2024-04-01T09:00:00Z","endedAt":"2024-04-01T10:00:00Z"}`,
		`{"type":"live","id":"504","anchor":"2","title":"cancelled","scheduledStartAt":"2024-04-02T09:00:00Z","endedAt":"2024-04-01T10:00:00Z"}`,
		`{"type":"live","id":"505","anchor":"3","title":"replay tie","startedAt":"2024-04-01T08:00:00Z","endedAt":"2024-04-01T10:00:00Z"}`,
		`{"type":"live","id":"506","anchor":"10","title":"live too","startedAt":"2024-05-01T09:00:00Z","coverUrl":"https://cdn.example.com/cover.jpg"}`,
	}
	for _, l := range lives {
		b.WriteString(l + "\n")
	}
	for _, l := range [][2]int{{2, 1001}, {3, 1001}, {4, 1002}, {1, 1003}, {5, 1030}, {11, 2001}} {
		fmt.Fprintf(&b, `{"type":"like","user":"%d","post":"%d"}`+"\n", l[0], l[1])
	}
	for _, f := range [][2]int{{2, 1001}, {3, 1001}, {4, 1002}, {2, 1004}, {5, 2002}} {
		fmt.Fprintf(&b, `{"type":"favorite","user":"%d","post":"%d","createdAt":"2024-05-02T00:00:0%dZ"}`+"\n", f[0], f[1], f[0])
	}
	b.WriteString(`{"type":"favorite","user":"2","post":"1003"}` + "\n")
	b.WriteString(`{"type":"counts","post":"1001","likes":40,"comments":3,"reposts":2,"favorites":1}` + "\n")
	b.WriteString(`{"type":"counts","post":"1004","likes":0,"comments":9,"reposts":0,"favorites":0}` + "\n")
	return b.String()
}

// rtMutate changes the store through feedcore as the app would.
func rtMutate(t *testing.T, svc *feedcore.Service) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	p1, err := svc.Publish(ctx, 1, "big-V says hi")
	must(err)
	p2, err := svc.Publish(ctx, 2, "bob again")
	must(err)
	_, err = svc.Publish(ctx, 3, "cid speaks")
	must(err)
	_, err = svc.PublishPost(ctx, 5, feedcore.NewPost{Text: "five answers one", ReplyTo: 1001})
	must(err)
	for _, r := range [][2]feedcore.ID{{9, 1003}, {8, 1005}, {4, 1006}} {
		_, err := svc.Repost(ctx, r[0], r[1])
		must(err)
	}
	_, err = svc.UndoRepost(ctx, 8, 1005)
	must(err)
	_, err = svc.PublishPost(ctx, 3, feedcore.NewPost{ContentWarning: "spoilers", Media: []feedcore.Media{
		{URL: "https://cdn.example.com/m.jpg", Kind: feedcore.MediaImage, AltText: "what cid saw", Sensitive: true}}})
	must(err)
	must(svc.Delete(ctx, 1, 1004)) // with counters
	must(svc.Delete(ctx, 2, 1002)) // liked by 4
	for _, l := range [][2]feedcore.ID{{6, p1.ID}, {7, p1.ID}, {8, p2.ID}, {3, 1001}, {9, 1003}} {
		_, _, err := svc.Like(ctx, l[0], l[1])
		must(err)
	}
	_, _, err = svc.Unlike(ctx, 2, 1001)
	must(err)
	_, _, err = svc.Unlike(ctx, 1, 1003)
	must(err)
	for _, f := range [][2]feedcore.ID{{6, p1.ID}, {2, p2.ID}, {2, 1001}, {7, 1001}} {
		_, _, err := svc.FavoritePost(ctx, f[0], f[1])
		must(err)
	}
	_, _, err = svc.UnfavoritePost(ctx, 3, 1001)
	must(err)
	must(svc.Follow(ctx, 9, 1))
	must(svc.Follow(ctx, 12, 3))
	must(svc.Unfollow(ctx, 4, 2))
	must(svc.Unfollow(ctx, 3, 1))
	_, err = svc.ScheduleLiveSession(ctx, 3, feedcore.NewLive{Title: "scheduled here", ScheduledStartAt: time.Now().Add(48 * time.Hour),
		CoverURL: "https://cdn.example.com/c3.jpg"})
	must(err)
	st, err := svc.ScheduleLive(ctx, 2, "started here", time.Now().Add(time.Hour))
	must(err)
	_, err = svc.StartLive(ctx, 2, st.ID)
	must(err)
	cn, err := svc.ScheduleLive(ctx, 11, "called off", time.Now().Add(2*time.Hour))
	must(err)
	_, err = svc.EndLive(ctx, 11, cn.ID)
	must(err)
	_, err = svc.EndLive(ctx, 1, 502) // live now: a replay
	must(err)
}

// rtView is everything every reader sees.
type rtView struct {
	Feeds  map[feedcore.ID][]string // post id, author, time, text
	Lives  map[feedcore.ID][]string // session id, state, anchor, title, times
	Posts  map[feedcore.ID][]string // per viewer: post, counts, viewerHasLiked, viewerHasFavorited
	Lists  map[feedcore.ID][]string // per viewer: its favorites, every user's followers and following
	Counts []feedcore.GraphCounts
}

func rtObserve(t *testing.T, svc *feedcore.Service) rtView {
	t.Helper()
	ctx := context.Background()
	v := rtView{Feeds: map[feedcore.ID][]string{}, Lives: map[feedcore.ID][]string{}, Posts: map[feedcore.ID][]string{},
		Lists: map[feedcore.ID][]string{}}
	seen := map[feedcore.ID]bool{}
	var posts []feedcore.ID
	for u := feedcore.ID(1); u <= rtUsers; u++ {
		after := ""
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatal("feed does not end")
			}
			pg, err := svc.FollowingFeed(ctx, feedcore.FeedRequest{Viewer: u, First: 4, After: after})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range pg.Edges {
				p := e.Post
				line := fmt.Sprintf("%d by %d at %d: %q %+v cw=%q replying to %d", p.ID, p.Author, p.CreatedAt.UnixMilli(), p.Text, p.Media, p.ContentWarning, p.ReplyTo)
				if r := e.Repost; r != nil {
					line += fmt.Sprintf(", reposted by %d at %d", r.Author, r.CreatedAt.UnixMilli())
				}
				v.Feeds[u] = append(v.Feeds[u], line)
				if !seen[p.ID] {
					seen[p.ID] = true
					posts = append(posts, p.ID)
				}
			}
			if !pg.HasNext {
				break
			}
			after = pg.EndCursor
		}
		after = ""
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatal("live feed does not end")
			}
			pg, err := svc.LiveFeed(ctx, feedcore.LiveRequest{Viewer: u, First: 2, After: after})
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range pg.Edges {
				l := e.Session
				ms := func(t *time.Time) int64 {
					if t == nil {
						return 0
					}
					return t.UnixMilli()
				}
				v.Lives[u] = append(v.Lives[u], fmt.Sprintf("%d %s by %d %q %d %d %d cover=%q", l.ID, e.State, l.Anchor, l.Title,
					ms(l.ScheduledStartAt), ms(l.StartedAt), ms(l.EndedAt), l.CoverURL))
			}
			if !pg.HasNext {
				break
			}
			after = pg.EndCursor
		}
	}
	// Deleted posts are in no feed, before or after: a reader never sees
	// their counters (which stay in Redis until the post is purged).
	if seen[1002] || seen[1004] {
		t.Fatal("a deleted post is in a feed")
	}
	slices.Sort(posts)
	cs, err := svc.PostCounts(ctx, posts)
	if err != nil {
		t.Fatal(err)
	}
	for u := feedcore.ID(1); u <= rtUsers; u++ {
		liked, err := svc.Liked(ctx, u, posts)
		if err != nil {
			t.Fatal(err)
		}
		favorited, err := svc.Favorited(ctx, u, posts)
		if err != nil {
			t.Fatal(err)
		}
		for i, p := range posts {
			v.Posts[u] = append(v.Posts[u], fmt.Sprintf("%d: %+v liked=%v favorited=%v", p, cs[i], liked[i], favorited[i]))
		}
		v.Lists[u] = rtLists(t, svc, u)
	}
	ids := make([]feedcore.ID, rtUsers)
	for i := range ids {
		ids[i] = feedcore.ID(i + 1)
	}
	if v.Counts, err = svc.Counts(ctx, ids); err != nil {
		t.Fatal(err)
	}
	return v
}

// rtLists is what viewer's lists hold: its favorites, then every user's
// followers and following, in order.
func rtLists(t *testing.T, svc *feedcore.Service, viewer feedcore.ID) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for after := ""; ; {
		pg, err := svc.Favorites(ctx, viewer, 3, after)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range pg.Edges {
			out = append(out, fmt.Sprintf("favorite %d", e.Post.ID))
		}
		if !pg.HasNext {
			break
		}
		after = pg.EndCursor
	}
	for u := feedcore.ID(1); u <= rtUsers; u++ {
		for _, l := range []struct {
			name string
			list func(context.Context, feedcore.ID, feedcore.ID, int, string) (*feedcore.UserPage, error)
		}{{"followers", svc.Followers}, {"following", svc.Following}} {
			pg, err := l.list(ctx, viewer, u, 100, "")
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprintf("%s of %d: %v", l.name, u, pg.Users))
		}
	}
	return out
}

func rtExport(t *testing.T, svc *feedcore.Service) (string, ExportStats) {
	t.Helper()
	var buf bytes.Buffer
	st, err := Export(context.Background(), svc, &buf, ExportOptions{Batch: 5})
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != strings.Count(buf.String(), "\n") {
		t.Fatalf("export counted %d lines, wrote %d", st.Lines, strings.Count(buf.String(), "\n"))
	}
	return buf.String(), st
}

func sortedLines(s string) []string {
	ls := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	slices.Sort(ls)
	return ls
}

func rtImport(t *testing.T, svc *feedcore.Service, file string) Stats {
	t.Helper()
	st, err := LoadWith(context.Background(), svc, strings.NewReader(file), Options{
		Live: PutLive(svc), Counts: PutCounts(svc), BatchSize: 7})
	if err != nil {
		t.Fatal(err)
	}
	feedtest.Drain(t, svc)
	return st
}

func diffViews(t *testing.T, what string, want, got rtView) {
	t.Helper()
	if reflect.DeepEqual(want, got) {
		return
	}
	for u := feedcore.ID(1); u <= rtUsers; u++ {
		for name, m := range map[string][2]map[feedcore.ID][]string{"feed": {want.Feeds, got.Feeds}, "live": {want.Lives, got.Lives}, "posts": {want.Posts, got.Posts},
			"lists": {want.Lists, got.Lists}} {
			if !slices.Equal(m[0][u], m[1][u]) {
				t.Errorf("%s: user %d's %s:\n got %q\nwant %q", what, u, name, m[1][u], m[0][u])
			}
		}
	}
	if !reflect.DeepEqual(want.Counts, got.Counts) {
		t.Errorf("%s: follow counts %v, want %v", what, got.Counts, want.Counts)
	}
}

// TestExportRoundTrip: a store built by an import and by mutations is
// exported, emptied and imported again, and every reader sees exactly
// what they saw before: following feeds, live feeds, counts, likes and
// follow counts. Exporting the restored store, or an import of the export
// into another prefix, gives the same lines; importing the export twice
// changes nothing.
func TestExportRoundTrip(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	svc, stop := rtService(t, st, st.Prefix)
	rtImport(t, svc, rtFixture())
	rtMutate(t, svc)
	feedtest.Drain(t, svc)
	before := rtObserve(t, svc)
	if len(before.Feeds[2]) == 0 || len(before.Lives[5]) == 0 {
		t.Fatalf("the fixture shows too little: %+v", before)
	}
	shown := fmt.Sprint(before)
	for _, want := range []string{"https://cdn.example.com/1t.jpg", `cw="flashing lights"`, "Sensitive:true", `cover="https://cdn.example.com/cover.jpg"`} {
		if !strings.Contains(shown, want) {
			t.Fatalf("no reader sees %s", want)
		}
	}
	file, stats := rtExport(t, svc)
	if strings.Contains(file, `"follower":"12","followee":"2"`) || strings.Contains(file, `"2020-01-01`) {
		t.Errorf("the export holds a follow across a block or an ended mute:\n%s", file)
	}
	for _, id := range []string{"1002", "1004"} { // 1002 is still named as a reply's parent
		if strings.Contains(file, `"id":"`+id+`"`) || strings.Contains(file, `"post":"`+id+`"`) {
			t.Errorf("the export holds deleted post %s:\n%s", id, file)
		}
	}
	if stats.Lives != 9 || stats.Likes == 0 || stats.Counts == 0 || stats.Relations != 4 || stats.Favorites != 6 || stats.Reposts != 4 {
		t.Errorf("export stats %+v", stats)
	}
	for _, want := range []string{`"altText":"a \"cat\" & a mat"`, `"url":"https://cdn.example.com/2.gif?a=1&b=2"`, `"contentWarning":"spoilers"`,
		`"coverUrl":"https://cdn.example.com/c3.jpg"`, `"id":"2004","author":"2","createdAt"`,
		`"replyTo":"1002","replyToAuthor":"2"`, `"replyTo":"3001","replyToAuthor":"4"`,
		`{"type":"repost","id":"4001","user":"3","post":"1001","createdAt":"2024-05-02T00:00:00Z"}`} {
		if !strings.Contains(file, want) {
			t.Errorf("the export lacks %s:\n%s", want, file)
		}
	}
	if strings.Contains(file, `"id":"4003"`) || strings.Contains(file, `"user":"8","post":"1005"`) {
		t.Errorf("the export holds a repost taken back:\n%s", file)
	}
	// Each repost after its post.
	for _, l := range strings.Split(file, "\n") {
		var r repostLine
		if json.Unmarshal([]byte(l), &r) != nil || r.Type != "repost" {
			continue
		}
		if post := strings.Index(file, `{"type":"post","id":"`+r.Post+`"`); post < 0 || post > strings.Index(file, l) {
			t.Errorf("repost %s comes before its post %s", r.ID, r.Post)
		}
	}
	// Likes before counts, counts last.
	lastLike, firstCounts := strings.LastIndex(file, `"type":"like"`), strings.Index(file, `"type":"counts"`)
	if lastLike < 0 || firstCounts < lastLike {
		t.Errorf("counts lines do not follow every like line")
	}

	// Empty the store: every key of the test's prefix.
	stop()
	if err := storetest.DeletePrefix(ctx, st.Client, st.Prefix); err != nil {
		t.Fatal(err)
	}
	if keys, err := storetest.Keys(ctx, st.Client, st.Prefix); err != nil || len(keys) != 0 {
		t.Fatalf("store not empty: %d keys, %v", len(keys), err)
	}
	svc, _ = rtService(t, st, st.Prefix)
	rtImport(t, svc, file)
	diffViews(t, "after the round trip", before, rtObserve(t, svc))
	again, _ := rtExport(t, svc)
	if !slices.Equal(sortedLines(again), sortedLines(file)) {
		t.Errorf("the restored store exports\n%s\nwant\n%s", again, file)
	}

	// Rebuilt from the records: media, warnings and covers are on them.
	if _, err := svc.Rebuild(ctx, feedcore.RebuildOptions{Restart: true}); err != nil {
		t.Fatal(err)
	}
	feedtest.Drain(t, svc)
	diffViews(t, "after a rebuild", before, rtObserve(t, svc))

	// Idempotent: importing the same file again changes nothing.
	rtImport(t, svc, file)
	diffViews(t, "after a second import", before, rtObserve(t, svc))
	if twice, _ := rtExport(t, svc); !slices.Equal(sortedLines(twice), sortedLines(file)) {
		t.Errorf("after a second import the store exports\n%s\nwant\n%s", twice, file)
	}

	// Into a second prefix: the same lines.
	other := st.Prefix + "b:"
	t.Cleanup(func() { _ = storetest.DeletePrefix(context.Background(), st.Client, other) })
	svc2, _ := rtService(t, st, other)
	rtImport(t, svc2, file)
	if b, _ := rtExport(t, svc2); !slices.Equal(sortedLines(b), sortedLines(file)) {
		t.Errorf("an import into another prefix exports\n%s\nwant\n%s", b, file)
	}
}

// TestExportDuringWrites: a post published and liked after the export's
// posts pass went by is written before its like and counts lines, so the
// export imports.
func TestExportDuringWrites(t *testing.T) {
	st := storetest.New(t)
	svc, _ := rtService(t, st, st.Prefix)
	rtImport(t, svc, rtFixture())
	ctx := context.Background()
	var late feedcore.ID
	var buf bytes.Buffer
	_, err := Export(ctx, svc, &buf, ExportOptions{ProgressEvery: 1, Progress: func(s ExportStats) {
		if s.Lives == 1 && late == 0 { // the posts pass is over
			p, err := svc.Publish(ctx, 2, "published during the export")
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := svc.Like(ctx, 5, p.ID); err != nil {
				t.Fatal(err)
			}
			late = p.ID
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	file := buf.String()
	post := strings.Index(file, fmt.Sprintf(`{"type":"post","id":"%d"`, late))
	like := strings.Index(file, fmt.Sprintf(`{"type":"like","user":"5","post":"%d"}`, late))
	if post < 0 || like < post {
		t.Fatalf("the late post (at %d) does not come before its like (at %d):\n%s", post, like, file)
	}
	other := st.Prefix + "c:"
	t.Cleanup(func() { _ = storetest.DeletePrefix(context.Background(), st.Client, other) })
	svc2, _ := rtService(t, st, other)
	rtImport(t, svc2, file)
	cs, err := svc2.PostCounts(ctx, []feedcore.ID{late})
	if err != nil || cs[0].Likes != 1 {
		t.Fatalf("the late post's counts after import: %+v, %v", cs, err)
	}
}
