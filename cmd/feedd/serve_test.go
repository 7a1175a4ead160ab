package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/feedd/feedd/auth"
)

// TestServeDrainsOnShutdown runs serve in-process on a random port with
// the embedded store, starts a request that is still sending its body,
// cancels serve's context (what SIGTERM does) and checks that the listener
// closes, the in-flight request still completes, and serve returns.
func TestServeDrainsOnShutdown(t *testing.T) {
	addrs := make(chan net.Addr, 1)
	o := cmdOptions{stdout: io.Discard, listening: func(_ string, a net.Addr) { addrs <- a }}
	t.Setenv("FEED_REDIS_URL", "") // the embedded store, whatever the environment says

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	returned := make(chan error, 1)
	go func() {
		returned <- runServe(ctx, []string{"--addr", "127.0.0.1:0", "--demo=false", "--dev-auth",
			"--shutdown-timeout", "20s", "--log-level", "warn"}, o)
	}()
	var addr string
	select {
	case a := <-addrs:
		addr = a.String()
	case err := <-returned:
		t.Fatalf("serve returned before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start listening")
	}

	// A slow client: headers now, body later. Expect: 100-continue makes
	// the server say when the handler starts reading the body, so the
	// request is known to be in flight before the shutdown starts.
	body := `{"query":"{ viewer { id } }"}`
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	fmt.Fprintf(conn, "POST /query HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"+
		"%s: 1\r\nExpect: 100-continue\r\nContent-Length: %d\r\n\r\n", auth.DevHeader, len(body))
	br := bufio.NewReader(conn)
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, "100 Continue") {
		t.Fatalf("want 100 Continue, got %q, %v", line, err)
	}
	if _, err := br.ReadString('\n'); err != nil { // the blank line ending the interim response
		t.Fatal(err)
	}

	cancel() // SIGTERM
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			break // the listener is closed: the shutdown has begun
		}
		c.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections after the context ended")
		}
		time.Sleep(5 * time.Millisecond) // polling, under a deadline
	}
	select {
	case err := <-returned:
		t.Fatalf("serve returned with a request in flight: %v", err)
	default:
	}

	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("in-flight request: %v", err)
	}
	defer res.Body.Close()
	var out struct {
		Data struct {
			Viewer *struct{ ID string } `json:"viewer"`
		} `json:"data"`
		Errors []struct {
			Extensions struct{ Code string } `json:"extensions"`
		} `json:"errors"`
	}
	if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	// The store is empty: user 1 does not exist, but the request ran to
	// its answer, which is what matters here.
	if res.StatusCode != http.StatusOK || (len(out.Errors) > 0 && out.Errors[0].Extensions.Code == "UNAVAILABLE") {
		t.Fatalf("in-flight request: status %d, %+v", res.StatusCode, out)
	}

	select {
	case err := <-returned:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return after draining")
	}
}

// TestServeClosesWebsocketsOnShutdown: on SIGTERM serve closes every
// WebSocket with 1001 "going away" (http.Server.Shutdown leaves hijacked
// connections alone), so that clients reconnect to another replica.
func TestServeClosesWebsocketsOnShutdown(t *testing.T) {
	addrs := make(chan net.Addr, 1)
	o := cmdOptions{stdout: io.Discard, listening: func(_ string, a net.Addr) { addrs <- a }}
	t.Setenv("FEED_REDIS_URL", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	returned := make(chan error, 1)
	go func() {
		returned <- runServe(ctx, []string{"--addr", "127.0.0.1:0", "--demo=false", "--dev-auth", "--log-level", "warn"}, o)
	}()
	var addr string
	select {
	case a := <-addrs:
		addr = a.String()
	case err := <-returned:
		t.Fatalf("serve returned before listening: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start listening")
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	c, _, err := websocket.Dial(wctx, "ws://"+addr+"/query", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(wctx, websocket.MessageText, []byte(`{"type":"connection_init","payload":{"X-Viewer-Id":"1"}}`)); err != nil {
		t.Fatal(err)
	}
	if _, m, err := c.Read(wctx); err != nil || !strings.Contains(string(m), "connection_ack") {
		t.Fatalf("after connection_init: %s, %v", m, err)
	}
	cancel() // SIGTERM
	for {
		_, m, err := c.Read(wctx)
		if err == nil {
			continue // a keep-alive
		}
		if code := websocket.CloseStatus(err); code != websocket.StatusGoingAway {
			t.Fatalf("closed with %d (%v, last %s), want 1001", code, err, m)
		}
		break
	}
	select {
	case err := <-returned:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not return")
	}
}

func TestServeFlagsValidate(t *testing.T) {
	for _, args := range [][]string{
		{"--request-timeout", "0s"},
		{"--write-timeout", "0s"},
		{"--shutdown-timeout", "-1s"},
		{"--shutdown-delay", "-1s"},
		{"--log-format", "xml"},
		{"--log-level", "loud"},
		{"--max-connections", "0"},
	} {
		if err := runServe(context.Background(), append(args, "--demo=false"), cmdOptions{stdout: io.Discard}); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// TestServeShutdownDelay: on SIGTERM (its context ending) serve answers
// /readyz with 503 "shutting down" on both listeners for --shutdown-delay
// while it still serves queries, each answered with Connection: close;
// only after the delay does it stop and return.
func TestServeShutdownDelay(t *testing.T) {
	const delay = 5 * time.Second // ample for a few requests under -race
	type listened struct{ name, addr string }
	addrs := make(chan listened, 2)
	o := cmdOptions{stdout: io.Discard, listening: func(name string, a net.Addr) { addrs <- listened{name, a.String()} }}
	t.Setenv("FEED_REDIS_URL", "")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	returned := make(chan error, 1)
	go func() {
		returned <- runServe(ctx, []string{"--addr", "127.0.0.1:0", "--ops-addr", "127.0.0.1:0", "--demo=false", "--dev-auth",
			"--shutdown-delay", delay.String(), "--log-level", "warn"}, o)
	}()
	ls := map[string]string{}
	for ls[listenerPublic] == "" {
		select {
		case l := <-addrs:
			ls[l.name] = "http://" + l.addr
		case err := <-returned:
			t.Fatalf("serve returned before listening: %v", err)
		case <-time.After(30 * time.Second):
			t.Fatal("serve did not start listening")
		}
	}
	public, ops := ls[listenerPublic], ls[listenerOps]
	// Ready once realtime has started (it asks the store for sharded
	// pub/sub first: /readyz says "starting" meanwhile).
	for deadline := time.Now().Add(30 * time.Second); ; {
		code, b := get(t, ops+"/readyz")
		if code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz before the signal: %d %s", code, b)
		}
		time.Sleep(10 * time.Millisecond) // polling a condition, with a deadline
	}

	cancel() // SIGTERM
	signalled := time.Now()
	for _, base := range []string{ops, public} {
		for {
			code, b := get(t, base+"/readyz")
			if code == http.StatusServiceUnavailable {
				if !strings.Contains(string(b), `"reason":"shutting down"`) {
					t.Errorf("%s/readyz: 503 %s, want the reason \"shutting down\"", base, b)
				}
				break
			}
			if time.Since(signalled) > delay/2 {
				t.Fatalf("%s/readyz still %d %s after %v", base, code, b, time.Since(signalled))
			}
			time.Sleep(10 * time.Millisecond) // polling, under a deadline
		}
	}
	res, err := http.Get(public + "/query?query=%7B__typename%7D")
	if err != nil {
		t.Fatalf("a query during the delay: %v", err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(string(b), "Query") {
		t.Errorf("a query during the delay: %d %s", res.StatusCode, b)
	}
	if !res.Close {
		t.Error("a query during the delay was answered without Connection: close")
	}
	select {
	case err := <-returned:
		t.Fatalf("serve returned %v after the signal, before --shutdown-delay %v: %v", time.Since(signalled), delay, err)
	default:
	}
	select {
	case err := <-returned:
		if err != nil {
			t.Fatalf("serve: %v", err)
		}
		if d := time.Since(signalled); d < delay {
			t.Errorf("serve returned %v after the signal, before --shutdown-delay %v", d, delay)
		}
	case <-time.After(delay + 30*time.Second):
		t.Fatal("serve did not return after the delay")
	}
}
