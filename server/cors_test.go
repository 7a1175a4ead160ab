package server

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/feedd/feedd/auth"
)

func TestCORSAndCSRF(t *testing.T) {
	const app = "https://app.example.com"
	e := newAPIEnv(t, APIConfig{CORSOrigins: []string{app + "/"}})
	e.users("ann", "bob")
	self := e.srv.URL // the server's own origin: http://127.0.0.1:port
	follow := map[string]any{"query": `mutation { followUser(userId: "2") { user { id } } }`}
	viewer := map[string]any{"query": `{ viewer { handle } }`}

	preflight := func(origin string) *http.Request {
		req, _ := http.NewRequest(http.MethodOptions, e.srv.URL+"/query", nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type, authorization")
		return req
	}
	withBody := func(contentType, body string) *http.Request {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/query", strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set(auth.DevHeader, "1")
		return req
	}
	get := func(query, origin string) *http.Request {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/query?"+url.Values{"query": {query}}.Encode(), nil)
		req.Header.Set(auth.DevHeader, "1")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		return req
	}
	for _, c := range []struct {
		name   string
		req    *http.Request
		status int
		code   string
		acao   string // expected Access-Control-Allow-Origin
	}{
		{"preflight, allowed origin", preflight(app), http.StatusNoContent, "", app},
		{"preflight, own origin", preflight(self), http.StatusNoContent, "", self},
		{"preflight, other origin", preflight("https://evil.example"), http.StatusForbidden, "FORBIDDEN", ""},
		{"preflight, null origin", preflight("null"), http.StatusForbidden, "FORBIDDEN", ""},
		{"query, allowed origin", e.post(viewer, "Origin", app, auth.DevHeader, "1"), http.StatusOK, "", app},
		{"query, no origin (not a browser)", e.post(viewer, auth.DevHeader, "1"), http.StatusOK, "", ""},
		{"query, other origin", e.post(viewer, "Origin", "https://evil.example", auth.DevHeader, "1"), http.StatusForbidden, "FORBIDDEN", ""},
		{"mutation, other origin", e.post(follow, "Origin", "https://evil.example", auth.DevHeader, "1"), http.StatusForbidden, "FORBIDDEN", ""},
		{"mutation, lookalike origin", e.post(follow, "Origin", "https://app.example.com.evil.example", auth.DevHeader, "1"), http.StatusForbidden, "FORBIDDEN", ""},
		{"mutation, text/plain", withBody("text/plain", `{"query":"mutation { followUser(userId: \"2\") { user { id } } }"}`), http.StatusUnsupportedMediaType, "BAD_USER_INPUT", ""},
		{"mutation, form", withBody("application/x-www-form-urlencoded", `query=mutation+%7B+followUser(userId%3A+%222%22)+%7B+user+%7B+id+%7D+%7D+%7D`), http.StatusUnsupportedMediaType, "BAD_USER_INPUT", ""},
		{"mutation, multipart", withBody("multipart/form-data; boundary=x", "--x--"), http.StatusUnsupportedMediaType, "BAD_USER_INPUT", ""},
		{"mutation over GET", get(`mutation { followUser(userId: "2") { user { id } } }`, ""), http.StatusNotAcceptable, "BAD_USER_INPUT", ""},
		{"query over GET", get(`{ viewer { handle } }`, ""), http.StatusOK, "", ""},
		{"query over GET, other origin", get(`{ viewer { handle } }`, "https://evil.example"), http.StatusForbidden, "FORBIDDEN", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, r := e.raw(c.req)
			if res.StatusCode != c.status {
				t.Errorf("status = %d, want %d (errors %+v)", res.StatusCode, c.status, r.Errors)
			}
			if c.code != "" {
				mustCode(t, c.name, r, c.code)
			} else if len(r.Errors) > 0 {
				t.Errorf("errors %+v", r.Errors)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != c.acao {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, c.acao)
			}
			if c.req.Method == http.MethodOptions && c.status == http.StatusNoContent {
				if h := res.Header.Get("Access-Control-Allow-Headers"); !strings.Contains(h, "Authorization") || !strings.Contains(h, "Content-Type") {
					t.Errorf("Access-Control-Allow-Headers = %q", h)
				}
				if m := res.Header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "POST") {
					t.Errorf("Access-Control-Allow-Methods = %q", m)
				}
			}
		})
	}
	mustNotFollow(t, e, 1, 2)

	// With no origins configured only the server's own origin passes.
	own := newAPIEnv(t, APIConfig{})
	own.users("ann")
	if res, r := own.raw(own.post(viewer, "Origin", app, auth.DevHeader, "1")); res.StatusCode != http.StatusForbidden {
		t.Errorf("unconfigured origin: status %d, errors %+v", res.StatusCode, r.Errors)
	}
	if res, r := own.raw(own.post(viewer, "Origin", own.srv.URL, auth.DevHeader, "1")); res.StatusCode != http.StatusOK || len(r.Errors) > 0 {
		t.Errorf("own origin: status %d, errors %+v", res.StatusCode, r.Errors)
	}
	// "*" accepts any origin.
	anyone := newAPIEnv(t, APIConfig{CORSOrigins: []string{"*"}})
	req := preflight(app)
	req.URL, _ = url.Parse(anyone.srv.URL + "/query")
	if res, _ := anyone.raw(req); res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != app {
		t.Errorf(`"*": preflight status %d, headers %v`, res.StatusCode, res.Header)
	}
}

// A web app on an allowed origin may send X-Device-Id: its preflight lists
// the header, and each device of the viewer keeps a live feed snapshot of
// its own.
func TestCORSDeviceID(t *testing.T) {
	const app = "https://app.example.com"
	h := newHostile(t, APIConfig{CORSOrigins: []string{app}}, true)
	h.liveFixture()

	req, _ := http.NewRequest(http.MethodOptions, h.srv.URL+"/query", nil)
	req.Header.Set("Origin", app)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type, x-viewer-id, x-device-id")
	res, _ := h.raw(req)
	if res.StatusCode != http.StatusNoContent || res.Header.Get("Access-Control-Allow-Origin") != app {
		t.Fatalf("preflight: status %d, headers %v", res.StatusCode, res.Header)
	}
	allowed := map[string]bool{}
	for _, name := range strings.Split(res.Header.Get("Access-Control-Allow-Headers"), ",") {
		allowed[http.CanonicalHeaderKey(strings.TrimSpace(name))] = true
	}
	for _, name := range strings.Split(req.Header.Get("Access-Control-Request-Headers"), ",") {
		if !allowed[http.CanonicalHeaderKey(strings.TrimSpace(name))] {
			t.Errorf("preflight does not allow %q: Access-Control-Allow-Headers = %q", name, res.Header.Get("Access-Control-Allow-Headers"))
		}
	}

	page := map[string]any{"query": `{ liveFeed(first: 1) { edges { cursor } } }`}
	for _, device := range []string{"phone", "browser"} {
		res, r := h.raw(h.post(page, "Origin", app, auth.DevHeader, "1", "X-Device-Id", device))
		if res.StatusCode != http.StatusOK || len(r.Errors) > 0 || res.Header.Get("Access-Control-Allow-Origin") != app {
			t.Fatalf("device %s: status %d, errors %+v, headers %v", device, res.StatusCode, r.Errors, res.Header)
		}
	}
	if n := len(h.keys("lss:")); n != 2 {
		t.Errorf("two devices from %s left %d live snapshots, want 2", app, n)
	}
}
