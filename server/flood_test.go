package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"sync"
	"testing"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server/extension"
)

// floodAnswer is what one request of a flood got back.
type floodAnswer struct {
	status       int
	code         string
	retryAfter   string
	retryAfterMs float64
	err          error
}

// flood sends n POSTs of query to e from the client address addr (as the
// trusted proxy's X-Forwarded-For says), 20 at a time, anonymously.
func flood(e *env, addr, query string, n int) []floodAnswer {
	body, _ := json.Marshal(map[string]any{"query": query})
	out := make([]floodAnswer, n)
	sem := make(chan struct{}, 20)
	var wg sync.WaitGroup
	for i := range out {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/query", bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Forwarded-For", addr)
			res, err := e.srv.Client().Do(req)
			if err != nil {
				out[i].err = err
				return
			}
			defer res.Body.Close()
			raw, _ := io.ReadAll(res.Body)
			var r gqlResponse
			if err := json.Unmarshal(raw, &r); err != nil {
				out[i].err = fmt.Errorf("status %d, body %s: %w", res.StatusCode, raw, err)
				return
			}
			out[i] = floodAnswer{status: res.StatusCode, code: r.code(), retryAfter: res.Header.Get("Retry-After")}
			if len(r.Errors) > 0 {
				out[i].retryAfterMs, _ = r.Errors[0].Extensions["retryAfterMs"].(float64)
			}
		})
	}
	wg.Wait()
	return out
}

// TestAnonymousFloodRefused: anonymous callers spend a smaller allowance
// of their address's, and every request spends at least the base cost,
// refused ones included. Floods of { __typename } and of queries that do
// not parse are answered until the allowance is spent, then refused with
// 429 RATE_LIMITED; a signed-in viewer, on another address or on the
// flooded one, goes on as before, and a warm followingFeed page still
// costs 2 round trips (the charge rides the page's first read).
func TestAnonymousFloodRefused(t *testing.T) {
	f := newFeedFixture(t)
	// The allowances feedd serve gives, refilled too slowly for the test's
	// duration to matter: an address's 1000 points buy 100 requests at the
	// base cost of 10.
	api := APIConfig{
		RateLimit:          feedcore.RateLimit{Rate: 1, Burst: DefaultRateLimit.Burst},
		AnonRateLimit:      feedcore.RateLimit{Rate: 0.1, Burst: DefaultAnonRateLimit.Burst},
		RequestBaseCost:    DefaultRequestBaseCost,
		TrustedProxyHeader: "X-Forwarded-For",
		TrustedProxies:     []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	}
	e := replicaWith(t, f.st, api)
	const allowed = 1000 / DefaultRequestBaseCost

	for _, c := range []struct {
		name, addr, query, code string
	}{
		{"{ __typename }", "203.0.113.1", `{ __typename }`, ""},
		{"a query that does not parse", "203.0.113.2", `{ viewer {`, "BAD_USER_INPUT"},
	} {
		answered := 0
		for i, a := range flood(e, c.addr, c.query, 400) {
			switch {
			case a.err != nil:
				t.Fatalf("%s, request %d: %v", c.name, i, a.err)
			case a.code == c.code:
				answered++
			case a.code != "RATE_LIMITED" || a.status != http.StatusTooManyRequests || a.retryAfter == "" || a.retryAfterMs <= 0:
				t.Fatalf("%s, request %d: status %d, code %q, Retry-After %q, retryAfterMs %v; want %q or a 429 RATE_LIMITED",
					c.name, i, a.status, a.code, a.retryAfter, a.retryAfterMs, c.code)
			}
		}
		t.Logf("%s: %d of 400 answered", c.name, answered)
		if answered != allowed {
			t.Errorf("%s: %d of 400 answered, want the %d the address's allowance buys", c.name, answered, allowed)
		}
	}

	for _, addr := range []string{"198.51.100.9", "203.0.113.1"} {
		r := e.do(reader, `{ viewer { handle } }`, nil, "X-Forwarded-For", addr)
		if r.Status != http.StatusOK || r.code() != "" {
			t.Errorf("viewer on %s: status %d, errors %+v", addr, r.Status, r.Errors)
		}
	}
	vars := map[string]any{"first": 20}
	want := f.want(reader)[:20]
	for i, page := range []string{"cold", "warm"} {
		before := e.tripsSoFar("HydratedPage")
		var got hydratedResult
		e.do(reader, hydratedPage, vars, "X-Forwarded-For", "198.51.100.9", auth.DevHeader, "1").as(t, &got)
		f.check(t, reader, got, want)
		trips := e.tripsSince("HydratedPage", before)
		t.Logf("%s page: %d round trips", page, trips)
		switch {
		case i == 0 && trips != 3:
			t.Errorf("cold page cost %d round trips, want 3", trips)
		case i == 1 && f.st.Real && trips != 2:
			t.Errorf("warm page cost %d round trips, want 2", trips)
		}
	}
}

// Every kind of refusal spends the base cost: three of each are answered
// as they are from an allowance of 30 points, the fourth is RATE_LIMITED.
func TestRefusalsSpendTheBaseCost(t *testing.T) {
	e := newAPIEnv(t, APIConfig{
		RateLimit: feedcore.RateLimit{Rate: 0.001, Burst: 30}, RequestBaseCost: 10,
		MaxDepth: 3, MaxComplexity: 50, DisableIntrospection: true,
		TrustedProxyHeader: "X-Forwarded-For", TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")},
	})
	e.users("ann")
	get := func(query string) func(addr string) *http.Request {
		return func(addr string) *http.Request {
			req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/query?query="+url.QueryEscape(query), nil)
			req.Header.Set("X-Forwarded-For", addr)
			return req
		}
	}
	post := func(query string) func(addr string) *http.Request {
		return func(addr string) *http.Request {
			return e.post(map[string]any{"query": query}, "X-Forwarded-For", addr)
		}
	}
	for i, c := range []struct {
		name string
		req  func(addr string) *http.Request
		code string
	}{
		{"parse error", post(`{ viewer {`), "BAD_USER_INPUT"},
		{"validation error", post(`{ nope }`), "BAD_USER_INPUT"},
		{"unknown operation name", func(addr string) *http.Request {
			return e.post(map[string]any{"query": `query A { __typename }`, "operationName": "B"}, "X-Forwarded-For", addr)
		}, "BAD_USER_INPUT"},
		{"too deep", post(`{ followingFeed { edges { node { id } } } }`), "BAD_USER_INPUT"},
		{"too costly", post(`{ followingFeed(first: 100) { edges { cursor } } }`), "BAD_USER_INPUT"},
		{"introspection", post(`{ __schema { queryType { name } } }`), "FORBIDDEN"},
		{"persisted query not found", func(addr string) *http.Request {
			return e.post(map[string]any{"extensions": persisted(extension.QueryHash("{ nothing }"))}, "X-Forwarded-For", addr)
		}, "PERSISTED_QUERY_NOT_FOUND"},
		{"mutation over GET", get(`mutation { likePost(id: "1") { post { id } } }`), "BAD_USER_INPUT"},
	} {
		addr := fmt.Sprintf("192.0.2.%d", i+1)
		for n := range 4 {
			res, r := e.raw(c.req(addr))
			want := c.code
			if n == 3 {
				want = "RATE_LIMITED"
				if res.StatusCode != http.StatusTooManyRequests || res.Header.Get("Retry-After") == "" {
					t.Errorf("%s, refusal %d: status %d, Retry-After %q", c.name, n+1, res.StatusCode, res.Header.Get("Retry-After"))
				}
			}
			mustCode(t, fmt.Sprintf("%s, refusal %d", c.name, n+1), r, want)
			if c.name == "mutation over GET" && n < 3 && res.StatusCode != http.StatusNotAcceptable {
				t.Errorf("%s, refusal %d: status %d, want the GET transport's 406", c.name, n+1, res.StatusCode)
			}
		}
	}
}
