package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/feedd/feedd/metrics/promparse"
	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestWorkerOpsAndShutdown runs `feedd worker --ops-addr` against the real
// Redis, reads its operations endpoints, and checks it returns when its
// context ends (SIGTERM).
func TestWorkerOpsAndShutdown(t *testing.T) {
	storetest.RequireReal(t)
	// The binary has no key prefix, so the test owns a database of its own
	// and empties it afterwards.
	u, err := url.Parse(os.Getenv(storetest.Env))
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/14"
	redisURL := u.String()
	t.Cleanup(func() {
		st, err := redisstore.Open(context.Background(), redisstore.Options{URL: redisURL})
		if err != nil {
			t.Error(err)
			return
		}
		defer st.Close()
		st.Client.Do(context.Background(), st.Client.B().Flushdb().Build())
	})
	addrs := make(chan net.Addr, 1)
	workerOpsListening = func(a net.Addr) { addrs <- a }
	t.Cleanup(func() { workerOpsListening = nil })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	returned := make(chan error, 1)
	go func() {
		returned <- runWorker(ctx, []string{"--redis", redisURL, "--ops-addr", "127.0.0.1:0",
			"--ready-max-backlog", "1000000000", "--log-level", "warn"}, io.Discard)
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
			s, err := promparse.Parse(string(b))
			if err != nil {
				t.Fatalf("/metrics: %v", err)
			}
			if up, _ := promparse.Find(s, "feedd_redis_up"); up != 1 {
				t.Errorf("feedd_redis_up = %v", up)
			}
		}
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
