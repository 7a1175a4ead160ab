package server

import (
	"context"
	"net/http"
	"net/netip"
	"strings"
)

type clientAddrKey struct{}

// ClientAddr is the address of the client that sent the request ctx
// belongs to, as withClientAddr found it: an IPv4 address, or the /64
// network of an IPv6 one (one subscriber usually holds a whole /64). Empty
// outside a request.
func ClientAddr(ctx context.Context) string {
	a, _ := ctx.Value(clientAddrKey{}).(string)
	return a
}

// withClientAddr notes each request's client address for the limits that
// apply per address. It is the TCP peer's, unless the peer is one of
// trusted (a reverse proxy or load balancer in front of feedd) and header
// is set (X-Forwarded-For, or any header of comma-separated addresses that
// proxies append to): then it is the right-most address in that header
// that is not itself a trusted proxy, so a client cannot choose its
// address by sending the header itself.
func withClientAddr(header string, trusted []netip.Prefix, next http.Handler) http.Handler {
	isTrusted := func(a netip.Addr) bool {
		for _, p := range trusted {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
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
		ctx := context.WithValue(r.Context(), clientAddrKey{}, addrKey(addr))
		next.ServeHTTP(w, r.WithContext(ctx))
	})
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
