package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/gqltype"
)

// Keyword filters (issue 19), seen through the client, on both feed
// paths: ann reads her pushed inbox; dan merges bob's outbox on read (bob
// is big-V, and dan is never upgraded: the workers stop once the scene is
// set, before dan's first read).

// filterTexts are bob's posts: one for each normalization case, whole
// word against substring, and each script written without spaces.
var filterTexts = []string{
	"ＦＯＯＴＢＡＬＬ tonight", // fullwidth letters
	"un café noir",     // composed and decomposed accents
	"un cafe\u0301 au lait",
	"the ﬁnal score", // the ligature
	"my cat sleeps",
	"concatenate strings",
	// Chinese (Han), Japanese (kana), Korean (a noun with its particle
	// attached), Thai.
	"我在東京旅行",
	"うちのネコがかわいい",
	"사과를 먹었다",
	"ฉันรักแมวมาก",
	"plain words",
}

// filterScene sets the scene: ann (1) and dan (4) follow bob (2, big-V)
// and cat (3); bob posts filterTexts, each reader posts "my own cat";
// ann's inbox holds everything. It returns the env and ann and dan.
func filterScene(t *testing.T, opts feedcore.Options) (*env, graphql.Client, graphql.Client) {
	t.Helper()
	opts.BigVThreshold = 2
	e := newEnv(t, opts)
	e.users("ann", "bob", "cat", "dan", "eve")
	stop := feedtest.Workers(t, e.svc)
	ann, bob, dan := e.as(1), e.as(2), e.as(4)
	follows(t, map[graphql.Client][]string{ann: {"2", "3"}, dan: {"2", "3"}, e.as(5): {"2"}})
	e.activate(ann)
	for _, text := range filterTexts {
		publish(t, bob, text)
	}
	publish(t, ann, "my own cat")
	publish(t, dan, "my own cat")
	e.drain()
	stop()
	return e, ann, dan
}

// feedTexts is the texts of c's whole following feed, paged 3 at a time.
func feedTexts(t *testing.T, c graphql.Client) []string {
	t.Helper()
	var out []string
	for _, p := range feedPosts(t, c, 3) {
		out = append(out, p.Text)
	}
	slices.Sort(out)
	return out
}

// without is filterTexts and "my own cat", less the texts hidden.
func without(hidden ...string) []string {
	out := []string{"my own cat"}
	for _, text := range filterTexts {
		if !slices.Contains(hidden, text) {
			out = append(out, text)
		}
	}
	slices.Sort(out)
	return out
}

// addFilter adds c's viewer's filter and returns it.
func addFilter(t *testing.T, c graphql.Client, keyword string, wholeWord *bool, expiresAt *time.Time) client.KeywordFilterFields {
	t.Helper()
	return must(client.AddKeywordFilter(t.Context(), c, keyword, wholeWord, expiresAt))(t).AddKeywordFilter.Filter.KeywordFilterFields
}

// TestKeywordFilters: each matching rule hides exactly the posts it
// should, at once, on both paths, never the viewer's own; removing the
// filter shows them again at once.
func TestKeywordFilters(t *testing.T) {
	e, ann, dan := filterScene(t, feedcore.Options{})
	ctx := t.Context()
	for _, reader := range []graphql.Client{ann, dan} {
		if got := feedTexts(t, reader); !slices.Equal(got, without()) {
			t.Fatalf("before any filter: %q", got)
		}
	}
	anywhere := client.Ptr(false)
	for _, c := range []struct {
		what      string
		keyword   string
		wholeWord *bool
		hides     []string
	}{
		{"fullwidth letters", "football", nil, []string{filterTexts[0]}},
		{"a fullwidth keyword", "ｆｏｏｔｂａｌｌ", nil, []string{filterTexts[0]}},
		{"a composed keyword", "CAFÉ", nil, []string{filterTexts[1], filterTexts[2]}},
		{"a decomposed keyword", "cafe\u0301", nil, []string{filterTexts[1], filterTexts[2]}},
		{"an unaccented keyword", "cafe", nil, nil},
		{"the ligature in the text", "Final", nil, []string{filterTexts[3]}},
		{"the ligature in the keyword", "ﬁnal", nil, []string{filterTexts[3]}},
		{"a whole word", "cat", nil, []string{filterTexts[4]}},
		{"a substring", "cat", anywhere, []string{filterTexts[4], filterTexts[5]}},
		{"Han", "東京", nil, []string{filterTexts[6]}},
		{"kana", "ネコ", nil, []string{filterTexts[7]}},
		{"Hangul", "사과", nil, []string{filterTexts[8]}},
		{"Thai", "แมว", nil, []string{filterTexts[9]}},
		{"a phrase", "plain words", nil, []string{filterTexts[10]}},
	} {
		for name, reader := range map[string]graphql.Client{"ann (inbox)": ann, "dan (merged)": dan} {
			f := addFilter(t, reader, c.keyword, c.wholeWord, nil)
			if f.WholeWord != (c.wholeWord == nil) {
				t.Errorf("%s: %q has wholeWord %v", c.what, c.keyword, f.WholeWord)
			}
			if got := feedTexts(t, reader); !slices.Equal(got, without(c.hides...)) {
				t.Errorf("%s, %s filtering %q: the feed shows %q, want %q", c.what, name, c.keyword, got, without(c.hides...))
			}
			if r := must(client.RemoveKeywordFilter(ctx, reader, f.Id))(t).RemoveKeywordFilter; r.RemovedFilterId != f.Id {
				t.Errorf("removeKeywordFilter(%s) = %s", f.Id, r.RemovedFilterId)
			}
			if got := feedTexts(t, reader); !slices.Equal(got, without()) {
				t.Errorf("%s, %s after removing %q: the feed shows %q", c.what, name, c.keyword, got)
			}
		}
	}

	// Another replica over the same store, which has compiled ann's
	// filters, applies a change made through the first at once.
	other := newEnvOn(t, e.st.Client, e.st.Prefix, feedcore.Options{BigVThreshold: 2}).as(1)
	f := addFilter(t, ann, "tonight", nil, nil)
	if got := feedTexts(t, other); !slices.Equal(got, without(filterTexts[0])) {
		t.Errorf("the other replica with ann's filter: %q", got)
	}
	addFilter(t, ann, "sleeps", nil, nil)
	if got := feedTexts(t, other); !slices.Equal(got, without(filterTexts[0], filterTexts[4])) {
		t.Errorf("the other replica after a second filter: %q", got)
	}
	must(client.RemoveKeywordFilter(ctx, ann, f.Id))(t)
	if got := feedTexts(t, other); !slices.Equal(got, without(filterTexts[4])) {
		t.Errorf("the other replica after the first was removed: %q", got)
	}
}

// TestKeywordFilterExpiry: a filter with an end hides posts until then,
// on both paths; past it, it applies no more, is not listed or found, and
// removing it is NOT_FOUND.
func TestKeywordFilterExpiry(t *testing.T) {
	clk := &clock{}
	_, ann, dan := filterScene(t, feedcore.Options{Now: clk.now})
	ctx := t.Context()
	for name, reader := range map[string]graphql.Client{"ann (inbox)": ann, "dan (merged)": dan} {
		end := clk.now().Add(time.Minute)
		f := addFilter(t, reader, "plain", nil, &end)
		if f.ExpiresAt == nil || !f.ExpiresAt.Equal(end.Truncate(time.Millisecond)) {
			t.Errorf("%s: expiresAt %v, want %v", name, f.ExpiresAt, end)
		}
		if got := feedTexts(t, reader); !slices.Equal(got, without(filterTexts[10])) {
			t.Errorf("%s before the end: %q", name, got)
		}
		clk.advance(61 * time.Second)
		if got := feedTexts(t, reader); !slices.Equal(got, without()) {
			t.Errorf("%s past the end: %q", name, got)
		}
		if fs := must(client.KeywordFilters(ctx, reader))(t).KeywordFilters; len(fs) != 0 {
			t.Errorf("%s: an expired filter is listed: %+v", name, fs)
		}
		_, err := client.KeywordFilterNode(ctx, reader, f.Id)
		wantCode(t, name+": node of an expired filter", err, "NOT_FOUND")
		_, err = client.RemoveKeywordFilter(ctx, reader, f.Id)
		wantCode(t, name+": removing an expired filter", err, "NOT_FOUND")
	}
}

// TestKeywordFilterInput: what the viewer's list and node(id:) show,
// bad input, the limit of 100, and ids that are not the viewer's.
func TestKeywordFilterInput(t *testing.T) {
	clk := &clock{}
	e := newEnv(t, feedcore.Options{Now: clk.now})
	e.users("ann", "bob")
	ann, bob := e.as(1), e.as(2)
	ctx := t.Context()
	post := publish(t, bob, "a post")

	first := addFilter(t, ann, "  spoiler ", nil, nil)
	if first.Keyword != "spoiler" || !first.WholeWord || first.ExpiresAt != nil {
		t.Errorf("addKeywordFilter(spoiler) = %+v", first)
	}
	clk.advance(time.Second)
	second := addFilter(t, ann, "plot twist", client.Ptr(false), nil)
	// The same keyword in another spelling updates that filter.
	end := clk.now().Add(time.Hour)
	updated := addFilter(t, ann, "SPOILER", client.Ptr(true), &end)
	if updated.Id != first.Id || !updated.CreatedAt.Equal(first.CreatedAt) || updated.ExpiresAt == nil || updated.Keyword != "SPOILER" {
		t.Errorf("adding the keyword again: %+v, first %+v", updated, first)
	}
	list := must(client.KeywordFilters(ctx, ann))(t).KeywordFilters
	if len(list) != 2 || list[0].KeywordFilterFields != second || list[1].Id != first.Id || list[1].Keyword != "SPOILER" {
		t.Errorf("keywordFilters = %+v, want the newest first", list)
	}
	n, ok := must(client.KeywordFilterNode(ctx, ann, second.Id))(t).Node.(*client.KeywordFilterNodeNodeKeywordFilter)
	if !ok || n.KeywordFilterFields != second {
		t.Errorf("node(%s) = %+v, want %+v", second.Id, n, second)
	}
	// Not the owner: NOT_FOUND, whoever asks.
	_, err := client.KeywordFilterNode(ctx, bob, second.Id)
	wantCode(t, "bob opens ann's filter", err, "NOT_FOUND")
	_, err = client.KeywordFilterNode(ctx, e.anon(), second.Id)
	wantCode(t, "an anonymous caller opens ann's filter", err, "NOT_FOUND")
	if fs := must(client.KeywordFilters(ctx, bob))(t).KeywordFilters; len(fs) != 0 {
		t.Errorf("bob's filters: %+v", fs)
	}

	past := clk.now().Add(-time.Second)
	calls := []struct {
		name, code, names string
		call              func() error
	}{
		{"an empty keyword", "BAD_USER_INPUT", "keyword", func() error { _, err := client.AddKeywordFilter(ctx, ann, "", nil, nil); return err }},
		{"a blank keyword", "BAD_USER_INPUT", "keyword", func() error { _, err := client.AddKeywordFilter(ctx, ann, " \t ", nil, nil); return err }},
		{"101 characters", "BAD_USER_INPUT", "keyword", func() error {
			_, err := client.AddKeywordFilter(ctx, ann, strings.Repeat("ü", 101), nil, nil)
			return err
		}},
		{"a control character", "BAD_USER_INPUT", "keyword", func() error {
			_, err := client.AddKeywordFilter(ctx, ann, "a\u0007b", nil, nil)
			return err
		}},
		{"an end in the past", "BAD_USER_INPUT", "expiresAt", func() error {
			_, err := client.AddKeywordFilter(ctx, ann, "late", nil, &past)
			return err
		}},
		{"anonymous", "UNAUTHENTICATED", "", func() error { _, err := client.AddKeywordFilter(ctx, e.anon(), "x", nil, nil); return err }},
		{"remove another's", "NOT_FOUND", "", func() error { _, err := client.RemoveKeywordFilter(ctx, bob, second.Id); return err }},
		{"remove an unknown", "NOT_FOUND", "", func() error {
			_, err := client.RemoveKeywordFilter(ctx, ann, gqltype.Encode(gqltype.KeywordFilter, 12345))
			return err
		}},
		{"remove one removed", "NOT_FOUND", "", func() error {
			gone := addFilter(t, ann, "gone soon", nil, nil)
			must(client.RemoveKeywordFilter(ctx, ann, gone.Id))(t)
			_, err := client.RemoveKeywordFilter(ctx, ann, gone.Id)
			return err
		}},
		{"remove a malformed id", "BAD_USER_INPUT", "id", func() error { _, err := client.RemoveKeywordFilter(ctx, ann, "nope"); return err }},
		{"remove a post's id", "BAD_USER_INPUT", "id", func() error { _, err := client.RemoveKeywordFilter(ctx, ann, post); return err }},
	}
	for _, c := range calls {
		err := c.call()
		wantCode(t, c.name, err, c.code)
		if err != nil && c.names != "" && !strings.Contains(err.Error(), c.names) {
			t.Errorf("%s: %q does not name %s", c.name, err, c.names)
		}
	}
	if l := must(client.KeywordFilters(ctx, ann))(t).KeywordFilters; len(l) != 2 {
		t.Errorf("after the refused calls ann has %d filters, want 2", len(l))
	}
	if full := addFilter(t, ann, strings.Repeat("ü", 100), nil, nil); len([]rune(full.Keyword)) != 100 {
		t.Errorf("a keyword of 100 characters: %q", full.Keyword)
	}

	// The limit: 100 in force; an expired one does not count.
	soon := clk.now().Add(time.Minute)
	addFilter(t, ann, "soon over", nil, &soon)
	for i := 4; i < feedcore.MaxKeywordFilters; i++ {
		addFilter(t, ann, fmt.Sprintf("word %d", i), nil, nil)
	}
	_, err = client.AddKeywordFilter(ctx, ann, "one too many", nil, nil)
	wantCode(t, "filter 101", err, "BAD_USER_INPUT")
	if err != nil && !strings.Contains(err.Error(), "100 keyword filters") {
		t.Errorf("filter 101: %q does not name the limit", err)
	}
	addFilter(t, ann, "plot twist", nil, nil) // an update at the limit
	clk.advance(2 * time.Minute)
	addFilter(t, ann, "one too many", nil, nil) // in the expired one's place
	if l := must(client.KeywordFilters(ctx, ann))(t).KeywordFilters; len(l) != feedcore.MaxKeywordFilters {
		t.Errorf("ann has %d filters, want %d", len(l), feedcore.MaxKeywordFilters)
	}
}

// TestKeywordFiltersOnTheLiveFeed: titles a viewer filters leave every
// section of its live feed (live, preview, replay) on both paths, on the
// first page and on later pages of a snapshot taken before the filter.
func TestKeywordFiltersOnTheLiveFeed(t *testing.T) {
	e := newEnv(t, feedcore.Options{BigVThreshold: 2})
	e.users("ann", "bob", "cat", "dan", "eve")
	stop := feedtest.Workers(t, e.svc)
	ann, bob, dan := e.as(1), e.as(2), e.as(4)
	follows(t, map[graphql.Client][]string{ann: {"2"}, dan: {"2"}, e.as(5): {"2"}})
	e.activate(ann)
	ctx := t.Context()
	for i, title := range []string{"Flash SALE replay", "cooking replay"} {
		s := schedule(t, bob, title, time.Duration(i+1)*time.Minute)
		must(client.StartLive(ctx, bob, s.Id))(t)
		must(client.EndLive(ctx, bob, s.Id))(t)
	}
	live := schedule(t, bob, "sale: live now", time.Minute)
	must(client.StartLive(ctx, bob, live.Id))(t)
	schedule(t, bob, "gardening", 2*time.Hour)
	for i := range 5 {
		schedule(t, bob, fmt.Sprintf("sale %d", i), time.Duration(10+i)*time.Minute)
	}
	e.drain()
	stop()

	titles := func(edges []liveEdge) []string {
		var out []string
		for _, e := range edges {
			out = append(out, e.title)
		}
		return out
	}
	want := []string{"gardening", "cooking replay"}
	for name, reader := range map[string]graphql.Client{"ann (inbox)": ann, "dan (merged)": dan} {
		if got := readLive(t, reader, 20, nil); len(got) != 9 {
			t.Fatalf("%s's live feed before the filter: %q", name, titles(got))
		}
		// A filter added after the first page applies from the next one.
		var f client.KeywordFilterFields
		got := titles(readLive(t, reader, 1, func() { f = addFilter(t, reader, "sale", nil, nil) }))
		if len(got) != 3 || got[0] != "sale: live now" || !slices.Equal(got[1:], want) {
			t.Errorf("%s's live feed, the filter added after the first page: %q", name, got)
		}
		for _, n := range []int{1, 2, 20} {
			if got := titles(readLive(t, reader, n, nil)); !slices.Equal(got, want) {
				t.Errorf("%s's live feed with the filter, pages of %d: %q, want %q", name, n, got, want)
			}
		}
		must(client.RemoveKeywordFilter(ctx, reader, f.Id))(t)
		if got := readLive(t, reader, 3, nil); len(got) != 9 {
			t.Errorf("%s's live feed once the filter is removed: %q", name, titles(got))
		}
	}
}
