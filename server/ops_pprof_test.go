package server

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestPprofOnlyOnOps: Go's profiles are served by OpsHandler and by no
// route of the public handler.
func TestPprofOnlyOnOps(t *testing.T) {
	st := storetest.New(t)
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{Prefix: st.Prefix, StreamShards: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Service: svc, Metrics: NewMetrics()}
	ops := httptest.NewServer(OpsHandler(cfg))
	t.Cleanup(ops.Close)
	public := httptest.NewServer(New(cfg))
	t.Cleanup(public.Close)
	get := func(url string) (int, string) { t.Helper(); return getStatus(t, http.DefaultClient, url) }
	if code, body := get(ops.URL + "/debug/pprof/cmdline"); code != http.StatusOK || body != strings.Join(os.Args, "\x00") {
		t.Errorf("ops /debug/pprof/cmdline: %d %q", code, body)
	}
	if code, body := get(ops.URL + "/debug/pprof/"); code != http.StatusOK || !strings.Contains(body, "goroutine") {
		t.Errorf("ops /debug/pprof/: %d %.200q", code, body)
	}
	if code, body := get(ops.URL + "/debug/pprof/goroutine?debug=1"); code != http.StatusOK || !strings.Contains(body, "TestPprofOnlyOnOps") {
		t.Errorf("ops /debug/pprof/goroutine: %d %.200q", code, body)
	}
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/profile?seconds=1", "/debug/pprof/goroutine"} {
		if code, _ := get(public.URL + path); code != http.StatusNotFound {
			t.Errorf("public %s: %d, want 404", path, code)
		}
	}
}
