package feedcore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
)

// TestReport: a report is filed once per reporter and subject (a repeat
// gets the same id and changes nothing), counted by reason, listed oldest
// first with its state, and resolved once; nothing anyone sees changes.
func TestReport(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	follow(t, s, 1, []store.ID{2})
	p, err := s.Publish(ctx, 2, "bad")
	if err != nil {
		t.Fatal(err)
	}
	l, err := s.ScheduleLive(ctx, 2, "live", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	before := s.Stats().Reports
	file := func(reporter store.ID, subject Target, reason, comment string) string {
		t.Helper()
		id, err := s.Report(ctx, ReportRequest{Reporter: reporter, Subject: subject, Reason: reason, Comment: comment})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	post, user, live := Target{Kind: TargetPost, ID: p.ID}, Target{Kind: TargetUser, ID: 2}, Target{Kind: TargetLive, ID: l.ID}
	a := file(1, post, "SPAM", "  ads  ")
	if again := file(1, post, "HATE", "other"); again != a {
		t.Errorf("a repeat got id %q, want %q", again, a)
	}
	b := file(3, post, "SPAM", "")
	c := file(1, user, "HARASSMENT", "")
	d := file(1, live, "OTHER", "what")
	if len(slices.Compact(slices.Sorted(slices.Values([]string{a, b, c, d})))) != 4 {
		t.Errorf("ids %q %q %q %q are not distinct", a, b, c, d)
	}
	after := s.Stats().Reports
	for reason, n := range map[string]int64{"SPAM": 2, "HARASSMENT": 1, "OTHER": 1, "HATE": 0} {
		if got := after[reason] - before[reason]; got != n {
			t.Errorf("reports counted with reason %s: %d, want %d", reason, got, n)
		}
	}
	if got := readAll(t, s, 1, 5); !slices.Equal(got, []store.ID{p.ID}) {
		t.Errorf("the reporter's feed changed: %v", got)
	}

	if out, err := s.ResolveReport(ctx, b, op); err != nil || !out.Changed {
		t.Fatalf("resolve: %+v, %v", out, err)
	}
	if out, err := s.ResolveReport(ctx, b, op); err != nil || out.Changed {
		t.Errorf("resolve again: %+v, %v; want no change", out, err)
	}
	got := listReports(t, s, Since{})
	want := []string{"1 post SPAM ads open", "3 post SPAM  resolved", "1 user HARASSMENT  open", "1 live OTHER what open"}
	if !slices.Equal(got, want) {
		t.Errorf("reports %q, want %q", got, want)
	}
	if got := listReports(t, s, Since{After: b}); !slices.Equal(got, want[2:]) {
		t.Errorf("reports since %s: %q, want %q", b, got, want[2:])
	}
	if got := listReports(t, s, Since{Time: time.Now().Add(time.Hour)}); len(got) != 0 {
		t.Errorf("reports since an hour ahead: %q", got)
	}
	wantAudit(t, s, "resolve report:"+b+" spam alice")
}

// listReports is the reports from sc as "reporter kind reason comment
// state".
func listReports(t *testing.T, s *Service, sc Since) []string {
	t.Helper()
	var out []string
	err := s.Reports(context.Background(), sc, func(rs []Report) error {
		for _, r := range rs {
			state := "open"
			if !r.Resolved.IsZero() {
				state = "resolved"
			}
			if r.At.IsZero() {
				t.Errorf("report %s has no time", r.ID)
			}
			out = append(out, strings.Join([]string{store.FormatID(r.Reporter), string(r.Subject.Kind), r.Reason, r.Comment, state}, " "))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReportInput: every bad report is refused with its code and files
// nothing.
func TestReportInput(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	p, err := s.Publish(ctx, 2, "post")
	if err != nil {
		t.Fatal(err)
	}
	gone, err := s.Publish(ctx, 2, "deleted")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, 2, gone.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteAccount(ctx, 3, "u3"); err != nil {
		t.Fatal(err)
	}
	post := Target{Kind: TargetPost, ID: p.ID}
	for _, c := range []struct {
		name string
		r    ReportRequest
		code apierr.Code
	}{
		{"unknown reason", ReportRequest{Subject: post, Reason: "spam"}, apierr.BadInput},
		{"comment too long", ReportRequest{Subject: post, Reason: "SPAM", Comment: strings.Repeat("é", MaxReportComment+1)}, apierr.BadInput},
		{"comment with a control character", ReportRequest{Subject: post, Reason: "SPAM", Comment: "a\x00b"}, apierr.BadInput},
		{"oneself", ReportRequest{Subject: Target{Kind: TargetUser, ID: 1}, Reason: "SPAM"}, apierr.BadInput},
		{"unknown post", ReportRequest{Subject: Target{Kind: TargetPost, ID: 999}, Reason: "SPAM"}, apierr.NotFound},
		{"deleted post", ReportRequest{Subject: Target{Kind: TargetPost, ID: gone.ID}, Reason: "SPAM"}, apierr.NotFound},
		{"unknown user", ReportRequest{Subject: Target{Kind: TargetUser, ID: 9}, Reason: "SPAM"}, apierr.NotFound},
		{"deleted account", ReportRequest{Subject: Target{Kind: TargetUser, ID: 3}, Reason: "SPAM"}, apierr.NotFound},
		{"unknown live session", ReportRequest{Subject: Target{Kind: TargetLive, ID: 5}, Reason: "SPAM"}, apierr.NotFound},
	} {
		c.r.Reporter = 1
		if _, err := s.Report(ctx, c.r); store.CodeOf(err) != c.code {
			t.Errorf("%s: %v, want %s", c.name, err, c.code)
		}
	}
	if _, err := s.Report(ctx, ReportRequest{Reporter: 1, Subject: post, Reason: "SPAM", Comment: strings.Repeat("é", MaxReportComment)}); err != nil {
		t.Errorf("a comment of exactly %d characters: %v", MaxReportComment, err)
	}
	if got := listReports(t, s, Since{}); len(got) != 1 {
		t.Errorf("reports filed: %q, want the one good one", got)
	}
	for _, v := range []string{"yesterday", "12", "1-x", "-1-0"} {
		if _, err := ParseSince(v); store.CodeOf(err) != apierr.BadInput {
			t.Errorf("ParseSince(%q): %v, want BAD_USER_INPUT", v, err)
		}
	}
	for _, v := range []string{"", "2026-11-25T10:00:00Z", "1764064800000-0"} {
		if _, err := ParseSince(v); err != nil {
			t.Errorf("ParseSince(%q): %v", v, err)
		}
	}
}

// TestReportLimit: a reporter's allowance of reports is its own (its
// points are untouched) and refused with RATE_LIMITED and a retry time;
// another reporter is not affected.
func TestReportLimit(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4, 5)
	limit := RateLimit{Rate: 10.0 / 60, Burst: 3}
	report := func(reporter, subject store.ID) error {
		_, err := s.Report(ctx, ReportRequest{Reporter: reporter, Subject: Target{Kind: TargetUser, ID: subject}, Reason: "SPAM", Limit: limit})
		return err
	}
	for _, u := range []store.ID{2, 3, 4} {
		if err := report(1, u); err != nil {
			t.Fatalf("report %d within the burst: %v", u, err)
		}
	}
	err := report(1, 5)
	var fe *apierr.Error
	if store.CodeOf(err) != apierr.RateLimited || !errors.As(err, &fe) || fe.RetryAfter <= 0 || fe.RetryAfter > 6*time.Second {
		t.Fatalf("past the burst: %v, want RATE_LIMITED with a retry within 6 s", err)
	}
	if err := report(2, 5); err != nil {
		t.Errorf("another reporter: %v", err)
	}
	if v, err := s.Spend(ctx, Subject{Viewer: 1}, 1, RateLimit{Rate: 1, Burst: 1}); err != nil || v.Err != nil {
		t.Errorf("the reporter's own allowance: %+v, %v", v, err)
	}
}
