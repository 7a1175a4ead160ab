package server

import (
	"net/http"
	"net/netip"
	"strings"
)

// clientAddr returns how to find each request's client address, for the
// limits that apply per address (reqinfo.Facts.ClientAddr). It is the TCP
// peer's, unless the peer is one of trusted (a reverse proxy or load
// balancer in front of feedd) and header is set (X-Forwarded-For, or any
// header of comma-separated addresses that proxies append to): then it is
// the right-most address in that header that is not itself a trusted
// proxy, so a client cannot choose its address by sending the header
// itself.
func clientAddr(header string, trusted []netip.Prefix) func(*http.Request) string {
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return func(r *http.Request) string {
		addr := peerAddr(r.RemoteAddr)
		if header != "" && addr.IsValid() && isTrusted(addr) {
			hops := strings.Split(strings.Join(r.Header.Values(header), ","), ",")
			for i := len(hops) - 1; i >= 0; i-- {
				a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
				if err != nil {
					break // garbage: keep the last trusted hop
				}
				addr = a.Unmap()
				if !isTrusted(addr) {
					break
				}
			}
		}
		return addrKey(addr)
	}
}

func peerAddr(remote string) netip.Addr {
	if ap, err := netip.ParseAddrPort(remote); err == nil {
		return ap.Addr().Unmap()
	}
	a, _ := netip.ParseAddr(remote)
	return a.Unmap()
}

// addrKey names an address's allowance: IPv4 as is, IPv6 by its /64.
func addrKey(a netip.Addr) string {
	switch {
	case !a.IsValid():
		return "unknown"
	case a.Is4():
		return a.String()
	}
	p, _ := a.Prefix(64)
	return p.String()
}
