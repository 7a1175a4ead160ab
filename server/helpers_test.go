package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
)

var testSecret = []byte("server-test-secret-0123456789abcdef")

// env is one test's feedd: its own store, service and HTTP server.
type env struct {
	t   *testing.T
	svc *feedcore.Service
	srv *httptest.Server
	// metrics is this server's own registry.
	metrics *Metrics
	// conns are this server's streams, when the test gave them
	// (newStreamEnv).
	conns *Connections
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := storetest.New(t)
	return newEnvOn(t, st.Client, st.Prefix)
}

// newEnvOn is newEnv over a given client and key prefix.
func newEnvOn(t *testing.T, client rueidis.Client, prefix string) *env {
	t.Helper()
	return newEnvWith(t, client, prefix, APIConfig{})
}

// newEnvWith is newEnvOn with an API surface: the server exactly as New
// builds it.
func newEnvWith(t *testing.T, client rueidis.Client, prefix string, api APIConfig) *env {
	t.Helper()
	return newEnvOpts(t, client, feedcore.Options{Prefix: prefix}, api)
}

// testRequestTimeout replaces DefaultRequestTimeout in the tests' servers:
// they check what is answered, never how fast, and -race on a machine busy
// with the other packages' tests can take a large request past 5s, which
// would answer UNAVAILABLE.
const testRequestTimeout = 2 * time.Minute

// newEnvOpts is newEnvWith over a Service with opts.
func newEnvOpts(t *testing.T, client rueidis.Client, opts feedcore.Options, api APIConfig) *env {
	t.Helper()
	svc, err := feedcore.New(context.Background(), client, opts)
	if err != nil {
		t.Fatal(err)
	}
	reg := NewMetrics()
	srv := httptest.NewServer(New(Config{
		Service:        svc,
		DevAuth:        true,
		Verifier:       &auth.Verifier{HS256Secret: testSecret},
		Metrics:        reg,
		APIConfig:      api,
		RequestTimeout: testRequestTimeout,
	}))
	t.Cleanup(srv.Close)
	return &env{t: t, svc: svc, srv: srv, metrics: reg}
}

// users creates profiles with ids 1, 2, ... and the given handles.
func (e *env) users(handles ...string) {
	e.t.Helper()
	us := make([]feedcore.User, len(handles))
	for i, h := range handles {
		us[i] = feedcore.User{ID: feedcore.ID(i + 1), Handle: h, DisplayName: "The " + h}
	}
	if _, err := e.svc.PutUsers(context.Background(), us); err != nil {
		e.t.Fatal(err)
	}
}

type gqlError struct {
	Message    string         `json:"message"`
	Path       []any          `json:"path"`
	Extensions map[string]any `json:"extensions"`
}

type gqlResponse struct {
	Status int
	Data   json.RawMessage `json:"data"`
	Errors []gqlError      `json:"errors"`
	// Extensions is the response's extensions (cost, ...).
	Extensions map[string]any `json:"extensions"`
}

// code is the first error's extensions.code, or "" when there is none.
func (r *gqlResponse) code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// as decodes data into v, failing the test on any GraphQL error.
func (r *gqlResponse) as(t *testing.T, v any) {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("unexpected errors: %+v", r.Errors)
	}
	if err := json.Unmarshal(r.Data, v); err != nil {
		t.Fatalf("decode data %s: %v", r.Data, err)
	}
}

// do posts a GraphQL request. headers are added as given; viewer, when not
// zero, is sent as X-Viewer-Id.
func (e *env) do(viewer feedcore.ID, query string, vars map[string]any, headers ...string) *gqlResponse {
	e.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if viewer != 0 {
		req.Header.Set(auth.DevHeader, feedcore.FormatID(viewer))
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return e.send(req)
}

func (e *env) send(req *http.Request) *gqlResponse {
	e.t.Helper()
	res, err := e.srv.Client().Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	out := &gqlResponse{Status: res.StatusCode}
	if err := json.Unmarshal(raw, out); err != nil {
		e.t.Fatalf("response is not JSON (status %d): %s", res.StatusCode, raw)
	}
	for _, ge := range out.Errors {
		if c, _ := ge.Extensions["code"].(string); c == "" {
			e.t.Errorf("error without extensions.code: %+v", ge)
		}
	}
	return out
}

// mustCode asserts r failed with code.
func mustCode(t *testing.T, what string, r *gqlResponse, code string) {
	t.Helper()
	if r.code() != code {
		t.Errorf("%s: code = %q, want %q (errors %+v)", what, r.code(), code, r.Errors)
	}
}
