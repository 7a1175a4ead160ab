package server

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/server/extension"
)

// TestTryAgainRepliesAreUnavailable serves GraphQL over Redis servers that
// answer every command with one of Redis Cluster's "try again" replies, or
// not at all. Every operation, with the rate limiter and APQ in its way,
// fails UNAVAILABLE with the fixed message: nothing of Redis's reply
// reaches the client.
func TestTryAgainRepliesAreUnavailable(t *testing.T) {
	for _, reply := range []string{
		"-CLUSTERDOWN The cluster is down\r\n",
		"-TRYAGAIN Multiple keys request during rehashing of slot\r\n",
		"-LOADING Redis is loading the dataset in memory\r\n",
		"-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.\r\n",
		"-READONLY You can't write against a read only replica.\r\n",
		"-BUSY Redis is busy running a script.\r\n",
		storetest.Drop,
		storetest.Hang,
	} {
		name := strings.Fields(strings.Trim(reply, "-\x00"))[0]
		t.Run(name, func(t *testing.T) {
			svc := serviceOnFake(t, func([]string) string { return reply })
			var logs bytes.Buffer
			srv := httptest.NewServer(New(Config{Service: svc, DevAuth: true, Metrics: NewMetrics(),
				Logger:         slog.New(slog.NewTextHandler(&logs, nil)),
				RequestTimeout: 300 * time.Millisecond,
				APIConfig:      APIConfig{RateLimit: feedcore.RateLimit{Rate: 10, Burst: 10}}}))
			t.Cleanup(srv.Close)

			for _, op := range []string{
				`{ viewer { handle } }`,
				`{ followingFeed(first: 5) { edges { node { text } } } }`,
				`mutation { publishPost(input: {text: "hi"}) { post { id } } }`,
				`mutation { followUser(userId: "2") { user { handle } } }`,
			} {
				body, _ := json.Marshal(map[string]any{"query": op,
					"extensions": map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": extension.QueryHash(op)}}})
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/query", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(auth.DevHeader, "1")
				res, err := srv.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				raw, _ := io.ReadAll(res.Body)
				res.Body.Close()
				var out gqlResponse
				if err := json.Unmarshal(raw, &out); err != nil {
					t.Fatalf("%s: not JSON: %s", op, raw)
				}
				if len(out.Errors) == 0 {
					t.Fatalf("%s: no error: %s", op, raw)
				}
				for _, e := range out.Errors {
					if e.Extensions["code"] != "UNAVAILABLE" || e.Message != unavailableMessage {
						t.Errorf("%s: error %+v, want UNAVAILABLE %q", op, e, unavailableMessage)
					}
				}
				for _, secret := range []string{name, "redis", "127.0.0.1", "EOF", "deadline"} {
					if strings.Contains(strings.ToLower(string(raw)), strings.ToLower(secret)) {
						t.Errorf("%s: response leaks %q: %s", op, secret, raw)
					}
				}
			}
			if strings.Contains(logs.String(), "level=ERROR") {
				t.Errorf("an unavailable store was logged as an internal error:\n%s", logs.String())
			}
		})
	}
}
