package server

import (
	"encoding/json"
	"net/http"
	"net/url"

	"github.com/99designs/gqlgen/graphql/playground"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
)

// exampleQuery is what GraphiQL opens with: the feed, a page at a time.
const exampleQuery = `# feedd: the Following tab's feeds over GraphQL.
# Page on with after: "<pageInfo.endCursor>"; pull-to-refresh with
# last: 20, before: "<first edge's cursor>".
query Feed {
  viewer { handle displayName followingCount followerCount }
  followingFeed(first: 10) {
    edges {
      cursor
      node {
        id
        text
        createdAt
        author { handle displayName }
      }
    }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
  }
}
`

// playgroundHandler serves GraphiQL. The first visit is redirected to a URL
// carrying the example query (and, with dev auth, an X-Viewer-Id header),
// because GraphiQL takes initial state from its URL; after that GraphiQL
// keeps the user's own edits in the URL.
func playgroundHandler(cfg Config) http.Handler {
	page := playground.Handler("feedd", "/query", playground.WithGraphiqlPersistStateInURL(true),
		playground.WithStoragePrefix("feedd"))
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
