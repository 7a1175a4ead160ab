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

func TestServeFlagsValidate(t *testing.T) {
	for _, args := range [][]string{
		{"--request-timeout", "0s"},
		{"--write-timeout", "0s"},
		{"--shutdown-timeout", "-1s"},
		{"--log-format", "xml"},
		{"--log-level", "loud"},
	} {
		if err := runServe(context.Background(), append(args, "--demo=false"), cmdOptions{stdout: io.Discard}); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}
