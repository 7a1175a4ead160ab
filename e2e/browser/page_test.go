package browser

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
)

// noRedirects is a client that reports redirects instead of following them.
func noRedirects(srv *http.Client) *http.Client {
	c := *srv
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

func get(t *testing.T, c *http.Client, u string, header ...string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, body
}

var srcOrHref = regexp.MustCompile(`(?:src|href)="([^"]*)"`)

// TestPageOverHTTP checks what the browser test relies on, without a
// browser: the first visit is redirected to the example query and dev
// header, the page refers only to its own origin, and every asset it names
// is served with its content type, a long cache lifetime and gzip.
func TestPageOverHTTP(t *testing.T) {
	f := startFeedd(t, false)
	c := noRedirects(f.srv.Client())

	res, _ := get(t, c, f.srv.URL+"/")
	if res.StatusCode != http.StatusFound {
		t.Fatalf("GET /: status %d, want a redirect", res.StatusCode)
	}
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || loc.Path != "/" {
		t.Fatalf("GET /: redirected to %q", res.Header.Get("Location"))
	}
	if q := loc.Query().Get("query"); !strings.Contains(q, "followingFeed(first: 10)") {
		t.Errorf("redirect's query = %q, want the example query", q)
	}
	var headers map[string]string
	if err := json.Unmarshal([]byte(loc.Query().Get("headers")), &headers); err != nil ||
		headers[auth.DevHeader] != feedcore.FormatID(f.viewer) {
		t.Errorf("redirect's headers = %q, want {%q: %q}", loc.Query().Get("headers"), auth.DevHeader, feedcore.FormatID(f.viewer))
	}

	res, page := get(t, c, f.srv.URL+loc.String())
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("page: status %d, type %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("page CSP = %q, want scripts and requests limited to the origin", csp)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("page Cache-Control = %q, want no-cache (it names asset versions)", cc)
	}

	refs := srcOrHref.FindAllStringSubmatch(string(page), -1)
	wantTypes := map[string]string{
		"react.production.min.js":     "text/javascript",
		"react-dom.production.min.js": "text/javascript",
		"graphiql.min.js":             "text/javascript",
		"start.js":                    "text/javascript",
		"graphiql.min.css":            "text/css",
	}
	seen := map[string]bool{}
	for _, m := range refs {
		ref := html.UnescapeString(m[1])
		if strings.HasPrefix(ref, "data:") {
			continue
		}
		u, err := url.Parse(ref)
		if err != nil || u.Scheme != "" || u.Host != "" || !strings.HasPrefix(u.Path, "/") {
			t.Errorf("page refers to %q: want a path on its own origin", ref)
			continue
		}
		name := u.Query().Get("asset")
		seen[name] = true
		res, body := get(t, c, f.srv.URL+ref)
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: status %d", ref, res.StatusCode)
			continue
		}
		if ct := res.Header.Get("Content-Type"); wantTypes[name] == "" || !strings.HasPrefix(ct, wantTypes[name]) {
			t.Errorf("%s: Content-Type %q, want %q", ref, ct, wantTypes[name])
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "max-age=31536000") || !strings.Contains(cc, "immutable") {
			t.Errorf("%s: Cache-Control %q, want a year, immutable", ref, cc)
		}
		if res.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no X-Content-Type-Options: nosniff", ref)
		}
		if len(body) == 0 {
			t.Errorf("%s: empty", ref)
		}
		// The client's http.Transport asks for gzip itself and hides it;
		// ask explicitly to see the encoding.
		gres, gbody := get(t, c, f.srv.URL+ref, "Accept-Encoding", "gzip")
		if len(body) > 50_000 {
			if gres.Header.Get("Content-Encoding") != "gzip" {
				t.Errorf("%s: not gzipped on request", ref)
				continue
			}
			zr, err := gzip.NewReader(bytes.NewReader(gbody))
			if err != nil {
				t.Fatal(err)
			}
			plain, err := io.ReadAll(zr)
			if err != nil || !bytes.Equal(plain, body) {
				t.Errorf("%s: gzipped body differs (%v)", ref, err)
			}
		}
		if etag := gres.Header.Get("ETag"); etag != "" {
			nres, _ := get(t, c, f.srv.URL+ref, "Accept-Encoding", "gzip", "If-None-Match", etag)
			if nres.StatusCode != http.StatusNotModified {
				t.Errorf("%s with If-None-Match %s: status %d, want 304", ref, etag, nres.StatusCode)
			}
		}
	}
	for name := range wantTypes {
		if !seen[name] {
			t.Errorf("page does not load %s", name)
		}
	}

	if res, _ := get(t, c, f.srv.URL+"/?asset=nope.js"); res.StatusCode != http.StatusNotFound {
		t.Errorf("unknown asset: status %d, want 404", res.StatusCode)
	}
	if res, _ := get(t, c, f.srv.URL+"/?asset=start.js&v=old"); res.StatusCode != http.StatusOK || res.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("asset with a stale version: status %d, Cache-Control %q; want 200, no-cache", res.StatusCode, res.Header.Get("Cache-Control"))
	}
}
