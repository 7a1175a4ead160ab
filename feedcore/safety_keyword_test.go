package feedcore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/cursor"
	"github.com/feedd/feedd/feedcore/safety"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

// benchKeywords are 100 keywords such as people filter: words, names and
// phrases of the texts' own alphabets (so most share their letters with
// a text), in English, French, German, Japanese, Korean and Thai.
var benchKeywords = strings.Split("election|politics|president|senate|vote|ballot|campaign|debate|spoiler|spoilers|"+
	"finale|season finale|episode|trailer|leak|leaked|plot twist|ending|crypto|bitcoin|"+
	"nft|airdrop|giveaway|promo code|discount|coupon|flash sale|sponsored|ad|#ad|"+
	"diet|weight loss|calories|keto|fasting|gym|workout|protein|supplement|detox|"+
	"war|attack|shooting|bomb|earthquake|flood|hurricane|wildfire|crash|accident|"+
	"covid|vaccine|virus|pandemic|lockdown|quarantine|outbreak|symptoms|hospital|doctor|"+
	"football|soccer|basketball|tennis|golf|formula 1|world cup|olympics|playoffs|referee|"+
	"élection|politique|grève|manifestation|impôts|wahl|politik|streik|steuern|fußball|"+
	"選挙|政治|ネタバレ|ダイエット|地震|선거|정치|스포일러|다이어트|지진|"+
	"เลือกตั้ง|การเมือง|สปอยล์|ลดน้ำหนัก|แผ่นดินไหว|taxes|strike|protest|riot|scandal", "|")

// BenchmarkKeywordPage matches a page of 20 posts against 100 filters
// (none matches: every filter is tried on every post), as one page's
// visiblePosts does, for texts in English (ASCII), French (NFC, so only
// folded), Japanese, and a mix that NFKC must rewrite (fullwidth letters,
// a ligature) and folding too.
//
//	go test ./feedcore -run '^$' -bench KeywordPage -benchmem
func BenchmarkKeywordPage(b *testing.B) {
	if len(benchKeywords) != MaxKeywordFilters {
		b.Fatalf("%d keywords", len(benchKeywords))
	}
	var flat []string
	for i, kw := range benchKeywords {
		flat = append(flat, store.Itoa(i+1), "1 1 0 "+kw)
	}
	ks := timeline.CompileKeywords(1, "v", flat)
	for _, c := range []struct{ name, text string }{
		{"ascii", "Just had the best coffee in town, the barista knew my name. Tomorrow: the big match at 8pm, then dinner with friends #weekend"},
		{"french", "Demain, journée portes ouvertes à Paris : les écoles et les musées seront gratuits. Vérifiez votre itinéraire avant de partir !"},
		{"japanese", "今日は東京で友達とランチをしました。午後は新宿の本屋に行って、新しい小説を買いました。とても楽しい一日でした！"},
		{"mixed", "Café crème à Montréal ☕ — «très bon», then 東京 and Ｆｕｌｌｗｉｄｔｈ letters, ﬁnally the match: ÉQUIPE vs Straße FC"},
	} {
		b.Run(c.name, func(b *testing.B) {
			v := &timeline.View{Keywords: ks, Now: 1}
			b.ReportAllocs()
			for b.Loop() {
				for range DefaultPageSize {
					if v.Filtered(c.text) {
						b.Fatal("a filter matched")
					}
				}
			}
		})
	}
}

// addFilter adds viewer's filter of keyword, failing the test on an error.
func addFilter(tb testing.TB, s *Service, viewer store.ID, keyword string, wholeWord bool, expires *time.Time) *KeywordFilter {
	tb.Helper()
	f, err := s.AddKeywordFilter(context.Background(), KeywordFilter{User: viewer, Keyword: keyword, WholeWord: wholeWord, ExpiresAt: expires})
	if err != nil {
		tb.Fatalf("add filter %q: %v", keyword, err)
	}
	return f
}

// feedTexts is the texts of viewer's whole following feed, paged by n.
func feedTexts(tb testing.TB, s *Service, viewer store.ID, n int) []string {
	tb.Helper()
	var out []string
	for _, id := range readAll(tb, s, viewer, n) {
		ps, err := s.Posts(context.Background(), []store.ID{id})
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, ps[0].Text)
	}
	return out
}

// TestKeywordFilterRecords: adding, updating, listing, finding and
// removing filters; the limit, expiry and bad input.
func TestKeywordFilterRecords(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)

	in := clk.now().Add(time.Hour)
	f := addFilter(t, s, 1, "  Spoiler  ", true, &in)
	if f.Keyword != "Spoiler" || !f.WholeWord || !f.ExpiresAt.Equal(in) || !f.CreatedAt.Equal(clk.now()) || f.ID == 0 || f.User != 1 {
		t.Fatalf("added %+v", f)
	}
	// The same keyword in another spelling updates that filter.
	clk.advance(time.Second)
	again := addFilter(t, s, 1, "ＳＰＯＩＬＥＲ", false, nil)
	if again.ID != f.ID || again.WholeWord || again.ExpiresAt != nil || !again.CreatedAt.Equal(f.CreatedAt) || again.Keyword != "ＳＰＯＩＬＥＲ" {
		t.Fatalf("adding the keyword again: %+v, first %+v", again, f)
	}
	other := addFilter(t, s, 1, "plot twist", true, nil)
	list, err := s.KeywordFilters(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].ID != other.ID || !sameFilter(list[1], *again) {
		t.Fatalf("filters %+v, want the newest first: %+v, %+v", list, other, again)
	}
	if got, err := s.KeywordFilter(ctx, 1, f.ID); err != nil || !sameFilter(*got, *again) {
		t.Fatalf("KeywordFilter(own) = %+v, %v", got, err)
	}
	// Another viewer finds nothing and removes nothing; the same keyword is
	// another filter of theirs.
	if _, err := s.KeywordFilter(ctx, 2, f.ID); store.CodeOf(err) != apierr.NotFound {
		t.Errorf("another viewer reads the filter: %v, want NOT_FOUND", err)
	}
	if err := s.RemoveKeywordFilter(ctx, 2, f.ID); store.CodeOf(err) != apierr.NotFound {
		t.Errorf("another viewer removes the filter: %v, want NOT_FOUND", err)
	}
	if theirs := addFilter(t, s, 2, "spoiler", true, nil); theirs.ID == f.ID {
		t.Errorf("two viewers' filters of one keyword share id %d", f.ID)
	}

	for _, c := range []struct {
		what    string
		keyword string
		expires *time.Time
		want    string
	}{
		{"an empty keyword", "", nil, "keyword"},
		{"a blank keyword", " \t ", nil, "keyword"},
		{"a keyword of 101 characters", strings.Repeat("é", 101), nil, "keyword"},
		{"a control character", "bad\x07word", nil, "keyword"},
		{"a keyword that normalizes too long", strings.Repeat("\uFDFA", 20), nil, "keyword"},
		{"an end now", "late", ptr(clk.now()), "expiresAt"},
		{"an end in the past", "late", ptr(clk.now().Add(-time.Minute)), "expiresAt"},
	} {
		_, err := s.AddKeywordFilter(ctx, KeywordFilter{User: 1, Keyword: c.keyword, WholeWord: true, ExpiresAt: c.expires})
		if store.CodeOf(err) != apierr.BadInput || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want BAD_USER_INPUT naming %s", c.what, err, c.want)
		}
	}
	if f := addFilter(t, s, 1, strings.Repeat("é", 100), true, nil); len([]rune(f.Keyword)) != 100 {
		t.Errorf("a keyword of 100 characters: %q", f.Keyword)
	}

	// The limit: expired filters do not count toward it.
	soon := clk.now().Add(time.Minute)
	addFilter(t, s, 1, "soon gone", true, &soon)
	for i := 0; ; i++ {
		if list, _ := s.KeywordFilters(ctx, 1); len(list) == MaxKeywordFilters {
			break
		}
		addFilter(t, s, 1, fmt.Sprintf("word%d", i), true, nil)
	}
	_, err = s.AddKeywordFilter(ctx, KeywordFilter{User: 1, Keyword: "one more", WholeWord: true})
	if store.CodeOf(err) != apierr.BadInput || !strings.Contains(err.Error(), "keyword filters") {
		t.Fatalf("filter %d: %v, want BAD_USER_INPUT naming the limit", MaxKeywordFilters+1, err)
	}
	addFilter(t, s, 1, "plot twist", false, nil) // an update at the limit
	clk.advance(2 * time.Minute)
	if _, err := s.KeywordFilter(ctx, 1, safety.KeywordFilterID(1, "soon gone")); store.CodeOf(err) != apierr.NotFound {
		t.Errorf("an expired filter is found: %v", err)
	}
	if list, _ := s.KeywordFilters(ctx, 1); len(list) != MaxKeywordFilters-1 {
		t.Errorf("%d filters listed once one expired, want %d", len(list), MaxKeywordFilters-1)
	}
	addFilter(t, s, 1, "one more", true, nil) // in the expired one's place
	if n, _ := s.Do(ctx, s.Redis.B().Hlen().Key(s.Keys.KeywordFilters(1)).Build()).AsInt64(); n != MaxKeywordFilters {
		t.Errorf("%d records after an add past an expired filter, want it pruned (%d)", n, MaxKeywordFilters)
	}

	// Removing: once, then NOT_FOUND; the last one takes the version along.
	if err := s.RemoveKeywordFilter(ctx, 2, safety.KeywordFilterID(2, "spoiler")); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveKeywordFilter(ctx, 2, safety.KeywordFilterID(2, "spoiler")); store.CodeOf(err) != apierr.NotFound {
		t.Errorf("removing twice: %v, want NOT_FOUND", err)
	}
	if n, _ := s.Do(ctx, s.Redis.B().Exists().Key(s.Keys.KeywordFilters(2), s.Keys.KeywordVersion(2)).Build()).AsInt64(); n != 0 {
		t.Errorf("%d keys of viewer 2's filters left after removing the last", n)
	}
	if _, err := s.AddKeywordFilter(ctx, KeywordFilter{Keyword: "anon", WholeWord: true}); store.CodeOf(err) != apierr.Unauthenticated {
		t.Errorf("an anonymous add: %v, want UNAUTHENTICATED", err)
	}
}

func ptr[T any](v T) *T { return &v }

// sameFilter compares two filters, their times by the instant.
func sameFilter(a, b KeywordFilter) bool {
	sameEnd := (a.ExpiresAt == nil) == (b.ExpiresAt == nil) && (a.ExpiresAt == nil || a.ExpiresAt.Equal(*b.ExpiresAt))
	return a.ID == b.ID && a.User == b.User && a.Keyword == b.Keyword && a.WholeWord == b.WholeWord &&
		a.CreatedAt.Equal(b.CreatedAt) && sameEnd
}

// filterScene is a viewer on each feed path: 1 reads its inbox (active,
// complete), 2 merges on read (9 is big-V, and 2 is never upgraded: the
// workers stop once the scene is set). Both follow 9 and 8; 9 and 8 each
// publish texts, and 1 and 2 one post each of their own.
func filterScene(t *testing.T, o Options, texts ...string) *Service {
	t.Helper()
	o.BigVThreshold = 2
	s := newService(t, storetest.New(t), o)
	defer startWorkers(t, s, WorkerOptions{})()
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 8, 9)
	follow(t, s, 1, []store.ID{8, 9})
	follow(t, s, 2, []store.ID{8, 9})
	follow(t, s, 3, []store.ID{9}) // 9 has two followers more than the threshold
	if err := s.Touch(ctx, 1); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	for _, text := range texts {
		for _, a := range []store.ID{8, 9} {
			if _, err := s.Publish(ctx, a, text); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, v := range []store.ID{1, 2} {
		if _, err := s.Publish(ctx, v, "my own spoiler"); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	if !isBigV(t, s, 9) {
		t.Fatal("9 is not big-V")
	}
	if c, _ := s.Do(ctx, s.Redis.B().Hget().Key(s.Keys.Reader(2)).Field("c").Build()).ToString(); c == "1" {
		t.Fatal("viewer 2's inbox is complete: it would not merge")
	}
	return s
}

// TestKeywordFiltersApplyOnBothPaths: a filter hides matching posts of
// followees, not the viewer's own, on the inbox and the merged path, for
// every page size both ways; the pages fill past filtered posts (many in a
// row) and the cursor advances; removing it shows them again at once.
func TestKeywordFiltersApplyOnBothPaths(t *testing.T) {
	var texts []string
	for i := range 30 {
		texts = append(texts, fmt.Sprintf("spoiler %d", i), fmt.Sprintf("fine %d", i))
	}
	texts = append(texts, slices.Repeat([]string{"SPOILER!"}, 40)...) // the newest: a long filtered run
	s := filterScene(t, Options{}, texts...)
	for _, v := range []store.ID{1, 2} {
		f := addFilter(t, s, v, "spoiler", true, nil)
		want := 1 + 2*30 // its own post, and 30 fine posts of each of 8 and 9
		for _, n := range []int{1, 3, 20, 100} {
			got := feedTexts(t, s, v, n)
			if len(got) != want {
				t.Fatalf("viewer %d, pages of %d: %d posts, want %d", v, n, len(got), want)
			}
			for _, text := range got {
				if strings.Contains(strings.ToLower(text), "spoiler") && text != "my own spoiler" {
					t.Fatalf("viewer %d, pages of %d: %q shown", v, n, text)
				}
			}
			if back := readAllBackward(t, s, v, n); !slices.Equal(back, readAll(t, s, v, n)) {
				t.Fatalf("viewer %d: paging backward gives %v", v, back)
			}
		}
		if err := s.RemoveKeywordFilter(context.Background(), v, f.ID); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, s, v, 20); len(got) != 2*len(texts)+1 {
			t.Fatalf("viewer %d after removing its filter: %d posts, want %d", v, len(got), 2*len(texts)+1)
		}
	}
}

// TestKeywordFilterChangeReachesEveryReplica: a change made through one
// replica applies to the next page of another that has the filters
// compiled, in the same round trips, and an expired filter stops applying
// at once.
func TestKeywordFilterChangeReachesEveryReplica(t *testing.T) {
	clk := clockAt(testEpoch)
	st := storetest.New(t)
	o := Options{Now: clk.now}
	a := newService(t, st, o)
	startWorkers(t, a, WorkerOptions{})
	b := newService(t, st, o)
	ctx := context.Background()
	mustUsers(t, a, 1, 2)
	follow(t, a, 1, []store.ID{2})
	for _, text := range []string{"about cats", "about dogs", "about birds"} {
		if _, err := a.Publish(ctx, 2, text); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, a)
	shown := func(what string, want ...string) {
		t.Helper()
		rctx, rt := roundtrip.NewContext(ctx)
		pg, err := b.FollowingFeed(rctx, FeedRequest{Viewer: 1, First: 10})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, e := range pg.Edges {
			got = append(got, e.Post.Text)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: replica b shows %q, want %q", what, got, want)
		}
		if rt.Trips() > 2 {
			t.Errorf("%s: a page cost %d round trips", what, rt.Trips())
		}
	}
	shown("no filter", "about birds", "about dogs", "about cats")
	soon := clk.now().Add(time.Minute)
	cats := addFilter(t, a, 1, "cats", true, &soon)
	shown("a filter added on a", "about birds", "about dogs")
	addFilter(t, a, 1, "dogs", true, nil)
	shown("a second filter", "about birds")
	if err := a.RemoveKeywordFilter(ctx, 1, safety.KeywordFilterID(1, "dogs")); err != nil {
		t.Fatal(err)
	}
	shown("the second removed", "about birds", "about dogs")
	clk.advance(time.Minute)
	shown("the first expired", "about birds", "about dogs", "about cats")
	if _, err := a.KeywordFilter(ctx, 1, cats.ID); store.CodeOf(err) != apierr.NotFound {
		t.Errorf("the expired filter: %v, want NOT_FOUND", err)
	}
	addFilter(t, a, 1, "birds", true, nil)
	shown("a filter added after", "about dogs", "about cats")
}

// TestKeywordFiltersOnTheLiveFeed: titles the viewer filters leave every
// section of the live feed (live, preview, replay), on a first page and
// on later pages of its snapshot; a snapshot whose entries are all
// filtered for longer than the read bound ends a page short with a
// cursor that goes on in it.
func TestKeywordFiltersOnTheLiveFeed(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	follow(t, s, 1, []store.ID{2, 3})
	schedule := func(anchor store.ID, title string, in time.Duration) *LiveSession {
		t.Helper()
		l, err := s.ScheduleLive(ctx, anchor, title, clk.now().Add(in))
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	var want []store.ID
	// Replays: one filtered, one not.
	for _, title := range []string{"Flash SALE replay", "cooking replay"} {
		l := schedule(2, title, time.Minute)
		if _, err := s.StartLive(ctx, 2, l.ID); err != nil {
			t.Fatal(err)
		}
		clk.advance(time.Second)
		if _, err := s.EndLive(ctx, 2, l.ID); err != nil {
			t.Fatal(err)
		}
		if title == "cooking replay" {
			want = append([]store.ID{l.ID}, want...)
		}
	}
	live := schedule(3, "sale now on", time.Minute)
	if _, err := s.StartLive(ctx, 3, live.ID); err != nil {
		t.Fatal(err)
	}
	var previews []store.ID
	for i := range 2*timeline.MaxRounds*(3+1) + 5 { // more filtered previews in a row than 8 rounds of 3+1 read
		previews = append(previews, schedule(3, fmt.Sprintf("sale %d", i), time.Duration(10+i)*time.Minute).ID)
	}
	keep := schedule(3, "gardening", 24*time.Hour)
	want = append([]store.ID{keep.ID}, want...)
	drain(t, s)
	// A page taken before the filter: the live session, first in the
	// snapshot, then the previews, each filtered from the next page on.
	before, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 1, Device: "tablet"}) // pageLive's pages take the default device's snapshot
	if err != nil {
		t.Fatal(err)
	}
	if len(before.Edges) != 1 || before.Edges[0].Session.ID != live.ID {
		t.Fatalf("the first page before the filter: %+v, want the live session", before.Edges)
	}
	addFilter(t, s, 1, "sale", true, nil)

	ids := func(ws []liveWant) []store.ID {
		var out []store.ID
		for _, w := range ws {
			out = append(out, w.id)
		}
		return out
	}
	for _, n := range []int{1, 3, 20, 100} {
		if got := ids(pageLive(t, s, 1, n, nil)); !slices.Equal(got, want) {
			t.Errorf("pages of %d: %v, want %v", n, got, want)
		}
	}
	// The page of 3 after the one taken before the filter reads on in the
	// snapshot past filtered previews up to the read bound: short, and its
	// cursor goes on inside the snapshot.
	first, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 3, After: before.EndCursor, Device: "tablet"})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Edges) != 0 || !first.HasNext || first.EndCursor == "" || first.EndCursor == before.EndCursor {
		t.Fatalf("the next page of 3: %d edges, hasNext %v: want a short page whose cursor goes on", len(first.Edges), first.HasNext)
	}
	c, err := s.OpenCursor(ctx, first.EndCursor, 1)
	if err != nil || c.State != cursor.StateSnapshot {
		t.Fatalf("its cursor: %+v, %v; want one inside the snapshot", c, err)
	}
	// A filter removed shows the snapshot's sessions on its next page.
	if err := s.RemoveKeywordFilter(ctx, 1, safety.KeywordFilterID(1, "sale")); err != nil {
		t.Fatal(err)
	}
	next, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 3, After: first.EndCursor, Device: "tablet"})
	if err != nil {
		t.Fatal(err)
	}
	if len(next.Edges) != 3 || next.Edges[0].Session.ID != previews[timeline.MaxRounds*4] {
		t.Errorf("the next page once the filter is gone: %+v; want previews from the %dth", next.Edges, timeline.MaxRounds*4)
	}
}

// TestKeywordFilterPageCost: a viewer with 100 filters of 100 characters
// pays, for a warm followingFeed page, the same round trips and at most
// twice the Redis reply bytes of a viewer with none, on another replica
// than the one that wrote them (a first page there compiles them).
//
//	FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./feedcore -run KeywordFilterPageCost -v
func TestKeywordFilterPageCost(t *testing.T) {
	st := storetest.New(t)
	s := newService(t, st, Options{})
	startWorkers(t, s, WorkerOptions{})
	cs, bytes := countedService(t, st, Options{})
	ctx := context.Background()
	const plain, filtering = store.ID(1), store.ID(2)
	authors := idRange(11, 10)
	mustUsers(t, s, plain, filtering)
	putUsers(t, s, authors)
	follow(t, s, plain, authors)
	follow(t, s, filtering, authors)
	for round := range 3 {
		for _, a := range authors {
			if _, err := s.Publish(ctx, a, fmt.Sprintf("post %d of author %d, with a few more words as posts have", round, a)); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, v := range []store.ID{plain, filtering} {
		if err := s.Touch(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	for i := range MaxKeywordFilters {
		kw := fmt.Sprintf("%03d %s", i, strings.Repeat("x", MaxKeywordLen-4))
		addFilter(t, s, filtering, kw, true, nil)
	}
	cost := func(viewer store.ID) (cold int64, trips int, warm int64) {
		t.Helper()
		page := func(ctx context.Context) int64 {
			before := bytes.Load()
			pg, err := cs.FollowingFeed(ctx, FeedRequest{Viewer: viewer, First: 20})
			if err != nil {
				t.Fatal(err)
			}
			if len(pg.Edges) != 20 {
				t.Fatalf("viewer %d: page of %d, want 20", viewer, len(pg.Edges))
			}
			return bytes.Load() - before
		}
		cold = page(ctx) // compiles the filters, warms the client-side cache
		rctx, rt := roundtrip.NewContext(ctx)
		warm = page(rctx)
		return cold, rt.Trips(), warm
	}
	_, baseTrips, base := cost(plain)
	cold, trips, n := cost(filtering)
	t.Logf("a warm page: %d round trips, %d reply bytes with no filter; %d, %d with %d filters of %d characters (%d on the replica's first page, which reads them)",
		baseTrips, base, trips, n, MaxKeywordFilters, MaxKeywordLen, cold)
	if trips != baseTrips {
		t.Errorf("with %d filters a page costs %d round trips, want %d", MaxKeywordFilters, trips, baseTrips)
	}
	if n > 2*base {
		t.Errorf("with %d filters a page reads %d reply bytes, more than twice %d", MaxKeywordFilters, n, base)
	}
	if cold < int64(MaxKeywordFilters*MaxKeywordLen) {
		t.Errorf("the replica's first page read %d reply bytes: it cannot have read the filters", cold)
	}
}

// TestKeywordFiltersLeaveWithTheAccount: deleting an account removes its
// filters.
func TestKeywordFiltersLeaveWithTheAccount(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1)
	addFilter(t, s, 1, "gone", true, nil)
	if err := s.DeleteAccount(ctx, 1, "u1"); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Do(ctx, s.Redis.B().Exists().Key(s.Keys.KeywordFilters(1), s.Keys.KeywordVersion(1)).Build()).AsInt64(); n != 0 {
		t.Errorf("%d keys of the deleted account's filters left", n)
	}
}

// TestKeywordFiltersExportImportRebuild: export writes the filters in
// force, PutKeywordFilters records them again with their ids and times,
// and rebuild prunes expired ones, derives ids anew and gives filters
// missing a version one.
func TestKeywordFiltersExportImportRebuild(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	soon, later := clk.now().Add(time.Minute), clk.now().Add(time.Hour)
	addFilter(t, s, 1, "Soon", true, &soon)
	kept := []*KeywordFilter{addFilter(t, s, 1, "later", false, &later), addFilter(t, s, 2, "Ｎｅｖｅｒ", true, nil)}
	clk.advance(2 * time.Minute)
	var got []KeywordFilter
	err := s.Export(ctx, ExportSink{User: func(User) error { return nil }, Follow: func(Edge, time.Time) error { return nil },
		Relation: func(Relation) error { return nil }, Post: func(*content.Post) error { return nil },
		Live: func(*LiveSession) error { return nil }, Like: func(store.ID, store.ID) error { return nil },
		Counts:        func(store.ID, PostCounts) error { return nil },
		KeywordFilter: func(f KeywordFilter) error { got = append(got, f); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(got, func(a, b KeywordFilter) int { return int(a.User) - int(b.User) })
	if len(got) != 2 || !sameFilter(got[0], *kept[0]) || !sameFilter(got[1], *kept[1]) {
		t.Fatalf("exported %+v, want %+v, %+v", got, *kept[0], *kept[1])
	}

	other := testService(t, Options{Now: clk.now})
	mustUsers(t, other, 1, 2)
	expired := KeywordFilter{User: 1, Keyword: "expired", WholeWord: true, ExpiresAt: &soon}
	if n, err := other.PutKeywordFilters(ctx, append(got, expired)); n != 3 || err != nil {
		t.Fatalf("PutKeywordFilters = %d, %v; want all 3 applied (the expired one skipped)", n, err)
	}
	for _, f := range kept {
		if back, err := other.KeywordFilter(ctx, f.User, f.ID); err != nil || !sameFilter(*back, *f) {
			t.Errorf("imported %+v, %v; want %+v", back, err, *f)
		}
	}
	if n, err := other.PutKeywordFilters(ctx, []KeywordFilter{{User: 7, Keyword: "x"}}); n != 0 || store.CodeOf(err) != apierr.NotFound {
		t.Errorf("a filter of a missing user: %d, %v; want NOT_FOUND", n, err)
	}
	if n, err := other.PutKeywordFilters(ctx, []KeywordFilter{{User: 1, Keyword: "ok"}, {User: 1, Keyword: " "}}); n != 1 || store.CodeOf(err) != apierr.BadInput {
		t.Errorf("a blank keyword second: %d, %v; want 1 applied, then BAD_USER_INPUT", n, err)
	}

	// Rebuild: an expired record and one under a stale id go, a version
	// comes back.
	stale := KeywordFilter{User: 2, Keyword: "stale id", WholeWord: true, CreatedAt: clk.now()}
	if err := s.Do(ctx, s.Redis.B().Hset().Key(s.Keys.KeywordFilters(2)).FieldValue().FieldValue("12345", safety.KeywordRecord(stale)).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	if err := s.Do(ctx, s.Redis.B().Del().Key(s.Keys.KeywordVersion(2)).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	st, err := s.Rebuild(ctx, RebuildOptions{Restart: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.KeywordFilters != 2 {
		t.Errorf("rebuild rewrote the filters of %d users, want 2", st.KeywordFilters)
	}
	for u, want := range map[store.ID][]store.ID{1: {kept[0].ID}, 2: {kept[1].ID, safety.KeywordFilterID(2, "stale id")}} {
		m, _ := s.Do(ctx, s.Redis.B().Hgetall().Key(s.Keys.KeywordFilters(u)).Build()).AsStrMap()
		var ids []store.ID
		for id := range m {
			n, _ := store.ParseID(id)
			ids = append(ids, n)
		}
		slices.Sort(ids)
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Errorf("user %d's filters after rebuild: %v, want %v", u, ids, want)
		}
		if v, _ := s.Do(ctx, s.Redis.B().Get().Key(s.Keys.KeywordVersion(u)).Build()).ToString(); len(v) != 8 {
			t.Errorf("user %d's filters have version %q after rebuild", u, v)
		}
	}
	if st, err := s.Rebuild(ctx, RebuildOptions{Restart: true}); err != nil || st.KeywordFilters != 0 {
		t.Errorf("a second rebuild rewrote %d users' filters (%v), want none", st.KeywordFilters, err)
	}
}
