package server

import (
	"bytes"
	"net/http"
	"net/url"
	"testing"

	"github.com/feedd/feedd/auth"
)

// TestQueryAnswersAreNotCached: every /query answer, GET or POST, success
// or error, says no shared cache and no store may keep it.
func TestQueryAnswersAreNotCached(t *testing.T) {
	e := newEnv(t)
	get, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/query?query="+url.QueryEscape("{ viewer { handle } }"), nil)
	post, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/query", bytes.NewReader([]byte(`{"query":"{ viewer { handle } }"}`)))
	post.Header.Set("Content-Type", "application/json")
	bad, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/query", bytes.NewReader([]byte(`{"query":"{"}`)))
	bad.Header.Set("Content-Type", "application/json")
	for name, req := range map[string]*http.Request{"GET": get, "POST": post, "bad POST": bad} {
		req.Header.Set(auth.DevHeader, "1")
		res, err := e.srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got := res.Header.Get("Cache-Control"); got != "private, no-store" {
			t.Errorf("%s: Cache-Control %q, want private, no-store", name, got)
		}
	}
}
