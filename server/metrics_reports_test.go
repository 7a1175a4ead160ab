package server

import (
	"net/http"
	"testing"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
)

const reportMutation = `mutation($s: ID!, $r: ReportReason!) { report(input: {subjectId: $s, reason: $r}) { reportId } }`

// TestReportMetrics: /metrics counts the reports filed by reason, every
// reason listed from the start; a repeat of a report and a refused one are
// not counted.
func TestReportMetrics(t *testing.T) {
	e := newOpsEnv(t, Config{APIConfig: APIConfig{ReportLimit: feedcore.RateLimit{Rate: 0.01, Burst: 4}}})
	e.users("ann", "bob", "cat")
	f := e.scrape()
	for _, reason := range feedcore.ReportReasons {
		if v, ok := f.value("feedd_reports_total", "reason", reason); !ok || v != 0 {
			t.Errorf("before any report: feedd_reports_total{reason=%q} = %v (found %v), want 0", reason, v, ok)
		}
	}
	bob, cat := gqltype.Encode(gqltype.User, 2), gqltype.Encode(gqltype.User, 3)
	for _, r := range []struct {
		viewer  feedcore.ID
		subject string
		reason  string
		code    string
	}{
		{1, bob, "SPAM", ""},
		{1, bob, "HATE", ""}, // a repeat: not counted again
		{1, cat, "SPAM", ""},
		{2, cat, "SELF_HARM", ""},
		{1, gqltype.Encode(gqltype.User, 9), "SPAM", "NOT_FOUND"},
		{1, gqltype.Encode(gqltype.User, 1), "ILLEGAL", "BAD_USER_INPUT"},
		{1, bob, "OTHER", ""},                // the 4th of ann's allowance
		{1, cat, "VIOLENCE", "RATE_LIMITED"}, // past it
	} {
		resp := e.do(r.viewer, reportMutation, map[string]any{"s": r.subject, "r": r.reason})
		mustCode(t, "report "+r.subject+" "+r.reason, resp, r.code)
		if r.code == "RATE_LIMITED" {
			if resp.Status != http.StatusTooManyRequests || resp.Errors[0].Extensions["retryAfterMs"] == nil {
				t.Errorf("refused report: status %d, extensions %v; want 429 with retryAfterMs", resp.Status, resp.Errors[0].Extensions)
			}
		}
	}
	f = e.scrape()
	for reason, want := range map[string]float64{"SPAM": 2, "SELF_HARM": 1, "HATE": 0, "ILLEGAL": 0, "OTHER": 0, "VIOLENCE": 0} {
		if v, _ := f.value("feedd_reports_total", "reason", reason); v != want {
			t.Errorf("feedd_reports_total{reason=%q} = %v, want %v", reason, v, want)
		}
	}
}
