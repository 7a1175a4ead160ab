package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server/extension"
)

// Every refusal reports its code where it is decided, and /metrics and the
// access log count it once: the guard's, the host check's, the
// transport's (coded by ensureErrorCodes), the extensions' (through the
// error presenter), the cost limit's and the request timeout's.
func TestRefusalCodesCounted(t *testing.T) {
	e := newOpsEnv(t, Config{
		AllowedHosts: LoopbackHosts,
		APIConfig: APIConfig{MaxDepth: 3, MaxComplexity: 100, MaxBodyBytes: 4096,
			RateLimit: feedcore.RateLimit{Rate: 0.001, Burst: 4}},
	})
	e.users("ann")
	post := func(body string, headers ...string) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/query", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		return req
	}
	misdirected := post(`{"query":"{ __typename }"}`)
	misdirected.Host = "evil.example"
	getMutation, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/query?"+url.Values{"query": {`mutation { followUser(userId: "1") { user { id } } }`}}.Encode(), nil)
	who := `{"query":"query Who { viewer { handle } }"}`
	// More points than the viewer's 4: the first spends them all, the
	// second is refused as its first Redis call carries the charge (a field
	// error), then answered with the refusal alone.
	feed := `{"query":"query Feed { followingFeed(first: 1) { edges { cursor } } }"}`

	cases := []struct {
		name      string
		req       *http.Request
		status    int
		typ, op   string
		code      string
		runsFirst int // requests sent first, which must succeed
	}{
		{"origin not allowed", post(who, "Origin", "https://evil.example"), http.StatusForbidden, "", "", "FORBIDDEN", 0},
		{"not JSON", post(who, "Content-Type", "text/plain"), http.StatusUnsupportedMediaType, "", "", "BAD_USER_INPUT", 0},
		{"body too large", post(`{"query":"` + strings.Repeat(" ", 5000) + `{ __typename }"}`), http.StatusRequestEntityTooLarge, "", "", "BAD_USER_INPUT", 0},
		{"duplicate member", post(`{"query":"{ __typename }","query":"{ __typename }"}`), http.StatusBadRequest, "", "", "BAD_USER_INPUT", 0},
		{"host not allowed", misdirected, http.StatusMisdirectedRequest, "", "", "FORBIDDEN", 0},
		{"mutation over GET", getMutation, http.StatusNotAcceptable, "", "", "BAD_USER_INPUT", 0},
		{"too deep", post(`{"query":"{ followingFeed { edges { node { id } } } }"}`), http.StatusOK, "", "", "BAD_USER_INPUT", 0},
		{"too costly", post(`{"query":"{ followingFeed(first: 100) { edges { cursor } } }"}`), http.StatusOK, "", "", "BAD_USER_INPUT", 0},
		{"persisted query not found", post(`{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + extension.QueryHash("{ nothing }") + `"}}}`), http.StatusOK, "", "", "PERSISTED_QUERY_NOT_FOUND", 0},
		{"rate limited", post(feed, auth.DevHeader, "1"), http.StatusTooManyRequests, "query", "Feed", "RATE_LIMITED", 1},
	}
	sent := 0
	for _, c := range cases {
		for range c.runsFirst {
			if res, r := e.raw(post(feed, auth.DevHeader, "1")); res.StatusCode != http.StatusOK || len(r.Errors) > 0 {
				t.Fatalf("%s: a request within the allowance: %d %+v", c.name, res.StatusCode, r.Errors)
			}
			sent++
		}
		labels := []string{"type", c.typ, "operation", c.op, "code", c.code}
		before, _ := e.scrape().value("feedd_graphql_errors_total", labels...)
		res, r := e.raw(c.req)
		sent++
		if res.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d (errors %+v)", c.name, res.StatusCode, c.status, r.Errors)
		}
		mustCode(t, c.name, r, c.code)
		if after, _ := e.scrape().value("feedd_graphql_errors_total", labels...); after != before+1 {
			t.Errorf("%s: feedd_graphql_errors_total%q went from %v to %v, want one more", c.name, labels, before, after)
		}
		line := e.logLines(sent)[sent-1]
		if got := fmt.Sprint(line["error_codes"]); got != "["+c.code+"]" || line["status"] != float64(c.status) {
			t.Errorf("%s: access log error_codes %s, status %v; want [%s], %d", c.name, got, line["status"], c.code, c.status)
		}
	}

	// A request that runs out of time before its operation runs.
	late := newOpsEnv(t, Config{RequestTimeout: time.Nanosecond})
	late.users("ann")
	mustCode(t, "timed out", late.do(1, `query Who { viewer { handle } }`, nil), "UNAVAILABLE")
	if n, _ := late.scrape().value("feedd_graphql_errors_total", "code", "UNAVAILABLE"); n != 1 {
		t.Errorf("timed-out request: %v UNAVAILABLE counted, want 1", n)
	}
}
