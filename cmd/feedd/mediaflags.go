package main

import (
	"net"
	"strings"

	"github.com/feedd/feedd/server"
)

// mediaHostList reads --media-hosts: comma-separated host names, each
// exact or "*.example.com" for its subdomains. bad is the first entry
// that is neither (a URL, a host with a port or a path, a bare "*").
func mediaHostList(s string) (hosts []string, bad string) {
	for _, h := range strings.Split(s, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		name := strings.TrimPrefix(h, "*.")
		if !hostName(name) {
			return nil, h
		}
		hosts = append(hosts, h)
	}
	return hosts, ""
}

// hostName reports whether s is a DNS name: dot-separated labels of
// letters, digits, hyphens and underscores.
func hostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(s, "."), ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// demoMediaBase is where the demo's media are served on the listener at
// addr, as a browser on this machine reaches it: a wildcard address
// (":8080") is reached at 127.0.0.1.
func demoMediaBase(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String() + server.DemoMediaPath
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + server.DemoMediaPath
}
