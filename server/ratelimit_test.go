package server

import (
	"net/http"
	"testing"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
)

func TestRateLimit(t *testing.T) {
	// A budget of 4 points refilled at one point every 1000 s: `{ viewer {
	// handle } }` costs 2, so two go and the third is refused, and nothing
	// refills during the test. Anonymous callers spend their address's
	// budget, of the same size.
	e := newAPIEnv(t, APIConfig{RateLimit: feedcore.RateLimit{Rate: 0.001, Burst: 4}})
	e.users("ann", "bob")
	q := map[string]any{"query": `{ viewer { handle } }`}
	for i, c := range []struct {
		name   string
		viewer string
		code   string
	}{
		{"ann 1", "1", ""},
		{"ann 2", "1", ""},
		{"ann 3, over the budget", "1", "RATE_LIMITED"},
		{"ann 4, a mutation", "1", "RATE_LIMITED"},
		{"bob has his own allowance", "2", ""},
		{"anonymous caller 1", "", ""},
		{"anonymous caller 2, same address", "", ""},
		{"anonymous caller 3, over the address's budget", "", "RATE_LIMITED"},
	} {
		body := q
		if i == 3 {
			body = map[string]any{"query": `mutation { followUser(userId: "2") { user { id } } }`}
		}
		if c.viewer == "" {
			body = map[string]any{"query": `{ user(handle: "ann") { handle } }`}
		}
		var headers []string
		if c.viewer != "" {
			headers = []string{auth.DevHeader, c.viewer}
		}
		res, r := e.raw(e.post(body, headers...))
		if c.code == "" {
			if len(r.Errors) > 0 || res.StatusCode != http.StatusOK {
				t.Fatalf("%s: status %d, errors %+v", c.name, res.StatusCode, r.Errors)
			}
			if res.Header.Get("Retry-After") != "" {
				t.Errorf("%s: Retry-After on a served request", c.name)
			}
			continue
		}
		mustCode(t, c.name, r, c.code)
		if res.StatusCode != http.StatusTooManyRequests {
			t.Errorf("%s: status %d, want 429", c.name, res.StatusCode)
		}
		ms, _ := r.Errors[0].Extensions["retryAfterMs"].(float64)
		if ms <= 0 || ms > 4_000_000 { // at most the whole budget of 4 points, 1000 s each
			t.Errorf("%s: retryAfterMs = %v", c.name, r.Errors[0].Extensions["retryAfterMs"])
		}
		if cost, _ := r.Errors[0].Extensions["cost"].(map[string]any); cost["requested"] == nil || cost["remaining"] == nil {
			t.Errorf("%s: extensions.cost = %v", c.name, r.Errors[0].Extensions["cost"])
		}
		if got := res.Header.Get("Retry-After"); got == "" || got == "0" {
			t.Errorf("%s: Retry-After = %q", c.name, got)
		}
		if len(r.Data) > 0 && string(r.Data) != "null" {
			t.Errorf("%s: refused operation returned data %s", c.name, r.Data)
		}
	}
	// The refused mutation did nothing.
	mustNotFollow(t, e, 1, 2)
}

// mustNotFollow fails t if viewer follows target.
func mustNotFollow(t *testing.T, e *env, viewer, target feedcore.ID) {
	t.Helper()
	f, err := e.svc.IsFollowing(t.Context(), viewer, []feedcore.ID{target})
	if err != nil {
		t.Fatal(err)
	}
	if f[0] {
		t.Errorf("%d follows %d: a refused mutation ran", viewer, target)
	}
}
