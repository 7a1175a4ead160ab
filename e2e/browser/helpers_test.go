package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/demo"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/server"
)

// feedd is a test's server: the real handler over its own store.
type feedd struct {
	srv    *httptest.Server
	viewer feedcore.ID // the viewer GraphiQL opens with
}

// startFeedd serves server.New with dev auth over a fresh store, its
// fan-out workers and realtime layer running. With
// withDemo the store holds the demo data, as `feedd serve` with no flags,
// and GraphiQL opens as the demo's first suggested viewer; otherwise as
// viewer 1102 of an empty store.
func startFeedd(t *testing.T, withDemo bool) *feedd {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	svc, err := feedcore.New(ctx, st.Client, feedcore.Options{Prefix: st.Prefix, BigVThreshold: demo.Threshold})
	if err != nil {
		t.Fatal(err)
	}
	// The listener first: the demo's media URLs name its address.
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	cfg := server.Config{Service: svc, DevAuth: true, PlaygroundViewer: 1102}
	if withDemo {
		r, err := demo.Load(ctx, svc, 1, "http://"+srv.Listener.Addr().String()+server.DemoMediaPath)
		if err != nil {
			t.Fatalf("demo data: %v", err)
		}
		cfg.PlaygroundViewer, cfg.DemoMedia = r.Viewers[0].ID, demo.MediaHandler()
	}
	// Fan-out workers and realtime run as in feedd serve: GraphiQL's
	// subscriptions need both, to be told of a post.
	feedtest.Workers(t, svc)
	feedtest.Realtime(t, svc, feedcore.RealtimeOptions{})
	srv.Config.Handler = server.New(cfg)
	srv.Start()
	viewer := cfg.PlaygroundViewer
	return &feedd{srv: srv, viewer: viewer}
}

// query posts a GraphQL query as the given viewer and returns the raw
// response body.
func (f *feedd) query(t *testing.T, viewer feedcore.ID, q string) []byte {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q})
	req, _ := http.NewRequest(http.MethodPost, f.srv.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(auth.DevHeader, feedcore.FormatID(viewer))
	res, err := f.srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(res.Body); err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		t.Fatalf("query: status %d: %s", res.StatusCode, buf.Bytes())
	}
	return buf.Bytes()
}

// feedResult is the part of the example query's result the tests compare.
type feedResult struct {
	Data struct {
		Viewer struct {
			Handle string `json:"handle"`
		} `json:"viewer"`
		FollowingFeed struct {
			Edges []struct {
				Node struct {
					ID     string `json:"id"`
					Text   string `json:"text"`
					Author struct {
						Handle string `json:"handle"`
					} `json:"author"`
				} `json:"node"`
			} `json:"edges"`
		} `json:"followingFeed"`
	} `json:"data"`
	Errors []json.RawMessage `json:"errors"`
}
