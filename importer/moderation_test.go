package importer

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestExportModeration: suspensions, takedowns, reports (open and
// resolved) and the audit trail are exported and imported: in the copy the
// suspended account's posts and sessions are hidden and its tokens
// refused, the post taken down is a tombstone whose id stays taken, and
// the reports and audit entries keep their ids. A second import changes
// nothing, and the copy exports the same lines (in the same order of
// kinds).
func TestExportModeration(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	src, _ := rtService(t, st, st.Prefix+"src:")
	if _, err := Load(ctx, src, strings.NewReader(`{"type":"user","id":"1","handle":"ann"}
{"type":"user","id":"2","handle":"bob"}
{"type":"user","id":"3","handle":"cat"}
{"type":"follow","follower":"1","followee":"2"}
{"type":"follow","follower":"1","followee":"3"}
{"type":"post","id":"10","author":"2","text":"bob's","createdAt":"2024-01-01T00:00:00Z"}
{"type":"post","id":"11","author":"3","text":"cat's bad one","createdAt":"2024-01-01T00:00:01Z"}
{"type":"post","id":"12","author":"3","text":"cat's","createdAt":"2024-01-01T00:00:02Z"}
{"type":"live","id":"20","anchor":"2","title":"bob live","startedAt":"2024-01-01T00:00:00Z"}
`)); err != nil {
		t.Fatal(err)
	}
	drain(t, src)
	op := feedcore.ModAction{Operator: "alice", Reason: "spam"}
	r1, err := src.Report(ctx, feedcore.ReportRequest{Reporter: 1, Subject: feedcore.Target{Kind: feedcore.TargetPost, ID: 11}, Reason: "SPAM", Comment: "ads"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Report(ctx, feedcore.ReportRequest{Reporter: 1, Subject: feedcore.Target{Kind: feedcore.TargetUser, ID: 2}, Reason: "HARASSMENT"}); err != nil {
		t.Fatal(err)
	}
	for _, step := range []func() (feedcore.ModOutcome, error){
		func() (feedcore.ModOutcome, error) { return src.Takedown(ctx, 11, op) },
		func() (feedcore.ModOutcome, error) { return src.ResolveReport(ctx, r1, op) },
		func() (feedcore.ModOutcome, error) { return src.Suspend(ctx, 2, op) },
	} {
		if _, err := step(); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	est, err := Export(ctx, src, &out, ExportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	file := out.String()
	if est.Suspended != 1 || est.Takedowns != 1 || est.Reports != 2 || est.Audit != 3 {
		t.Fatalf("export %+v:\n%s", est, file)
	}
	for _, want := range []string{
		`{"type":"suspended","id":"2","reason":"spam","operator":"alice","createdAt":"`,
		`{"type":"takedown","id":"11","author":"3","text":"cat's bad one","createdAt":"2024-01-01T00:00:01Z","deletedAt":"`,
		`{"type":"report","id":"` + r1 + `","user":"1","subject":"post:11","reason":"SPAM","comment":"ads","resolvedAt":"`,
		`"subject":"user:2","reason":"HARASSMENT"}`,
		`"operator":"alice","action":"takedown","subject":"post:11","reason":"spam"}`,
	} {
		if !strings.Contains(file, want) {
			t.Errorf("export lacks %s:\n%s", want, file)
		}
	}
	if lines := strings.Split(file, "\n"); !strings.HasPrefix(lines[0], `{"type":"suspended"`) {
		t.Errorf("the suspension is not first (before the posts it hides):\n%s", file)
	}

	dst, _ := rtService(t, st, st.Prefix+"dst:")
	ist, err := Load(ctx, dst, strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if ist.Moderation != 7 {
		t.Errorf("import applied %d moderation lines, want 7", ist.Moderation)
	}
	drain(t, dst)
	if got := feedtest.Feed(t, dst, 1, 10); !slices.Equal(got, []feedcore.ID{12}) {
		t.Errorf("ann's feed in the copy: %v, want [12] (bob suspended, 11 taken down)", got)
	}
	ch := dst.NewCharge(feedcore.Subject{Viewer: 2}, 1, feedcore.RateLimit{})
	if _, err := dst.FollowingFeed(feedcore.WithCharge(ctx, ch), feedcore.FeedRequest{Viewer: 2}); err == nil || !strings.Contains(err.Error(), "this account is suspended") {
		t.Errorf("bob's read in the copy: %v, want refused as suspended", err)
	}
	if ps, _ := dst.Posts(ctx, []feedcore.ID{11}); ps[0] == nil || !ps[0].Deleted || ps[0].TakedownReason != "spam" {
		t.Errorf("post 11 in the copy: %+v", ps[0])
	}
	if _, err := Load(ctx, dst, strings.NewReader(`{"type":"post","id":"11","author":"3","text":"again","createdAt":"2024-01-01T00:00:01Z"}`)); err == nil {
		t.Error("the id of a post taken down was taken again")
	}
	if _, err := Load(ctx, dst, strings.NewReader(file)); err != nil {
		t.Fatalf("second import: %v", err)
	}
	var again bytes.Buffer
	if _, err := Export(ctx, dst, &again, ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sortedLines(again.String()), sortedLines(file)) { // within a kind, SCAN's order
		t.Errorf("re-export differs:\n%s\nwant:\n%s", again.String(), file)
	}
}

// TestBadModerationLines: each bad moderation line is refused with its
// line number.
func TestBadModerationLines(t *testing.T) {
	ctx := context.Background()
	svc := newService(t)
	if _, err := Load(ctx, svc, strings.NewReader(`{"type":"user","id":"1","handle":"ann"}
{"type":"report","id":"2000-0","user":"1","subject":"user:1","reason":"SPAM"}
{"type":"audit","id":"2000-0","createdAt":"2024-01-01T00:00:00Z","operator":"a","action":"suspend","subject":"user:1","reason":"r"}
`)); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("a report of oneself: %v, want refused on line 2", err)
	}
	for _, c := range []struct{ name, line, want string }{
		{"suspended without id", `{"type":"suspended","reason":"x"}`, `missing field "id"`},
		{"suspended with a subject", `{"type":"suspended","id":"1","subject":"user:1"}`, `unknown field "subject"`},
		{"takedown without deletedAt", `{"type":"takedown","id":"5","author":"1","createdAt":"2024-01-01T00:00:00Z"}`, `missing field "deletedAt"`},
		{"report with a bad id", `{"type":"report","id":"7","user":"1","subject":"post:5","reason":"SPAM"}`, "not an entry id"},
		{"report with a bad subject", `{"type":"report","id":"1-0","user":"1","subject":"Post:5","reason":"SPAM"}`, "is not post:ID"},
		{"report with a bad reason", `{"type":"report","id":"1-0","user":"1","subject":"post:5","reason":"spam"}`, "is not one of"},
		{"report with a long comment", `{"type":"report","id":"1-0","user":"1","subject":"post:5","reason":"SPAM","comment":"` + strings.Repeat("x", 1001) + `"}`, "at most 1000"},
		{"report older than the store's", `{"type":"report","id":"1-0","user":"1","subject":"post:5","reason":"SPAM"}`, "not newer"},
		{"audit with a bad action", `{"type":"audit","id":"3000-0","createdAt":"2024-01-01T00:00:00Z","operator":"a","action":"ban","subject":"user:1"}`, "not takedown, suspend"},
		{"audit without createdAt", `{"type":"audit","id":"3000-0","operator":"a","action":"suspend","subject":"user:1"}`, `missing field "createdAt"`},
	} {
		pre := ""
		if c.name == "report older than the store's" {
			pre = `{"type":"report","id":"5000-0","user":"1","subject":"post:6","reason":"SPAM"}` + "\n"
		}
		_, err := Load(ctx, svc, strings.NewReader(pre+c.line+"\n"))
		var le *LineError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want a line error saying %q", c.name, err, c.want)
		}
	}
}
