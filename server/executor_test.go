package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype/view"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/resolvers"
)

// TestLeafErrorsKeepTheirPath: the executor marshals a view's leaves
// straight from their values (tools/gqlgen), and a leaf whose method
// fails goes through gqlgen's own resolution, so its error names its own
// path and nulls its parent as the schema says; the leaves that did not
// fail are written as ever.
func TestLeafErrorsKeepTheirPath(t *testing.T) {
	st := storetest.New(t)
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{Prefix: st.Prefix})
	if err != nil {
		t.Fatal(err)
	}
	ann := &feedcore.User{ID: 1, Handle: "ann", DisplayName: "Ann"}
	for _, tc := range []struct {
		name   string
		user   view.User
		data   string
		failed [][]any
	}{
		{"read", view.User{User: ann, Counts: view.Known(feedcore.GraphCounts{Followers: 3, Following: 4}), Following: view.Known(true)},
			`{"viewer":{"handle":"ann","avatarUrl":null,"followerCount":3,"followingCount":4,"viewerIsFollowing":true}}`, nil},
		{"counts failed", view.User{User: ann, Counts: view.ReadOf(feedcore.GraphCounts{}, errors.New("counts unread")), Following: view.Known(true)},
			`null`, [][]any{{"viewer", "followerCount"}, {"viewer", "followingCount"}}},
		{"flag never read", view.User{User: ann, Counts: view.Known(feedcore.GraphCounts{})},
			`null`, [][]any{{"viewer", "viewerIsFollowing"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := bareServer(viewerRoot{resolvers.New(svc), &tc.user})
			req := httptest.NewRequest(http.MethodPost, "/query", strings.NewReader(
				`{"query":"{ viewer { handle avatarUrl followerCount followingCount viewerIsFollowing } }"}`))
			req.Header.Set("Content-Type", "application/json")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			var resp struct {
				Data   json.RawMessage `json:"data"`
				Errors []gqlError      `json:"errors"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &resp); err != nil {
				t.Fatalf("%v: %s", err, rec.Body)
			}
			if string(resp.Data) != tc.data {
				t.Errorf("data %s, want %s", resp.Data, tc.data)
			}
			var paths [][]any
			for _, e := range resp.Errors {
				paths = append(paths, e.Path)
			}
			slices.SortFunc(paths, func(a, b []any) int { return strings.Compare(a[1].(string), b[1].(string)) })
			if len(paths) != len(tc.failed) || (len(paths) > 0 && !slices.EqualFunc(paths, tc.failed, func(a, b []any) bool { return slices.Equal(a, b) })) {
				t.Errorf("errors at %v, want at %v (%s)", paths, tc.failed, rec.Body)
			}
		})
	}
}

// viewerRoot answers viewer with a view made beforehand.
type viewerRoot struct {
	*resolvers.Resolver
	user *view.User
}

func (r viewerRoot) Query() graph.QueryResolver { return fixedViewer{r.Resolver.Query(), r.user} }

type fixedViewer struct {
	graph.QueryResolver
	user *view.User
}

func (q fixedViewer) Viewer(context.Context) (*view.User, error) { return q.user, nil }
