package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/redis/rueidis"
	"github.com/vektah/gqlparser/v2"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/resolvers"
	"github.com/feedd/feedd/server/extension"
)

// newAPIEnv is newEnv with the given APIConfig on /query.
func newAPIEnv(t *testing.T, api APIConfig) *env {
	t.Helper()
	st := storetest.New(t)
	return newAPIEnvOn(t, st.Client, st.Prefix, api)
}

// newAPIEnvOn is newAPIEnv over a given client and key prefix. The routes
// are wired as New wires them, with api in place of Config's.
func newAPIEnvOn(t *testing.T, c rueidis.Client, prefix string, api APIConfig) *env {
	t.Helper()
	svc, err := feedcore.New(context.Background(), c, feedcore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	reg := NewMetrics()
	cfg := Config{Service: svc, DevAuth: true, Verifier: &auth.Verifier{HS256Secret: testSecret}, Metrics: reg}
	cfg.Logger = discardLogger()
	mux := http.NewServeMux()
	cfg.APIConfig = api
	mux.Handle("/query", ensureErrorCodes(graphqlHandler(cfg)))
	srv := httptest.NewServer(withRequestInfo(cfg, mux))
	t.Cleanup(srv.Close)
	return &env{t: t, svc: svc, srv: srv, metrics: reg}
}

// raw sends req and returns the response with its body decoded.
func (e *env) raw(req *http.Request) (*http.Response, *gqlResponse) {
	e.t.Helper()
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	out := &gqlResponse{Status: res.StatusCode}
	if len(body) > 0 {
		if err := json.Unmarshal(body, out); err != nil {
			e.t.Fatalf("response is not JSON (status %d): %s", res.StatusCode, body)
		}
	}
	for _, ge := range out.Errors {
		if c, _ := ge.Extensions["code"].(string); c == "" {
			e.t.Errorf("error without extensions.code: %+v", ge)
		}
	}
	return res, out
}

// post builds a POST to /query with a JSON body made of fields.
func (e *env) post(fields map[string]any, headers ...string) *http.Request {
	body, _ := json.Marshal(fields)
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return req
}

func TestQueryLimits(t *testing.T) {
	e := newAPIEnv(t, APIConfig{MaxDepth: 4, MaxTokens: 60, MaxBodyBytes: 2000})
	e.users("ann")
	def := newAPIEnv(t, APIConfig{}) // default limits
	def.users("ann")
	big := `{ a: followingFeed(first: 100) { edges { node { ...P } } } b: followingFeed(first: 100) { edges { node { ...P } } } c: followingFeed(first: 100) { edges { node { ...P } } } d: followingFeed(first: 100) { edges { node { ...P } } } e: followingFeed(first: 100) { edges { node { ...P } } } }
fragment P on Post { id text createdAt counts { likes comments reposts favorites } author { id } }`
	for _, c := range []struct {
		e           *env
		name, query string
		code        string
		status      int
		msg         string
	}{
		{e, "depth at the limit", `{ followingFeed { edges { node { id } } } }`, "", 200, ""},
		{e, "depth over the limit", `{ followingFeed { edges { node { author { id } } } } }`, "BAD_USER_INPUT", 0, "deeper than the limit of 4"},
		{e, "depth over, through fragments", `{ followingFeed { ...C } } fragment C on PostConnection { edges { ... on PostEdge { node { ...P } } } } fragment P on Post { author { handle } }`, "BAD_USER_INPUT", 0, "deeper"},
		{def, "complexity", big, "BAD_USER_INPUT", 0, "complexity"},
		{e, "tokens", `{ viewer { ` + strings.Repeat("handle ", 60) + `} }`, "BAD_USER_INPUT", 0, "token limit"},
		{e, "body size", `{ viewer { handle } }` + strings.Repeat(" ", 2000), "BAD_USER_INPUT", http.StatusRequestEntityTooLarge, "exceeds 2000 bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, r := c.e.raw(c.e.post(map[string]any{"query": c.query}, auth.DevHeader, "1"))
			if c.code == "" {
				if len(r.Errors) > 0 || res.StatusCode != 200 {
					t.Fatalf("status %d, errors %+v", res.StatusCode, r.Errors)
				}
				return
			}
			mustCode(t, c.name, r, c.code)
			if c.status != 0 && res.StatusCode != c.status {
				t.Errorf("status = %d, want %d", res.StatusCode, c.status)
			}
			if len(r.Errors) > 0 && !strings.Contains(r.Errors[0].Message, c.msg) {
				t.Errorf("message %q does not say %q", r.Errors[0].Message, c.msg)
			}
			if len(r.Data) > 0 && string(r.Data) != "null" {
				t.Errorf("refused operation returned data %s", r.Data)
			}
		})
	}
}

// TestComplexityBudget keeps what clients really send well under the
// default limit: GraphiQL's example and every operation of the Go client
// at the largest page size.
func TestComplexityBudget(t *testing.T) {
	gc := resolvers.New(nil).Config()
	gc.Complexity = complexityRoot()
	es := graph.NewExecutableSchema(gc)
	ops := map[string]string{
		"graphiql example": exampleQuery,
		"DeletePost":       client.DeletePost_Operation, "EndLive": client.EndLive_Operation,
		"FollowUser": client.FollowUser_Operation, "FollowingFeed": client.FollowingFeed_Operation,
		"LikePost": client.LikePost_Operation, "LiveFeed": client.LiveFeed_Operation,
		"Node": client.Node_Operation, "PublishPost": client.PublishPost_Operation,
		"ScheduleLive": client.ScheduleLive_Operation, "StartLive": client.StartLive_Operation,
		"UnfollowUser": client.UnfollowUser_Operation, "UnlikePost": client.UnlikePost_Operation,
		"User": client.User_Operation, "Viewer": client.Viewer_Operation,
	}
	for name, q := range ops {
		doc, err := gqlparser.LoadQueryWithRules(es.Schema(), q, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, vars := range []map[string]any{{"first": 100}, {"last": 100}, {}} {
			n := complexity.Calculate(context.Background(), es, doc.Operations[0], vars)
			t.Logf("%s %v: complexity %d", name, vars, n)
			if n > DefaultMaxComplexity/2 {
				t.Errorf("%s %v: complexity %d, more than half the default limit %d", name, vars, n, DefaultMaxComplexity)
			}
		}
		op := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0]}
		if err := (extension.DepthLimit{Max: DefaultMaxDepth - 4}).MutateOperationContext(context.Background(), op); err != nil {
			t.Errorf("%s: depth close to the default limit %d: %v", name, DefaultMaxDepth, err)
		}
	}
	// A connection costs its base plus its page size times an edge.
	doc, _ := gqlparser.LoadQueryWithRules(es.Schema(), `query($n: Int) { followingFeed(first: $n) { edges { cursor } } }`, nil)
	op := doc.Operations[0]
	if a, b := complexity.Calculate(context.Background(), es, op, map[string]any{"n": 10})-costFollowingFeed,
		complexity.Calculate(context.Background(), es, op, map[string]any{"n": 100})-costFollowingFeed; b < 9*a || a <= 0 {
		t.Errorf("edges of 100 items cost %d, not about 10 times the %d of 10 items", b, a)
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

func TestIntrospection(t *testing.T) {
	on := newAPIEnv(t, APIConfig{})
	off := newAPIEnv(t, APIConfig{DisableIntrospection: true})
	for _, c := range []struct {
		name, query string
		offCode     string
	}{
		{"__schema", `{ __schema { queryType { name } } }`, "FORBIDDEN"},
		{"__type", `{ __type(name: "Post") { name } }`, "FORBIDDEN"},
		{"__type through a fragment", `query { ...Q } fragment Q on Query { ... on Query { __type(name: "Post") { name } } }`, "FORBIDDEN"},
		{"__typename stays allowed", `{ __typename }`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if r := on.do(0, c.query, nil); len(r.Errors) > 0 || len(r.Data) == 0 {
				t.Errorf("introspection on: %s, errors %+v", r.Data, r.Errors)
			}
			r := off.do(0, c.query, nil)
			if c.offCode == "" {
				if len(r.Errors) > 0 {
					t.Errorf("introspection off: errors %+v", r.Errors)
				}
				return
			}
			mustCode(t, "introspection off", r, c.offCode)
			if len(r.Errors) > 0 && !strings.Contains(r.Errors[0].Message, "introspection is disabled") {
				t.Errorf("message %q", r.Errors[0].Message)
			}
		})
	}
}
