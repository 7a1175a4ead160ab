package importer

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
)

// filterFile: ann follows bob, who posts; ann filters "spoiler" (whole
// word, the default), "Plot" (anywhere, until 2099, created at a given
// time), and had a filter that has expired.
const filterFile = `{"type":"user","id":"1","handle":"ann"}
{"type":"user","id":"2","handle":"bob"}
{"type":"follow","follower":"1","followee":"2"}
{"type":"keywordFilter","user":"1","keyword":"spoiler"}
{"type":"keywordFilter","user":"1","keyword":"Plot","wholeWord":false,"expiresAt":"2099-01-01T00:00:00Z","createdAt":"2024-01-02T03:04:05.006Z"}
{"type":"keywordFilter","user":"1","keyword":"old","expiresAt":"2020-01-01T00:00:00Z"}
{"type":"post","id":"10","author":"2","text":"a spoiler ahead","createdAt":"2024-05-01T00:00:00Z"}
{"type":"post","id":"11","author":"2","text":"subplots","createdAt":"2024-05-01T00:00:01Z"}
{"type":"post","id":"12","author":"2","text":"spoilers and old news","createdAt":"2024-05-01T00:00:02Z"}
`

// TestKeywordFilterLines: keywordFilter lines are applied as
// addKeywordFilter does (defaults, an expired one skipped, the post's
// fan-out after them leaves nothing to show that a page would not
// filter), exported in the import format, and an export of the import
// gives the same lines.
func TestKeywordFilterLines(t *testing.T) {
	ctx := context.Background()
	svc := newService(t)
	st, err := Load(ctx, svc, strings.NewReader(filterFile))
	if err != nil {
		t.Fatal(err)
	}
	if st.KeywordFilters != 3 {
		t.Errorf("applied %d keywordFilter lines, want 3 (the expired one skipped, but counted)", st.KeywordFilters)
	}
	drain(t, svc)
	fs, err := svc.KeywordFilters(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 2 || fs[0].Keyword != "spoiler" || !fs[0].WholeWord || fs[0].ExpiresAt != nil ||
		fs[1].Keyword != "Plot" || fs[1].WholeWord || fs[1].ExpiresAt.Year() != 2099 || fs[1].CreatedAt.UnixMilli()%1000 != 6 {
		t.Fatalf("filters %+v", fs)
	}
	pg, err := svc.FollowingFeed(ctx, feedcore.FeedRequest{Viewer: 1, First: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(pg.Edges) != 1 || pg.Edges[0].Post.ID != 12 {
		t.Errorf("ann's feed: %+v, want post 12 only", pg.Edges)
	}

	var out bytes.Buffer
	est, err := Export(ctx, svc, &out, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := out.String()
	for _, want := range []string{
		`{"type":"keywordFilter","user":"1","keyword":"spoiler","wholeWord":true,"createdAt":"`,
		`{"type":"keywordFilter","user":"1","keyword":"Plot","wholeWord":false,"expiresAt":"2099-01-01T00:00:00Z","createdAt":"2024-01-02T03:04:05.006Z"}`,
	} {
		if !strings.Contains(file, want) {
			t.Errorf("the export has no line %s:\n%s", want, file)
		}
	}
	if est.KeywordFilters != 2 || strings.Contains(file, `"keyword":"old"`) {
		t.Errorf("%d keywordFilter lines exported, want 2 and not the expired one:\n%s", est.KeywordFilters, file)
	}
	if strings.Index(file, `"type":"keywordFilter"`) > strings.Index(file, `"type":"post"`) {
		t.Errorf("filters exported after posts:\n%s", file)
	}

	dst := newService(t)
	if _, err := Load(ctx, dst, strings.NewReader(file)); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(ctx, dst, strings.NewReader(file)); err != nil { // again: the same filters
		t.Fatal(err)
	}
	var again bytes.Buffer
	if _, err := Export(ctx, dst, &again, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, want := filterLines(again.String()), filterLines(file); got != want {
		t.Errorf("re-export's filters:\n%s\nwant\n%s", got, want)
	}
}

// filterLines is the keywordFilter lines of an export.
func filterLines(file string) string {
	var out []string
	for _, l := range strings.Split(file, "\n") {
		if strings.Contains(l, `"type":"keywordFilter"`) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// TestBadKeywordFilterLines: a bad keywordFilter line stops the import at
// its line, with what is wrong; the lines before it are applied.
func TestBadKeywordFilterLines(t *testing.T) {
	base := `{"type":"user","id":"1","handle":"ann"}` + "\n" + `{"type":"keywordFilter","user":"1","keyword":"first"}` + "\n"
	var full strings.Builder
	for i := range feedcore.MaxKeywordFilters - 1 {
		fmt.Fprintf(&full, `{"type":"keywordFilter","user":"1","keyword":"w%d"}`+"\n", i)
	}
	for _, c := range []struct {
		name, before, bad, want string
		code                    apierr.Code
	}{
		{"wholeWord a string", "", `{"type":"keywordFilter","user":"1","keyword":"x","wholeWord":"yes"}`,
			`line 3: keywordFilter: wholeWord: want true or false, not a string`, ""},
		{"no keyword", "", `{"type":"keywordFilter","user":"1"}`, `line 3: keywordFilter: missing field "keyword"`, ""},
		{"a blank keyword", "", `{"type":"keywordFilter","user":"1","keyword":"  "}`,
			`line 3: keywordFilter: keyword must contain at least one visible character`, apierr.BadInput},
		{"a keyword too long", "", `{"type":"keywordFilter","user":"1","keyword":"` + strings.Repeat("k", 101) + `"}`,
			`line 3: keywordFilter: keyword has 101 characters; at most 100 are allowed`, apierr.BadInput},
		{"an unknown user", "", `{"type":"keywordFilter","user":"9","keyword":"x"}`,
			`line 3: keywordFilter: no user with id 9`, apierr.NotFound},
		{"a bad expiresAt", "", `{"type":"keywordFilter","user":"1","keyword":"x","expiresAt":"soon"}`,
			`line 3: keywordFilter: expiresAt "soon" is not an RFC 3339 time like 2023-07-11T15:32:02Z`, ""},
		{"a field of another type", "", `{"type":"keywordFilter","user":"1","keyword":"x","target":"2"}`,
			`line 3: keywordFilter: unknown field "target": a keywordFilter line has no target`, ""},
		{"one filter too many", full.String(), `{"type":"keywordFilter","user":"1","keyword":"one more"}`,
			fmt.Sprintf(`line %d: keywordFilter: user 1: you have 100 keyword filters, the most allowed; remove one first (expired ones do not count)`, 3+feedcore.MaxKeywordFilters-1), apierr.BadInput},
	} {
		t.Run(c.name, func(t *testing.T) {
			svc := newService(t)
			ctx := context.Background()
			_, err := Load(ctx, svc, strings.NewReader(base+c.before+c.bad+"\n"+`{"type":"keywordFilter","user":"1","keyword":"after"}`+"\n"))
			var le *LineError
			if !errors.As(err, &le) || err.Error() != c.want {
				t.Fatalf("err = %v\nwant %s", err, c.want)
			}
			if c.code != "" && feedcore.CodeOf(err) != c.code {
				t.Errorf("code %s, want %s", feedcore.CodeOf(err), c.code)
			}
			fs, err := svc.KeywordFilters(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			var words []string
			for _, f := range fs {
				words = append(words, f.Keyword)
			}
			if len(fs) != 1+strings.Count(c.before, "\n") || strings.Contains(strings.Join(words, " "), "after") {
				t.Errorf("filters after the bad line: %v; want those before it only", words)
			}
		})
	}
}
