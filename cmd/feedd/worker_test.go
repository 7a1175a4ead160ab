package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/feedd/feedd/redisstore/storetest"
)

// TestWorkerOpsAndShutdown runs `feedd worker --ops-addr` against the real
// Redis, reads its operations endpoints, and checks it returns when its
// context ends (SIGTERM).
func TestWorkerOpsAndShutdown(t *testing.T) {
	storetest.RequireReal(t)
	// The binary runs under the test's own key prefix; the store's cleanup
	// deletes those keys and no others.
	st := storetest.New(t)
	redisURL := os.Getenv(storetest.Env)
	addrs := make(chan net.Addr, 1)
	o := cmdOptions{stdout: io.Discard, listening: func(_ string, a net.Addr) { addrs <- a }}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	returned := make(chan error, 1)
	go func() {
		returned <- runWorker(ctx, []string{"--redis", redisURL, "--key-prefix", st.Prefix, "--ops-addr", "127.0.0.1:0",
			"--ready-max-backlog", "1000000000", "--log-level", "warn"}, o)
	}()
	var base string
	select {
	case a := <-addrs:
		base = "http://" + a.String()
	case err := <-returned:
		t.Fatalf("worker returned: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("worker did not start")
	}
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		res, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Errorf("%s: %d %s", path, res.StatusCode, b)
		}
		if path == "/metrics" {
			p := expfmt.NewTextParser(model.LegacyValidation)
			mfs, err := p.TextToMetricFamilies(strings.NewReader(string(b)))
			if err != nil {
				t.Fatalf("/metrics: %v\n%s", err, b)
			}
			if up := mfs["feedd_redis_up"].GetMetric(); len(up) != 1 || up[0].GetGauge().GetValue() != 1 {
				t.Errorf("feedd_redis_up = %v", up)
			}
			// The same registry as serve's: fan-out counters, the Go
			// runtime and process collectors.
			for _, name := range []string{"feedd_fanout_processed_total", "feedd_fanout_backlog", "go_goroutines", "process_resident_memory_bytes"} {
				if len(mfs[name].GetMetric()) == 0 {
					t.Errorf("/metrics has no %s", name)
				}
			}
		}
	}
	checkPprof(t, base)
	// The worker wrote its keys (the cursor key, the fan-out streams' groups)
	// under the prefix: none escapes the cleanup.
	if keys, err := storetest.Keys(ctx, st.Client, st.Prefix); err != nil || len(keys) == 0 {
		t.Errorf("keys under --key-prefix %q: %v (err %v)", st.Prefix, keys, err)
	}
	cancel()
	select {
	case err := <-returned:
		if err != nil {
			t.Fatalf("worker: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("worker did not return after its context ended")
	}
}
