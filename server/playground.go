package server

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/server/graphiql"
)

// exampleQuery is what GraphiQL opens with: the feed, a page at a time,
// with the fields of the README's Feed (why a post is there: a repost or
// a reply; media, counters).
const exampleQuery = `# feedd: the Following tab's feeds over GraphQL.
# Page on with after: "<pageInfo.endCursor>"; pull-to-refresh with
# last: 20, before: "<first edge's cursor>".
query Feed {
  viewer { handle displayName followingCount followerCount }
  followingFeed(first: 10) {
    edges {
      cursor
      repostedBy { handle }
      repostedAt
      node {
        id
        text
        createdAt
        author { handle displayName }
        contentWarning
        media { kind url width height altText thumbnailUrl durationMs sensitive }
        counts { likes comments reposts }
        viewerHasReposted
        replyTo { id text author { handle } }
      }
    }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}
`

// playgroundHandler serves GraphiQL, and its assets, from files embedded in
// the binary (package graphiql): nothing is loaded from a CDN, so it works
// offline. The assets live under the page's own path (/?asset=NAME&v=HASH).
// The first visit is redirected to a URL carrying the example query (and,
// with dev auth, an X-Viewer-Id header), because GraphiQL takes initial
// state from its URL; after that GraphiQL keeps the user's own edits in the
// URL.
func playgroundHandler(cfg Config) http.Handler {
	page := graphiql.New(graphiql.Config{Title: "feedd · GraphiQL", Endpoint: "/query", StoragePrefix: "feedd", Path: "/"})
	start := url.Values{"query": {exampleQuery}}
	if cfg.DevAuth && cfg.PlaygroundViewer != 0 {
		h, _ := json.MarshalIndent(map[string]string{auth.DevHeader: feedcore.FormatID(cfg.PlaygroundViewer)}, "", "  ")
		start.Set("headers", string(h))
	}
	first := "/?" + start.Encode()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.RawQuery == "" {
			http.Redirect(w, r, first, http.StatusFound)
			return
		}
		page.ServeHTTP(w, r)
	})
}
