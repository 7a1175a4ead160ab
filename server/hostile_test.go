package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/server/extension"
)

// hostile is a feedd built by New, as feedd serve builds it, over its own
// store, with the API surface api; prefix lets the tests count its keys.
type hostile struct {
	*env
	prefix string
}

func newHostile(t *testing.T, api APIConfig, devAuth bool) *hostile {
	t.Helper()
	st := storetest.New(t)
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{Prefix: st.Prefix, SnapshotReuse: 3 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	reg := NewMetrics()
	srv := httptest.NewServer(New(Config{Service: svc, DevAuth: devAuth, Verifier: &auth.Verifier{HS256Secret: testSecret},
		Metrics: reg, Logger: discardLogger(), APIConfig: api, RequestTimeout: testRequestTimeout}))
	t.Cleanup(srv.Close)
	return &hostile{env: &env{t: t, svc: svc, srv: srv, metrics: reg}, prefix: st.Prefix}
}

// keys lists the keys under the test's prefix that start with sub (all
// with "").
func (h *hostile) keys(sub string) []string {
	h.t.Helper()
	all, err := storetest.Keys(context.Background(), h.svc.Client(), h.prefix)
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, k := range all {
		if strings.HasPrefix(k, h.prefix+sub) {
			out = append(out, k)
		}
	}
	return out
}

// aliased repeats field n times under aliases f0, f1, ...
func aliased(op string, n int, field string) string {
	var b strings.Builder
	b.WriteString(op + " {")
	for i := range n {
		fmt.Fprintf(&b, " f%d: %s", i, field)
	}
	b.WriteString(" }")
	return b.String()
}

// liveFixture: viewer 1 follows anchor 2, who has three scheduled shows.
func (h *hostile) liveFixture() {
	h.t.Helper()
	h.users("viewer", "anchor")
	ctx := context.Background()
	if err := h.svc.Follow(ctx, 1, 2); err != nil {
		h.t.Fatal(err)
	}
	h.svc.WaitForFollows() // its pending mark gone: the keys counted below stay put
	for i := range 3 {
		if _, err := h.svc.ScheduleLive(ctx, 2, fmt.Sprintf("show %d", i), time.Now().Add(time.Duration(i+1)*time.Hour)); err != nil {
			h.t.Fatal(err)
		}
	}
}

// 900 aliased liveFeed(first: 1): refused by cost under the defaults; with
// the complexity limit off they run and create one snapshot, not 900;
// repeated first pages and other devices' pages do not grow memory past
// one snapshot per device.
func TestHostileAliasedLiveFeed(t *testing.T) {
	q := aliased("query", 900, "liveFeed(first: 1) { edges { cursor } }")

	h := newHostile(t, APIConfig{RateLimit: DefaultRateLimit, MaxTokens: -1}, true)
	h.liveFixture()
	before := len(h.keys(""))
	r := h.do(1, q, nil)
	mustCode(t, "900 aliased liveFeed", r, "BAD_USER_INPUT")
	if c, _ := r.Errors[0].Extensions["cost"].(float64); c < 900*costLiveFirstPage {
		t.Errorf("cost %v: the aliases were not charged one by one", r.Errors[0].Extensions["cost"])
	}
	if n := len(h.keys("")); n != before {
		t.Errorf("refused operation: %d keys, %d before", n, before)
	}

	// A budget large enough for the whole test, refilled slowly so that its
	// record outlives the test (a record expires once the budget is full).
	h = newHostile(t, APIConfig{RateLimit: feedcore.RateLimit{Rate: 1, Burst: 1e7}, MaxTokens: -1, MaxComplexity: -1}, true)
	h.liveFixture()
	var got map[string]struct{ Edges []struct{ Cursor string } }
	h.do(1, q, nil).as(t, &got)
	if len(got) != 900 || len(got["f899"].Edges) != 1 {
		t.Fatalf("%d aliases answered", len(got))
	}
	if n := len(h.keys("lss:")); n != 1 {
		t.Errorf("900 aliased first pages left %d snapshots, want 1", n)
	}
	after := h.keys("")
	for range 20 {
		h.do(1, `{ liveFeed(first: 1) { edges { cursor } } }`, nil).as(t, &struct{}{})
	}
	if now := h.keys(""); len(now) != len(after) {
		t.Errorf("20 more first pages: keys %q, before %q", now, after)
	}
	for i := range 10 {
		h.do(1, `{ liveFeed(first: 1) { edges { cursor } } }`, nil, "X-Device-Id", fmt.Sprintf("tablet-%d", i)).as(t, &struct{}{})
	}
	if n := len(h.keys("lss:")); n != 5 {
		t.Errorf("10 devices left %d snapshots, want the cap of 5", n)
	}
	mustCode(t, "bad device id", h.do(1, `{ liveFeed(first: 1) { edges { cursor } } }`, nil, "X-Device-Id", "../x"), "BAD_USER_INPUT")
}

// 400 aliased publishPost: over --max-mutations, refused before anything
// is written.
func TestHostileAliasedMutations(t *testing.T) {
	h := newHostile(t, APIConfig{RateLimit: DefaultRateLimit, MaxComplexity: -1}, true)
	h.users("ann")
	before := len(h.keys(""))
	r := h.do(1, aliased("mutation", 400, `publishPost(input: {text: "spam"}) { post { id } }`), nil)
	mustCode(t, "400 aliased publishPost", r, "BAD_USER_INPUT")
	if n := len(h.keys("")); n != before {
		t.Errorf("refused mutations: %d keys, %d before", n, before)
	}
	// Five go, and each is charged.
	var got map[string]any
	res := h.do(1, aliased("mutation", 5, `publishPost(input: {text: "ok"}) { post { id } }`), nil)
	res.as(t, &got)
	if len(got) != 5 {
		t.Fatalf("5 mutations: %v", got)
	}
	if cost, _ := res.Extensions["cost"].(map[string]any); cost["requested"].(float64) < 5*costWrite {
		t.Errorf("cost of 5 publishPost: %v", res.Extensions["cost"])
	}
}

// Cost, not count: a viewer's allowance buys fewer expensive operations
// than cheap ones.
func TestHostileCostNotCount(t *testing.T) {
	h := newHostile(t, APIConfig{RateLimit: feedcore.RateLimit{Rate: 0.001, Burst: 2000}}, true)
	h.users("ann", "bob")
	page := `{ followingFeed(first: 100) { edges { cursor node { id text } } } }`
	ok := 0
	for range 10 {
		if r := h.do(1, page, nil); r.code() == "" {
			ok++
		} else {
			mustCode(t, "expensive page", r, "RATE_LIMITED")
			break
		}
	}
	if ok == 0 || ok >= 10 {
		t.Errorf("%d pages of 100 went on a budget of 2000 points", ok)
	}
	for i := range 10 {
		if r := h.do(2, `{ viewer { handle } }`, nil); r.code() != "" {
			t.Fatalf("cheap query %d refused: %+v", i, r.Errors)
		}
	}
}

// Persisted query registration: oversized texts are refused before
// parsing, anonymous callers never store anything, signed-in viewers
// register within their allowance.
func TestHostileAPQRegistration(t *testing.T) {
	h := newHostile(t, APIConfig{MaxTokens: -1, APQRegisterLimit: feedcore.RateLimit{Rate: 0.001, Burst: 3}}, true)
	h.users("ann")
	before := len(h.keys(""))
	big := `{ viewer { handle } }` + strings.Repeat(" ", 20<<10)
	for i := range 30 {
		q := fmt.Sprintf("query Big%d { viewer { handle } }", i) + strings.Repeat(" ", 20<<10)
		_, r := h.raw(h.post(map[string]any{"query": q, "extensions": persisted(extension.QueryHash(q))}))
		mustCode(t, "anonymous large registration", r, "BAD_USER_INPUT")
	}
	for i := range 30 {
		q := fmt.Sprintf(`query Small%d { user(handle: "ann") { handle } }`, i)
		_, r := h.raw(h.post(map[string]any{"query": q, "extensions": persisted(extension.QueryHash(q))}))
		if r.code() != "" {
			t.Fatalf("anonymous small registration %d: %+v", i, r.Errors)
		}
	}
	if keys := h.keys(""); len(keys) != before {
		t.Errorf("60 anonymous registrations: keys %q, %d before", keys, before)
	}
	if n := len(h.keys("apq:")); n != 0 {
		t.Errorf("%d persisted queries stored for anonymous callers", n)
	}
	_, r := h.raw(h.post(map[string]any{"query": big, "extensions": persisted(extension.QueryHash(big))}, auth.DevHeader, "1"))
	mustCode(t, "signed-in large registration", r, "BAD_USER_INPUT")
	for i := range 4 {
		q := fmt.Sprintf(`query Mine%d { viewer { handle } }`, i)
		res, r := h.raw(h.post(map[string]any{"query": q, "extensions": persisted(extension.QueryHash(q))}, auth.DevHeader, "1"))
		if i < 3 {
			if r.code() != "" {
				t.Fatalf("registration %d: %+v", i, r.Errors)
			}
			continue
		}
		mustCode(t, "registration over the allowance", r, "RATE_LIMITED")
		if res.StatusCode != http.StatusTooManyRequests {
			t.Errorf("registration over the allowance: status %d", res.StatusCode)
		}
	}
	if n := len(h.keys("apq:")); n != 3 {
		t.Errorf("%d persisted queries stored, want the 3 allowed", n)
	}
}

// Anonymous and invalid-token callers spend their address's allowance; the
// address comes from the trusted proxy's header, and from nowhere else.
func TestHostileAnonymousPerAddress(t *testing.T) {
	q := map[string]any{"query": `{ user(handle: "ann") { handle } }`} // 2 points
	limit := feedcore.RateLimit{Rate: 0.001, Burst: 6}
	send := func(h *hostile, headers ...string) string {
		t.Helper()
		_, r := h.raw(h.post(q, headers...))
		return r.code()
	}
	xff := "X-Forwarded-For"

	h := newHostile(t, APIConfig{RateLimit: limit, TrustedProxyHeader: xff, TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}, true)
	h.users("ann")
	for i := range 3 {
		if c := send(h, xff, "203.0.113.7"); c != "" {
			t.Fatalf("client A, request %d: %s", i, c)
		}
	}
	if c := send(h, xff, "203.0.113.7"); c != "RATE_LIMITED" {
		t.Errorf("client A over its allowance: %q", c)
	}
	if c := send(h, xff, "198.51.100.1, 203.0.113.8"); c != "" {
		t.Errorf("client B (right-most untrusted hop) limited with A: %q", c)
	}
	if c := send(h, xff, "203.0.113.7, 127.0.0.1"); c != "RATE_LIMITED" {
		t.Errorf("client A behind a second trusted hop: %q", c)
	}
	// Invalid tokens are limited by address too.
	for i := range 3 {
		if c := send(h, xff, "192.0.2.50", "Authorization", "Bearer not-a-token"); c != "" {
			t.Fatalf("invalid token %d: %s", i, c)
		}
	}
	if c := send(h, xff, "192.0.2.50", "Authorization", "Bearer not-a-token"); c != "RATE_LIMITED" {
		t.Errorf("invalid tokens over the address's allowance: %q", c)
	}

	// Without trusted proxies the header is the client's own say: ignored.
	h = newHostile(t, APIConfig{RateLimit: limit}, true)
	h.users("ann")
	for i := range 3 {
		send(h, xff, fmt.Sprintf("203.0.113.%d", i))
	}
	if c := send(h, xff, "203.0.113.99"); c != "RATE_LIMITED" {
		t.Errorf("forged X-Forwarded-For chose a fresh allowance: %q", c)
	}
	if keys := h.keys("rla:"); len(keys) != 1 {
		t.Errorf("rate-limit records %q, want the peer's only", keys)
	}
}

// Unknown operation names cannot fill the metric label slots: they are
// counted as (other), the client's own operations by name.
func TestHostileMetricLabels(t *testing.T) {
	h := newHostile(t, APIConfig{}, false)
	h.users("ann")
	for i := range 600 {
		h.do(0, fmt.Sprintf(`query Junk%d { user(handle: "ann") { handle } }`, i), nil).as(t, &struct{}{})
	}
	// User is one of the client's persisted operations.
	h.do(0, `query User { user(handle: "ann") { handle } }`, nil).as(t, &struct{}{})
	names := h.metrics.runsByOperation(t)
	if len(names) != 2 || names[otherOperation] != 600 || names["User"] != 1 {
		t.Errorf("labels %v, want (other) 600 and User 1", names)
	}
}

// Every operation of the client fits a persisted query registration.
func TestClientOperationsFitAPQLimit(t *testing.T) {
	var ops map[string]string
	if err := json.Unmarshal(client.PersistedJSON, &ops); err != nil || len(ops) == 0 {
		t.Fatalf("client/persisted/persisted.json: %d operations, %v", len(ops), err)
	}
	for _, q := range ops {
		if len(q) > DefaultAPQMaxBytes/4 {
			t.Errorf("a client operation of %d bytes is within 4x of the registration limit %d:\n%s", len(q), DefaultAPQMaxBytes, q)
		}
	}
}

// A refused mutation writes nothing, whether its first Redis call reads
// (publishPost checks its author; the charge rides that read) or writes
// (likePost's script; the charge is spent alone first).
func TestHostileRefusedMutationsWriteNothing(t *testing.T) {
	h := newHostile(t, APIConfig{RateLimit: feedcore.RateLimit{Rate: 0.001, Burst: 200}}, true)
	h.users("ann", "bob")
	ctx := context.Background()
	post, err := h.svc.Publish(ctx, 1, "to like")
	if err != nil {
		t.Fatal(err)
	}
	publish := `mutation { publishPost(input: {text: "hi"}) { post { id } } }`
	if r := h.do(2, publish, nil); r.code() != "" {
		t.Fatalf("a publish within the allowance: %+v", r.Errors)
	}
	// Spend the rest, 2 points at a time.
	for i := 0; h.do(2, `{ viewer { handle } }`, nil).code() == ""; i++ {
		if i > 200 {
			t.Fatal("the allowance never ran out")
		}
	}
	keys := h.keys("")
	like := `mutation($id: ID!) { likePost(id: $id) { post { id } } }`
	mustCode(t, "publish over the allowance", h.do(2, publish, nil), "RATE_LIMITED")
	mustCode(t, "like over the allowance", h.do(2, like, map[string]any{"id": gqltype.Encode(gqltype.Post, post.ID)}), "RATE_LIMITED")
	if now := h.keys(""); len(now) != len(keys) {
		t.Errorf("refused mutations: keys %q, before %q", now, keys)
	}
	if liked, err := h.svc.Liked(ctx, 2, []feedcore.ID{post.ID}); err != nil || liked[0] {
		t.Errorf("a refused like was recorded: %v, %v", liked, err)
	}
}
