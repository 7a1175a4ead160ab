package main

import (
	"fmt"
	"io"
	"net"

	"github.com/feedd/feedd/demo"
)

// printBanner says where to point a browser and, with the demo, whom to be.
func printBanner(w io.Writer, addr net.Addr, store *storeFlags, devAuth bool, r *demo.Report) {
	base := "http://" + browsable(addr)
	where := "Redis at " + store.redisURL
	if store.embedded() {
		where = "the embedded store (in memory, gone at exit)"
	}
	fmt.Fprintf(w, "\nfeedd is serving %s\n", where)
	fmt.Fprintf(w, "  GraphiQL  %s/\n  GraphQL   %s/query\n  health    %s/healthz\n", base, base, base)
	if r == nil {
		fmt.Fprintln(w)
		return
	}
	fmt.Fprintf(w, "\nDemo data: %d users, %d follows, %d posts over the last 7 days (%d of them replies), %d reposts, %d active readers, %d favorites.\n",
		r.Users, r.Follows, r.Posts, r.Replies, r.Reposts, r.ActiveReaders, r.Favorites)
	fmt.Fprintf(w, "Big-V threshold %d followers: %d big-V authors", r.Threshold, len(r.BigV))
	for i, b := range r.BigV {
		sep := ", "
		if i == 0 {
			sep = " ("
		}
		fmt.Fprintf(w, "%s@%s %s", sep, b.Handle, b.Description)
	}
	if len(r.BigV) > 0 {
		fmt.Fprint(w, ")")
	}
	fmt.Fprintln(w, ".")
	if !devAuth {
		fmt.Fprintln(w, "Dev auth is off: mint a token with `feedd token --user ID --jwt-secret ...` to act as these users.")
	}
	fmt.Fprintf(w, "Try these viewers (header X-Viewer-Id; GraphiQL starts as the first):\n")
	for _, v := range r.Viewers {
		fmt.Fprintf(w, "  %-6d @%-14s %s\n", v.ID, v.Handle, v.Description)
	}
	if devAuth && len(r.Viewers) > 0 {
		fmt.Fprintf(w, "\n  curl -s %s/query -H 'X-Viewer-Id: %d' -H 'Content-Type: application/json' \\\n"+
			"    -d '{\"query\":\"{ followingFeed(first: 3) { edges { node { text author { handle } } } } }\"}'\n",
			base, r.Viewers[0].ID)
	}
	fmt.Fprintln(w)
}

// browsable turns a listen address into one a local browser can open:
// ":8080", "[::]:8080" and "127.0.0.1:8080" (dev auth's default) become
// "localhost:8080", a name --allowed-hosts allows by default.
func browsable(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return addr.String()
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && (ip.IsUnspecified() || ip.Equal(net.IPv4(127, 0, 0, 1))) {
		host = "localhost"
	}
	return net.JoinHostPort(host, port)
}
