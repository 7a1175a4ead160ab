package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestTimedOutRequestHasACode: a request whose --request-timeout has passed
// before its operation runs (here: a timeout of a nanosecond, over before
// parsing ends) is answered with UNAVAILABLE, never 200 with the body null,
// and its mutation does not run.
func TestTimedOutRequestHasACode(t *testing.T) {
	st := storetest.New(t)
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{Prefix: st.Prefix})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.PutUsers(context.Background(), []feedcore.User{{ID: 1, Handle: "ann", DisplayName: "Ann"}}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(New(Config{Service: svc, DevAuth: true, RequestTimeout: time.Nanosecond, Metrics: NewMetrics()}))
	t.Cleanup(srv.Close)
	for _, q := range []string{
		`{ viewer { handle } }`,
		`mutation { publishPost(input: {text: "late"}) { post { id } } }`,
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/query", strings.NewReader(`{"query":`+quote(q)+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(auth.DevHeader, "1")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			t.Fatalf("%s: answered null", q)
		}
		if !bytes.Contains(raw, []byte(`"code":"UNAVAILABLE"`)) || !bytes.Contains(raw, []byte("longer than the server allows")) {
			t.Fatalf("%s: status %d, body %s", q, res.StatusCode, raw)
		}
	}
	page, err := svc.FollowingFeed(context.Background(), feedcore.FeedRequest{Viewer: 1, First: 10})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(page.Edges); n > 0 {
		t.Fatalf("a timed-out mutation published %d posts", n)
	}
}

func quote(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	b.WriteString(strings.ReplaceAll(s, `"`, `\"`))
	b.WriteByte('"')
	return b.String()
}
