package main

import (
	"context"
	"io"
	"net"
	"reflect"
	"strings"
	"testing"
)

func TestMediaHostList(t *testing.T) {
	hosts, bad := mediaHostList(" cdn.example.com, *.img.example.net ,,media-1.example.org,10.0.0.5")
	if want := []string{"cdn.example.com", "*.img.example.net", "media-1.example.org", "10.0.0.5"}; bad != "" || !reflect.DeepEqual(hosts, want) {
		t.Errorf("mediaHostList = %q, %q; want %q", hosts, bad, want)
	}
	if hosts, bad := mediaHostList(""); hosts != nil || bad != "" {
		t.Errorf("empty: %q, %q", hosts, bad)
	}
	for _, b := range []string{"https://cdn.example.com", "cdn.example.com:443", "cdn.example.com/x", "*", "*.", "a..b", "*.*.example.com", "cdn example.com", "user@cdn.example.com"} {
		if _, bad := mediaHostList("ok.example.com," + b); bad != b {
			t.Errorf("%q: bad = %q", b, bad)
		}
	}
	// serve refuses to start, naming the flag.
	err := runServe(context.Background(), []string{"--demo=false", "--media-hosts", "https://cdn.example.com"}, cmdOptions{stdout: io.Discard})
	if err == nil || !strings.Contains(err.Error(), "--media-hosts") {
		t.Errorf("serve with a URL in --media-hosts: %v", err)
	}
}

func TestDemoMediaBase(t *testing.T) {
	for addr, want := range map[string]string{
		"127.0.0.1:8080": "http://127.0.0.1:8080/demo/media/",
		"0.0.0.0:9000":   "http://127.0.0.1:9000/demo/media/",
		"[::]:8080":      "http://127.0.0.1:8080/demo/media/",
		"[::1]:8080":     "http://[::1]:8080/demo/media/",
		"10.1.2.3:80":    "http://10.1.2.3:80/demo/media/",
	} {
		a, err := net.ResolveTCPAddr("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := demoMediaBase(a); got != want {
			t.Errorf("demoMediaBase(%s) = %s, want %s", addr, got, want)
		}
	}
}
