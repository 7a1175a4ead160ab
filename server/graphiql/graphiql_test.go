package graphiql

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

// TestVendoredFilesMatchSums checks the embedded npm files against
// dist/SHA256SUMS, which update.sh writes from what npm serves.
func TestVendoredFilesMatchSums(t *testing.T) {
	sums, err := files.ReadFile("dist/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(sums))
	for sc.Scan() {
		want, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || strings.HasPrefix(name, "LICENSE") {
			continue
		}
		body, err := files.ReadFile("dist/" + name)
		if err != nil {
			t.Errorf("%s is in SHA256SUMS but not embedded: %v", name, err)
			continue
		}
		if got := sha256.Sum256(body); hex.EncodeToString(got[:]) != want {
			t.Errorf("dist/%s does not match SHA256SUMS: refetch it with update.sh", name)
		}
		checked++
	}
	if checked != 4 {
		t.Errorf("checked %d files, want 4", checked)
	}
}

var cssURL = regexp.MustCompile(`url\(\s*['"]?([^'")]*)`)

// TestNothingExternal checks that the stylesheet and the page name nothing
// outside the page's origin: the stylesheet only data: URLs, no @import.
func TestNothingExternal(t *testing.T) {
	css, err := files.ReadFile("dist/graphiql.min.css")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(css, []byte("@import")) {
		t.Error("graphiql.min.css has an @import")
	}
	for _, m := range cssURL.FindAllSubmatch(css, -1) {
		if !bytes.HasPrefix(m[1], []byte("data:")) {
			t.Errorf("graphiql.min.css refers to %q", m[1])
		}
	}
	h := New(Config{Title: "t", Endpoint: "/query", StoragePrefix: "p"})
	for _, ref := range regexp.MustCompile(`(?:src|href)="([^"]*)"`).FindAllSubmatch(h.page, -1) {
		r := string(ref[1])
		if !strings.HasPrefix(r, "/?asset=") && !strings.HasPrefix(r, "data:") {
			t.Errorf("page refers to %q", r)
		}
	}
	if regexp.MustCompile(`(?i)https?:|//[a-z]`).Match(h.page) {
		t.Error("page has an absolute URL")
	}
}

// TestMountPath checks that asset URLs follow Config.Path and that the
// handler serves them there.
func TestMountPath(t *testing.T) {
	h := New(Config{Title: "t", Endpoint: "/query", Path: "/ide/"})
	if !bytes.Contains(h.page, []byte(`src="/ide/?asset=start.js&amp;v=`)) {
		t.Fatalf("page does not load start.js from /ide/:\n%s", h.page)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/ide/?asset=start.js&v="+h.assets["start.js"].version, nil))
	if rec.Code != 200 || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/javascript") ||
		!strings.Contains(rec.Header().Get("Cache-Control"), "immutable") {
		t.Errorf("start.js: %d %v", rec.Code, rec.Header())
	}
}
