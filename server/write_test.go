package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// gatedClient holds the first publish log append it sees (the first write
// of a publish: a script call whose arguments name the "pub" event) until
// released, telling the test it arrived.
type gatedClient struct {
	rueidis.Client
	entered, release chan struct{}
}

func (g *gatedClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	if len(cmds) > 0 && cmds[0].Commands()[0] == "EVALSHA" && slices.Contains(cmds[0].Commands(), "pub") {
		select {
		case <-g.entered:
		default:
			close(g.entered)
			<-g.release
		}
	}
	return g.Client.DoMulti(ctx, cmds...)
}

func (g *gatedClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	return g.DoMulti(ctx, cmd)[0]
}

// TestMutationOutlivesItsClient sends publishPost, and once the resolver
// is writing, the client goes away: the request's context ends, and the
// post is stored and in the author's feed all the same.
func TestMutationOutlivesItsClient(t *testing.T) {
	st := storetest.New(t)
	gate := &gatedClient{Client: st.Client, entered: make(chan struct{}), release: make(chan struct{})}
	svc, err := feedcore.New(context.Background(), gate, feedcore.Options{Prefix: st.Prefix})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PutUsers(context.Background(), []feedcore.User{{ID: 1, Handle: "ann"}}); err != nil {
		t.Fatal(err)
	}
	reqCtx := make(chan context.Context, 1)
	handled := make(chan struct{})
	var requests atomic.Int32
	h := New(Config{Service: svc, DevAuth: true, Metrics: NewMetrics()})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if requests.Add(1) == 1 { // the mutation
			reqCtx <- r.Context()
			defer close(handled)
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	cctx, hangUp := context.WithCancel(context.Background())
	body, _ := json.Marshal(map[string]any{"query": `mutation { publishPost(input: {text: "kept"}) { post { id } } }`})
	req, _ := http.NewRequestWithContext(cctx, http.MethodPost, srv.URL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(auth.DevHeader, "1")
	sent := make(chan error, 1)
	go func() {
		res, err := srv.Client().Do(req)
		if err == nil {
			res.Body.Close()
		}
		sent <- err
	}()

	deadline := time.After(10 * time.Second)
	wait := func(what string, ch <-chan struct{}) {
		t.Helper()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
	wait("the publish to start writing", gate.entered)
	hangUp() // the client disconnects mid-flight
	var rctx context.Context
	select {
	case rctx = <-reqCtx:
	case <-deadline:
		t.Fatal("no request context")
	}
	wait("the server to see the client gone", rctx.Done())
	if err := <-sent; err == nil {
		t.Fatal("the client's request was not cancelled")
	}
	close(gate.release)
	wait("the mutation to finish", handled)

	// A fresh request reads the author's own feed (read-your-writes).
	e := &env{t: t, svc: svc, srv: srv}
	var out struct {
		FollowingFeed struct {
			Edges []struct{ Node struct{ Text string } }
		} `json:"followingFeed"`
	}
	e.do(1, `{ followingFeed(first: 5) { edges { node { text } } } }`, nil).as(t, &out)
	var texts []string
	for _, ed := range out.FollowingFeed.Edges {
		texts = append(texts, ed.Node.Text)
	}
	if strings.Join(texts, ",") != "kept" {
		t.Fatalf("author's feed after the client left = %q, want the post", texts)
	}
}
