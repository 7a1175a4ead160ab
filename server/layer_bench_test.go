package server

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/resolvers"
)

// BenchmarkQueryLayer serves an operation that needs no Redis and next to
// no executor work (an anonymous `{ __typename }` with variables) through
// feedd's whole handler and through a bare gqlgen handler over the same
// schema: the difference is what the HTTP and GraphQL layers around the
// executor cost a request (middleware, request checks and decoding, the
// extensions, the access log, the writers). Compare feedd's ns/op and
// allocs/op with bare's.
func BenchmarkQueryLayer(b *testing.B) {
	st := storetest.New(b)
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{Prefix: st.Prefix})
	if err != nil {
		b.Fatal(err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	feedd := New(Config{Service: svc, Metrics: NewMetrics(), Logger: logger})
	srv := bareServer(resolvers.New(svc))
	body := `{"query":"query Layer($skip: Boolean!) { __typename a: __typename @skip(if: $skip) }","variables":{"skip":false}}`
	for _, h := range []struct {
		name string
		h    http.Handler
	}{{"feedd", feedd}, {"bare", srv}} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/query", strings.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				rec := httptest.NewRecorder()
				h.h.ServeHTTP(rec, req)
				if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), `"a":"Query"`) {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
