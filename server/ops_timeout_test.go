package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// gateProxy forwards TCP connections to a target while open; paused, it
// keeps every connection (old and new) silent: bytes are read and held.
type gateProxy struct {
	ln     net.Listener
	target string
	done   chan struct{}

	mu    sync.Mutex
	gate  chan struct{} // closed while forwarding
	conns []net.Conn
}

func newGateProxy(t *testing.T, target string) *gateProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &gateProxy{ln: ln, target: target, done: make(chan struct{}), gate: make(chan struct{})}
	close(p.gate)
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *gateProxy) addr() string { return p.ln.Addr().String() }

func (p *gateProxy) pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gate = make(chan struct{})
}

func (p *gateProxy) resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.gate:
	default:
		close(p.gate)
	}
}

func (p *gateProxy) close() {
	close(p.done)
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *gateProxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go p.pipe(c, up)
		go p.pipe(up, c)
	}
}

// pipe copies src to dst, holding each chunk while the gate is shut.
func (p *gateProxy) pipe(src, dst net.Conn) {
	defer src.Close()
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			gate := p.gate
			p.mu.Unlock()
			select {
			case <-gate:
			case <-p.done:
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestSilentRedisTimesOut puts a proxy between the server and each Redis
// node, makes them hold every byte, and checks a request fails UNAVAILABLE
// within the request timeout (plus slack) instead of hanging, then that the
// server recovers by itself once the proxies forward again.
func TestSilentRedisTimesOut(t *testing.T) {
	st := storetest.New(t)
	redisURL := os.Getenv(storetest.Env)
	var targets []string
	switch {
	case st.Embedded != nil:
		redisURL = "redis://" + st.Embedded.Addr()
		targets = []string{st.Embedded.Addr()}
	case st.Cluster():
		// Every node the client may dial: those the cluster advertises
		// and those the URL names.
		for addr := range st.Client.Nodes() {
			targets = append(targets, addr)
		}
		fallthrough
	default:
		opt, err := rueidis.ParseURL(redisURL)
		if err != nil {
			t.Fatal(err)
		}
		targets = append(targets, opt.InitAddress...)
	}
	proxies := map[string]*gateProxy{}
	for _, addr := range targets {
		if proxies[addr] == nil {
			proxies[addr] = newGateProxy(t, addr)
		}
	}
	dial := func(ctx context.Context, addr string, d *net.Dialer) (net.Conn, error) {
		p := proxies[addr]
		if p == nil {
			return nil, fmt.Errorf("no proxy in front of %s", addr)
		}
		return d.DialContext(ctx, "tcp", p.addr())
	}
	ctx := context.Background()
	const storeTimeout = time.Second
	// SingleNode on one server: a miniredis answers CLUSTER SLOTS.
	viaProxy, err := redisstore.Open(ctx, redisstore.Options{URL: redisURL, Timeout: storeTimeout, Dial: dial,
		DisableCache: st.Embedded != nil, SingleNode: !st.Cluster(), ClientName: "feedd-test-proxied"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(viaProxy.Close)
	svc, err := feedcore.New(ctx, viaProxy.Client, feedcore.Options{Prefix: st.Prefix})
	if err != nil {
		t.Fatal(err)
	}
	const requestTimeout = 500 * time.Millisecond
	srv := httptest.NewServer(New(Config{Service: svc, DevAuth: true, RequestTimeout: requestTimeout,
		Metrics: NewMetrics(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}))
	t.Cleanup(srv.Close)
	client := &http.Client{Timeout: 20 * time.Second}

	n := 0
	query := func() (code string, err error) {
		// A handle never asked before: never in the client-side cache, so
		// the request must reach Redis.
		n++
		body, _ := json.Marshal(map[string]any{"query": fmt.Sprintf(`{ user(handle: "nobody%d") { id } }`, n)})
		res, err := client.Post(srv.URL+"/query", "application/json", bytes.NewReader(body))
		if err != nil {
			return "", err
		}
		defer res.Body.Close()
		var r gqlResponse
		if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
			return "", err
		}
		if len(r.Errors) > 0 && r.code() == "" {
			return "", errors.New("error without a code")
		}
		return r.code(), nil
	}
	if code, err := query(); err != nil || code != "" {
		t.Fatalf("before the outage: code %q, err %v", code, err)
	}

	for _, p := range proxies {
		p.pause()
	}
	for i := range 2 { // the first request after the outage and a later one
		start := time.Now()
		code, err := query()
		took := time.Since(start)
		if err != nil || code != "UNAVAILABLE" {
			t.Fatalf("silent Redis, request %d: code %q, err %v", i, code, err)
		}
		if slack := time.Second; took > requestTimeout+slack {
			t.Errorf("silent Redis, request %d: answered after %v, want within %v", i, took, requestTimeout+slack)
		}
	}
	if status, _ := getStatus(t, client, srv.URL+"/readyz"); status != http.StatusServiceUnavailable {
		t.Errorf("readyz with a silent Redis: %d", status)
	}

	for _, p := range proxies {
		p.resume()
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, err := query()
		if err == nil && code == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after Redis came back: code %q, err %v", code, err)
		}
		time.Sleep(20 * time.Millisecond) // polling, under a deadline
	}
	if status, body := getStatus(t, client, srv.URL+"/readyz"); status != http.StatusOK {
		t.Errorf("readyz after recovery: %d %s", status, body)
	}
}

func getStatus(t *testing.T, c *http.Client, url string) (int, string) {
	t.Helper()
	res, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
