package main

import (
	"bytes"
	"compress/gzip"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// TestServeOpsListener: with --ops-addr, serve answers /healthz, /readyz,
// /metrics and Go's profiles on a listener of its own, whose /metrics is
// the registry the public listener's requests are counted in; the public
// listener has no /debug/pprof/. Without the flag there is no such
// listener.
func TestServeOpsListener(t *testing.T) {
	// --ready-max-backlog is deprecated and ignored: even 0 is accepted
	// (TestReadyMaxBacklogDeprecated).
	ls := startServeListeners(t, "--dev-auth", "--ops-addr", "127.0.0.1:0", "--ready-max-backlog", "0")
	if ls[listenerOps] == "" || ls[listenerOps] == ls[listenerPublic] {
		t.Fatalf("listeners %v: want an ops listener of its own", ls)
	}
	public, ops := "http://"+ls[listenerPublic], "http://"+ls[listenerOps]
	if code, b := get(t, public+"/query?query=%7B__typename%7D"); code != http.StatusOK {
		t.Fatalf("public /query: %d %s", code, b)
	}
	for _, path := range []string{"/healthz", "/readyz"} {
		if code, b := get(t, ops+path); code != http.StatusOK {
			t.Errorf("ops %s: %d %s", path, code, b)
		}
	}
	mfs := scrape(t, ops)
	if h := mfs["feedd_graphql_request_duration_seconds"].GetMetric(); len(h) != 1 || h[0].GetHistogram().GetSampleCount() != 1 {
		t.Errorf("ops /metrics: feedd_graphql_request_duration_seconds = %v, want the one public request", h)
	}
	checkPprof(t, ops)
	code, prof := get(t, ops+"/debug/pprof/profile?seconds=1")
	if code != http.StatusOK {
		t.Fatalf("ops /debug/pprof/profile: %d %s", code, prof)
	}
	checkCPUProfile(t, prof)
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/profile?seconds=1", "/debug/pprof/heap"} {
		if code, _ := get(t, public+path); code != http.StatusNotFound {
			t.Errorf("public %s: %d, want 404", path, code)
		}
	}

	if ls := startServeListeners(t, "--dev-auth"); len(ls) != 1 {
		t.Errorf("without --ops-addr, listeners %v", ls)
	}
}

// get fetches url and returns the status and body.
func get(t *testing.T, url string) (int, []byte) {
	t.Helper()
	res, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	return res.StatusCode, b
}

// scrape reads base's /metrics as Prometheus would.
func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	code, b := get(t, base+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics: %d %s", code, b)
	}
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("/metrics: %v\n%s", err, b)
	}
	return mfs
}

// checkPprof: base serves Go's profile index and this process's command
// line.
func checkPprof(t *testing.T, base string) {
	t.Helper()
	if code, b := get(t, base+"/debug/pprof/"); code != http.StatusOK || !bytes.Contains(b, []byte("goroutine")) {
		t.Errorf("/debug/pprof/: %d %.300s", code, b)
	}
	if code, b := get(t, base+"/debug/pprof/cmdline"); code != http.StatusOK || string(b) != strings.Join(os.Args, "\x00") {
		t.Errorf("/debug/pprof/cmdline: %d %q, want %q", code, b, os.Args)
	}
}

// checkCPUProfile: b is a gzipped profile.proto whose sample types are a
// CPU profile's, samples/count and cpu/nanoseconds (their names are in the
// profile's string table).
func checkCPUProfile(t *testing.T, b []byte) {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("profile is not gzipped: %v (%d bytes)", err, len(b))
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("profile: %v", err)
	}
	for _, s := range []string{"samples", "count", "cpu", "nanoseconds"} {
		if !bytes.Contains(raw, []byte(s)) {
			t.Errorf("profile (%d bytes) names no %q: not a CPU profile", len(raw), s)
		}
	}
}

// TestReadyMaxBacklogDeprecated: --ready-max-backlog (or
// FEED_READY_MAX_BACKLOG) is still accepted, any value, and does nothing
// but warn once; without it there is no warning.
func TestReadyMaxBacklogDeprecated(t *testing.T) {
	for _, c := range []struct {
		name string
		env  string
		args []string
		warn bool
	}{
		{"absent", "", nil, false},
		{"flag", "", []string{"--ready-max-backlog", "0"}, true},
		{"environment", "1", nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.env != "" {
				t.Setenv("FEED_READY_MAX_BACKLOG", c.env)
			}
			fs := flag.NewFlagSet("t", flag.ContinueOnError)
			o := addOpsFlags(fs)
			if _, err := parse(fs, c.args); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			o.warnDeprecated(slog.New(slog.NewTextHandler(&logs, nil)))
			warnings := strings.Count(logs.String(), "--ready-max-backlog is deprecated and ignored")
			if want := map[bool]int{false: 0, true: 1}[c.warn]; warnings != want ||
				(c.warn && !strings.Contains(logs.String(), "feedd_fanout_backlog")) {
				t.Errorf("%d warnings, want %d: %q", warnings, want, logs.String())
			}
		})
	}
}
