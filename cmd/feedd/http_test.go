package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
)

// startServe runs serve with args on a random loopback port and returns
// its address; serve stops at the end of the test.
func startServe(t *testing.T, args ...string) string {
	t.Helper()
	return startServeListeners(t, args...)[listenerPublic]
}

// startServeListeners is startServe returning the address of every
// listener serve opened, by name (listenerPublic, listenerOps).
func startServeListeners(t *testing.T, args ...string) map[string]string {
	t.Helper()
	type listened struct{ name, addr string }
	// Serve opens at most two listeners, the public one last.
	addrs := make(chan listened, 2)
	o := cmdOptions{stdout: io.Discard, listening: func(name string, a net.Addr) { addrs <- listened{name, a.String()} }}
	t.Setenv("FEED_REDIS_URL", "")
	ctx, cancel := context.WithCancel(context.Background())
	returned := make(chan error, 1)
	go func() {
		returned <- runServe(ctx, append([]string{"--addr", "127.0.0.1:0", "--demo=false", "--log-level", "error"}, args...), o)
	}()
	t.Cleanup(func() { cancel(); <-returned })
	got := map[string]string{}
	for got[listenerPublic] == "" {
		select {
		case l := <-addrs:
			got[l.name] = l.addr
		case err := <-returned:
			t.Fatalf("serve returned before listening: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not start listening")
		}
	}
	return got
}

// rawRequest writes req on a fresh connection and returns the status line
// of the answer, or "" when the server closed the connection without one.
// The deadline only stops a broken server from hanging the test.
func rawRequest(t *testing.T, addr, req string, more func(net.Conn)) string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	if more != nil {
		more(conn)
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the server kept the connection open past every limit")
	}
	return strings.TrimSpace(line)
}

// TestServeHTTPLimits: the server's read timeout ends a trickled body, its
// header limit refuses huge headers, and with dev auth only loopback host
// names are answered (DNS rebinding).
func TestServeHTTPLimits(t *testing.T) {
	addr := startServe(t, "--dev-auth", "--http-read-timeout", "300ms", "--max-header-bytes", "4096")
	body := `{"query":"{ viewer { id } }"}`
	post := func(host, extra string, n int) string {
		return fmt.Sprintf("POST /query HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n%s: 1\r\n%sContent-Length: %d\r\n\r\n", host, auth.DevHeader, extra, n)
	}

	// A body that never completes: 10 of 100 bytes, then nothing. The
	// answer (or the close) comes from the read timeout, not the client.
	start := time.Now()
	status := rawRequest(t, addr, post("localhost", "", 100)+body[:10], nil)
	if strings.Contains(status, " 200 ") {
		t.Fatalf("a trickled body was answered %q", status)
	}
	t.Logf("trickled body: %q", status)
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the read timeout of 300ms took %v", d)
	}

	if got := rawRequest(t, addr, post("localhost", "X-Big: "+strings.Repeat("a", 8192)+"\r\n", len(body))+body, nil); !strings.Contains(got, " 431 ") {
		t.Errorf("8 KB header with --max-header-bytes 4096: %q", got)
	}

	for host, want := range map[string]string{
		"localhost":                  " 200 ",
		"localhost:" + port(addr):    " 200 ",
		"127.0.0.1:" + port(addr):    " 200 ",
		"[::1]:" + port(addr):        " 200 ",
		"LOCALHOST.":                 " 200 ",
		"evil.example":               " 421 ",
		"evil.example:" + port(addr): " 421 ",
		"localhost.evil.example":     " 421 ",
	} {
		if got := rawRequest(t, addr, post(host, "", len(body))+body, nil); !strings.Contains(got, want) {
			t.Errorf("Host %s: %q, want %q", host, got, want)
		}
	}
	// Probes answer whatever the host: load balancers call them by IP.
	if got := rawRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: 10.1.2.3\r\n\r\n", nil); !strings.Contains(got, " 200 ") {
		t.Errorf("/healthz by IP: %q", got)
	}
}

// TestServeAllowedHostsFlag: --allowed-hosts replaces the default, and
// without dev auth any host is served unless it is set.
func TestServeAllowedHostsFlag(t *testing.T) {
	addr := startServe(t, "--dev-auth", "--allowed-hosts", "feed.example.com,*.feedd.test")
	req := func(host string) string {
		return rawRequest(t, addr, "GET /healthz HTTP/1.1\r\nHost: "+host+"\r\n\r\n", nil) + "|" +
			rawRequest(t, addr, "GET /query?query=%7B__typename%7D HTTP/1.1\r\nHost: "+host+"\r\n\r\n", nil)
	}
	for host, ok := range map[string]bool{"feed.example.com": true, "a.feedd.test": true, "feedd.test": false, "localhost": false} {
		got := req(host)
		if strings.Contains(got, "|HTTP/1.1 200 ") != ok {
			t.Errorf("Host %s: %q, want served = %v", host, got, ok)
		}
	}
	open := startServe(t, "--dev-auth=false", "--jwt-secret", testSecret)
	if got := rawRequest(t, open, "GET /query?query=%7B__typename%7D HTTP/1.1\r\nHost: api.example.com\r\n\r\n", nil); !strings.Contains(got, " 200 ") {
		t.Errorf("without dev auth, any host: %q", got)
	}
}

func port(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

func TestServeDefaults(t *testing.T) {
	if got := defaultAddr(true); got != "127.0.0.1:8080" {
		t.Errorf("dev auth: default --addr %q", got)
	}
	if got := defaultAddr(false); got != ":8080" {
		t.Errorf("no dev auth: default --addr %q", got)
	}
	for _, args := range [][]string{
		{"--http-write-timeout", "5s"},                           // not over --request-timeout 5s
		{"--http-write-timeout", "8s", "--write-timeout", "10s"}, // not over --write-timeout
		{"--http-read-timeout", "0s"},
		{"--max-header-bytes", "0"},
	} {
		if err := runServe(context.Background(), append(args, "--demo=false"), cmdOptions{stdout: io.Discard}); err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("%q: %v", args, err)
		}
	}
}
