package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
)

// BrowserEnv turns the headless-Chromium tests on; ChromiumEnv names the
// browser binary (default /usr/bin/chromium, Debian's package).
const (
	BrowserEnv = "FEED_BROWSER_TEST"
	// ShotsEnv names a folder where the test leaves screenshots of the
	// page as a person sees it (result and docs pane), to look at.
	ShotsEnv    = "FEED_BROWSER_SHOTS"
	ChromiumEnv = "FEED_CHROMIUM"
)

// chromiumOrSkip returns the browser to drive. Without FEED_BROWSER_TEST=1
// the test is skipped; with it, a missing browser fails the test, so a CI
// lane that asked for the browser cannot pass without one.
func chromiumOrSkip(t *testing.T) string {
	t.Helper()
	if os.Getenv(BrowserEnv) != "1" {
		t.Skipf("drives headless Chromium: set %s=1 (.ci/browser.sh installs Chromium and does)", BrowserEnv)
	}
	bin := os.Getenv(ChromiumEnv)
	if bin == "" {
		bin = "/usr/bin/chromium"
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("%s=1 but no Chromium at %s (apt-get install chromium, or set %s): %v", BrowserEnv, bin, ChromiumEnv, err)
	}
	return bin
}

// offsiteTrap is an HTTP proxy that refuses every request and records it.
// The browser is told to use it for everything but loopback, so any request
// for another host, from the page or from the browser itself, lands here
// and fails, as it would on a machine with no internet.
type offsiteTrap struct {
	mu   sync.Mutex
	seen []string
	srv  *http.Server
	addr string
}

func startTrap(t *testing.T) *offsiteTrap {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tr := &offsiteTrap{addr: ln.Addr().String()}
	tr.srv = &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.mu.Lock()
		tr.seen = append(tr.seen, r.Method+" "+r.Host+r.URL.RequestURI())
		tr.mu.Unlock()
		http.Error(w, "offline test: no request may leave the host", http.StatusForbidden)
	})}
	go func() { _ = tr.srv.Serve(ln) }()
	t.Cleanup(func() { _ = tr.srv.Close() })
	return tr
}

func (tr *offsiteTrap) requests() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return slices.Clone(tr.seen)
}

// chromiumServices are the hosts Chromium itself calls in the background
// (sign-in, component and extension updates, network time, autofill and
// optimization hints, the default search engine's preconnect), whatever
// page is open and despite the flags below that turn most of that off.
// They reach the trap and are refused like anything else; the test logs
// them rather than failing on them, because they are the browser's, not
// the page's (the page's own requests are checked one by one through
// DevTools). Any other host in the trap fails the test.
var chromiumServices = []string{
	"accounts.google.com",
	"clients2.google.com",
	"clientservices.googleapis.com",
	"content-autofill.googleapis.com",
	"optimizationguide-pa.googleapis.com",
	"redirector.gvt1.com",
	"safebrowsingohttpgateway.googleapis.com",
	"start.duckduckgo.com",
	"update.googleapis.com",
}

// quietFlags turn off what they can of Chromium's background traffic.
var quietFlags = []string{
	"--disable-features=NetworkTimeServiceQuerying,OptimizationHints,OptimizationGuideModelDownloading," +
		"AutofillServerCommunication,MediaRouter,Translate",
	"--disable-client-side-phishing-detection", "--safebrowsing-disable-auto-update",
	"--disable-domain-reliability", "--metrics-recording-only", "--no-pings",
}

// trapHost is the host a trap record names: "CONNECT host:443/" or
// "GET host/path".
func trapHost(record string) string {
	_, target, _ := strings.Cut(record, " ")
	host, _, _ := strings.Cut(target, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		return h
	}
	return host
}

// pageLog collects what the page did, from DevTools events of the page and
// of every target it starts (frames, workers), which attach calls for.
type pageLog struct {
	self   string                           // the page's own target, which auto-attach reports too
	attach func(session string, watch bool) // called for each auto-attached target

	mu         sync.Mutex
	targets    []string          // targets auto-attached: type and URL
	urls       map[string]string // request id to URL
	requests   []string          // every URL the page requested
	failures   []string          // responses >= 400 and requests that failed
	exceptions []string          // uncaught JavaScript exceptions
	console    []string          // console errors and warnings, and browser log entries
}

func (l *pageLog) event(m cdpMessage) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch m.Method {
	case "Target.attachedToTarget":
		var p struct {
			SessionID  string `json:"sessionId"`
			TargetInfo struct {
				ID   string `json:"targetId"`
				Type string `json:"type"`
				URL  string `json:"url"`
			} `json:"targetInfo"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			other := p.TargetInfo.ID != l.self
			if other {
				l.targets = append(l.targets, p.TargetInfo.Type+" "+p.TargetInfo.URL)
			}
			if l.attach != nil {
				l.attach(p.SessionID, other)
			}
		}
	case "Network.requestWillBeSent":
		var p struct {
			RequestID string `json:"requestId"`
			Request   struct {
				URL string `json:"url"`
			} `json:"request"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			l.requests = append(l.requests, p.Request.URL)
			if l.urls == nil {
				l.urls = map[string]string{}
			}
			l.urls[p.RequestID] = p.Request.URL
		}
	case "Network.responseReceived":
		var p struct {
			Response struct {
				URL    string `json:"url"`
				Status int    `json:"status"`
			} `json:"response"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.Response.Status >= 400 {
			l.failures = append(l.failures, fmt.Sprintf("%d %s", p.Response.Status, p.Response.URL))
		}
	case "Network.loadingFailed":
		var p struct {
			RequestID     string `json:"requestId"`
			ErrorText     string `json:"errorText"`
			BlockedReason string `json:"blockedReason"`
			Canceled      bool   `json:"canceled"`
		}
		if json.Unmarshal(m.Params, &p) == nil && !p.Canceled {
			l.failures = append(l.failures, fmt.Sprintf("%s: %s %s", l.urls[p.RequestID], p.ErrorText, p.BlockedReason))
		}
	case "Runtime.exceptionThrown":
		var p struct {
			ExceptionDetails struct {
				Text      string `json:"text"`
				Exception struct {
					Description string `json:"description"`
				} `json:"exception"`
			} `json:"exceptionDetails"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			l.exceptions = append(l.exceptions, p.ExceptionDetails.Text+" "+p.ExceptionDetails.Exception.Description)
		}
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string `json:"type"`
			Args []struct {
				Value       any    `json:"value"`
				Description string `json:"description"`
			} `json:"args"`
		}
		if json.Unmarshal(m.Params, &p) == nil && (p.Type == "error" || p.Type == "warning") {
			var parts []string
			for _, a := range p.Args {
				if a.Value != nil {
					parts = append(parts, fmt.Sprint(a.Value))
				} else {
					parts = append(parts, a.Description)
				}
			}
			l.console = append(l.console, "console."+p.Type+": "+strings.Join(parts, " "))
		}
	case "Log.entryAdded":
		var p struct {
			Entry struct {
				Source string `json:"source"`
				Level  string `json:"level"`
				Text   string `json:"text"`
				URL    string `json:"url"`
			} `json:"entry"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			l.console = append(l.console, fmt.Sprintf("log %s/%s: %s", p.Entry.Source, p.Entry.Level, p.Entry.Text))
		}
	}
}

func (l *pageLog) snapshot() (requests, failures, exceptions, console, targets []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.requests), slices.Clone(l.failures), slices.Clone(l.exceptions),
		slices.Clone(l.console), slices.Clone(l.targets)
}

// waitFor evaluates expr in the page until it yields a value for which
// done returns true, or fails the test at the deadline with what it saw.
func waitFor[T any](ctx context.Context, t *testing.T, c *chrome, session, what, expr string, timeout time.Duration, done func(T) bool) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last T
	var lastErr error
	for {
		var v T
		evalCtx, cancelEval := context.WithTimeout(ctx, 5*time.Second)
		lastErr = c.eval(evalCtx, session, expr, &v)
		cancelEval()
		if lastErr == nil {
			last = v
			if done(v) {
				return v
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("timed out after %v waiting for %s; last value %v, last error %v", timeout, what, last, lastErr)
		case <-tick.C:
		}
	}
}

// Page expressions. GraphiQL 3 renders its editors with CodeMirror 5, whose
// wrapper element carries the editor as .CodeMirror.
const (
	jsEditorText = `(sel) => { const e = document.querySelector(sel + ' .CodeMirror'); return e && e.CodeMirror ? e.CodeMirror.getValue() : ''; }`
	jsQueryText  = `(` + jsEditorText + `)('.graphiql-query-editor')`
	jsResultText = `(` + jsEditorText + `)('.result-window')`
	jsAllEditors = `[...document.querySelectorAll('.CodeMirror')].map(e => e.CodeMirror ? e.CodeMirror.getValue() : '')`
	jsRunButton  = `(() => { const b = document.querySelector('.graphiql-execute-button'); if (!b) return null;
		const r = b.getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2, w: r.width}; })()`
)

// TestGraphiQLOffline loads GraphiQL in headless Chromium from the real
// handler over the demo data, runs the example followingFeed query with the
// run button, and reads the result from the page. Every request for another
// host goes to a proxy that refuses and records it, and the test fails if
// the page asked for anything outside the test server's origin: the page
// works with no internet.
func TestGraphiQLOffline(t *testing.T) {
	bin := chromiumOrSkip(t)
	f := startFeedd(t, true)
	trap := startTrap(t)
	origin := f.srv.URL // http://127.0.0.1:PORT: loopback, so not proxied

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	log := &pageLog{}
	c, s := openPage(ctx, t, bin, trap, log)
	// page, 5 assets, and the GraphQL requests
	defer checkOffline(ctx, t, c, s, origin, 6, log, trap)

	// The first visit to / is redirected to the example query and header.
	if err := c.call(ctx, s, "Page.navigate", map[string]any{"url": origin + "/"}, nil); err != nil {
		t.Fatal(err)
	}
	query := waitFor(ctx, t, c, s, "GraphiQL to show the example query", jsQueryText, 30*time.Second,
		func(q string) bool { return strings.Contains(q, "followingFeed(first: 10)") })
	if !strings.Contains(query, "query Feed") {
		t.Errorf("query editor holds %q, want the example query", query)
	}
	var search string
	if err := c.eval(ctx, s, `location.search`, &search); err != nil {
		t.Fatal(err)
	}
	params, _ := url.ParseQuery(strings.TrimPrefix(search, "?"))
	if !strings.Contains(params.Get("headers"), auth.DevHeader) {
		t.Errorf("page URL %q carries no %s header", search, auth.DevHeader)
	}
	// The header editor is on and holds the dev header from the URL.
	viewerHeader := fmt.Sprintf("%q: %q", auth.DevHeader, feedcore.FormatID(f.viewer))
	waitFor(ctx, t, c, s, "the header editor to hold "+viewerHeader, jsAllEditors, 10*time.Second,
		func(texts []string) bool {
			return slices.ContainsFunc(texts, func(x string) bool { return strings.Contains(x, viewerHeader) })
		})

	// Run it: a real mouse click on the run button.
	clickRun(ctx, t, c, s)
	resultText := waitFor(ctx, t, c, s, "the result pane to show followingFeed", jsResultText, 30*time.Second,
		func(x string) bool { return strings.Contains(x, `"followingFeed"`) || strings.Contains(x, `"errors"`) })

	var got feedResult
	if err := json.Unmarshal([]byte(resultText), &got); err != nil {
		t.Fatalf("result pane is not JSON: %v\n%s", err, resultText)
	}
	if len(got.Errors) > 0 {
		t.Fatalf("the page's query failed: %s", got.Errors)
	}
	edges := got.Data.FollowingFeed.Edges
	if len(edges) != 10 {
		t.Fatalf("the page shows %d posts, want 10:\n%s", len(edges), resultText)
	}
	// The page shows what the API returns for the same query and viewer.
	var want feedResult
	if err := json.Unmarshal(f.query(t, f.viewer, query), &want); err != nil {
		t.Fatal(err)
	}
	if got.Data.Viewer.Handle != want.Data.Viewer.Handle {
		t.Errorf("page's viewer = %q, API's = %q", got.Data.Viewer.Handle, want.Data.Viewer.Handle)
	}
	for i, e := range want.Data.FollowingFeed.Edges {
		if i >= len(edges) || edges[i].Node.ID != e.Node.ID || edges[i].Node.Text != e.Node.Text {
			t.Errorf("post %d: page shows %+v, API returns %+v", i, edges[min(i, len(edges)-1)].Node, e.Node)
		}
	}
	if edges[0].Node.Text == "" || !strings.Contains(resultText, edges[0].Node.Text) {
		t.Errorf("first post's text %q not in the result pane", edges[0].Node.Text)
	}
	screenshot(ctx, t, c, s, "graphiql-result.png")
	t.Logf("page shows %d posts for @%s; first by @%s: %q", len(edges), got.Data.Viewer.Handle, edges[0].Node.Author.Handle, edges[0].Node.Text)

	// The schema loaded: the docs pane lists the root types (it says "Error
	// fetching schema" when introspection fails, as it did under the
	// default depth limit).
	if err := c.eval(ctx, s, `(() => { const b = document.querySelector('button[aria-label="Show Documentation Explorer"]');
		if (b) b.click(); return !!b; })()`, nil); err != nil {
		t.Fatal(err)
	}
	docs := waitFor(ctx, t, c, s, "the docs pane to list the schema's root types",
		`(document.querySelector('.graphiql-doc-explorer') || {}).innerText || ''`, 30*time.Second,
		func(x string) bool { return strings.Contains(x, "Query") || strings.Contains(x, "rror") })
	if !strings.Contains(docs, "Query") || strings.Contains(docs, "Error fetching schema") {
		t.Fatalf("docs pane: %q, want the schema's root types", docs)
	}
	screenshot(ctx, t, c, s, "graphiql-docs.png")

	// Edits are kept in the URL.
	if err := c.eval(ctx, s, `(() => { const cm = document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror;
		cm.setValue(cm.getValue().replace('followingFeed(first: 10)', 'followingFeed(first: 3)')); })()`, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(ctx, t, c, s, "the edited query in the URL", `new URLSearchParams(location.search).get('query') || ''`, 10*time.Second,
		func(q string) bool { return strings.Contains(q, "followingFeed(first: 3)") })
}

// checkOffline fails t if the page requested anything outside origin (or
// fewer than minOwn requests within it), if a
// request reached the trap from anywhere but Chromium's own services, or if
// a request failed, a script threw or the CSP refused something. It runs
// at the end of the test even when the test stops early, so a page that
// hangs on a CDN says which one.
func checkOffline(ctx context.Context, t *testing.T, c *chrome, s, origin string, minOwn int, log *pageLog, trap *offsiteTrap) {
	var csp []string
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := c.eval(ctx, s, `window.__cspViolations || []`, &csp); err != nil {
		t.Errorf("reading CSP violations: %v", err)
	}
	requests, failures, exceptions, console, targets := log.snapshot()
	own := 0
	for _, u := range requests {
		switch {
		case strings.HasPrefix(u, origin+"/"):
			own++
		case strings.HasPrefix(u, "data:"), u == "about:blank":
		default:
			t.Errorf("the page requested %s, outside %s", u, origin)
		}
	}
	if own < minOwn && !t.Failed() {
		t.Errorf("saw only %d requests to the test server: %q", own, requests)
	}
	for _, r := range trap.requests() {
		if slices.Contains(chromiumServices, trapHost(r)) {
			t.Logf("Chromium's own background request, refused: %s", r)
		} else {
			t.Errorf("a request left the host (refused by the trap proxy): %s", r)
		}
	}
	for _, x := range failures {
		t.Errorf("request failed: %s", x)
	}
	for _, x := range exceptions {
		t.Errorf("uncaught exception: %s", x)
	}
	for _, x := range csp {
		t.Errorf("CSP violation: %s", x)
	}
	for _, x := range console {
		t.Logf("%s", x)
	}
	for _, x := range targets {
		t.Logf("the page started %s", x)
	}
	t.Logf("%d requests to %s", own, origin)
}

// screenshot saves the page as a PNG in $FEED_BROWSER_SHOTS, if set
// (made if missing).
func screenshot(ctx context.Context, t *testing.T, c *chrome, session, name string) {
	dir := os.Getenv(ShotsEnv)
	if dir == "" {
		return
	}
	var shot struct {
		Data []byte `json:"data"` // base64 in JSON: decoded by encoding/json
	}
	if err := c.call(ctx, session, "Page.captureScreenshot", map[string]any{"format": "png", "captureBeyondViewport": true}, &shot); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, name), shot.Data, 0o644); err != nil {
		t.Errorf("screenshot %s: %v", name, err)
	}
}
