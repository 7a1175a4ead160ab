package server

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/redis/rueidis"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype/view"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/internal/redisinfo"
	"github.com/feedd/feedd/resolvers"
)

// BenchmarkHydratedPage serves the hydrated followingFeed page of
// TestHydratedPageRoundTrips (counters, viewer flags, authors with their
// counts) through the whole handler: HTTP request parsing, auth, gqlgen,
// loaders and Redis, without the network between client and server.
// "bare" serves the same response from memory through a bare gqlgen
// handler over the same schema: the floor our code is measured against.
// Run it against the real Redis (FEED_TEST_REDIS), where posts and
// profiles are cached after the first iteration:
//
//	FEED_TEST_REDIS=redis://127.0.0.1:6379 go test -run '^$' -bench HydratedPage -benchmem ./server
//
// feedd/first=N and bare/first=N serve one request at a time.
// first=N/parallel serves both under b.RunParallel in the same run, in
// alternating rounds (feedd, bare, bare, feedd, ...), so that load from
// elsewhere on the machine falls on both alike: ns/op is feedd's,
// bare-ns/op the bare server's, and x-bare feedd's throughput as a
// fraction of the bare server's (the budget is 0.8 or more); allocs/op
// and B/op are feedd's, bare-allocs/op the bare server's; cpu-ms/page and
// bare-cpu-ms/page the CPU time the test process spent per request (the
// handler's, and the little the in-process client costs both alike), and
// redis-cpu-ms/page the CPU Redis spent per feedd request (INFO cpu over
// its masters, on a real Redis only; anything else using that Redis
// meanwhile is in it too). Together they say where a page's cost goes:
// feedd's own code (cpu-ms/page less bare-cpu-ms/page, the executor's
// floor) and Redis. The sequential feedd/first=N and bare/first=N report
// the same per-page CPU one request at a time.
// first=N/parallel-x8 is the same with eight times as many requests in
// flight: with only GOMAXPROCS of them, every Redis round trip leaves a
// core idle, so that figure says as much about Redis's latency on a busy
// machine as about what our code costs next to the executor.
//
// round-trips/op is what the server recorded for the operation.
func BenchmarkHydratedPage(b *testing.B) {
	f := newFeedFixture(b)
	svc, err := feedcore.New(context.Background(), replicaClient(b, f.st), feedcore.Options{Prefix: f.st.Prefix})
	if err != nil {
		b.Fatal(err)
	}
	reg := NewMetrics()
	// The access log is formatted as in production, then dropped: a line
	// per request on the terminal would measure the terminal.
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	feedd := New(Config{Service: svc, DevAuth: true, Metrics: reg, Logger: logger})
	bare := bareHandler(b, svc)
	for _, n := range []int{20, 100} {
		body, _ := json.Marshal(map[string]any{"query": hydratedPage, "variables": map[string]any{"first": n}})
		serve := func(tb testing.TB, h http.Handler) {
			req := httptest.NewRequest(http.MethodPost, "/query", strings.NewReader(string(body)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("X-Viewer-Id", feedcore.FormatID(reader))
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK || strings.Contains(rec.Body.String(), `"errors"`) {
				tb.Fatalf("status %d: %s", rec.Code, rec.Body)
			}
		}
		serve(b, feedd) // warm the caches
		trips := func(b *testing.B, loop func()) {
			tripsBefore, runsBefore := reg.roundTrips(b, "HydratedPage")
			loop()
			trips, runs := reg.roundTrips(b, "HydratedPage")
			b.ReportMetric(float64(trips-tripsBefore)/float64(runs-runsBefore), "round-trips/op")
		}
		redis := func() time.Duration { return redisCPU(f.st.Client) }
		for _, h := range []struct {
			name string
			h    http.Handler
		}{{"feedd", feedd}, {"bare", bare}} {
			b.Run(fmt.Sprintf("%s/first=%d", h.name, n), func(b *testing.B) {
				b.ReportAllocs()
				loop := func() {
					for b.Loop() {
						serve(b, h.h)
					}
				}
				if h.name == "feedd" {
					trips(b, func() { cpuPerPage(b, loop, redis) })
				} else {
					cpuPerPage(b, loop, nil) // the bare server reads no Redis
				}
			})
		}
		// parallel: GOMAXPROCS requests in flight, as b.RunParallel does by
		// default; parallel-x8: eight times as many, enough to keep the
		// CPU busy while requests wait for Redis (a server's throughput
		// is what it answers when its clients keep it busy; the bare
		// server needs no more than the default to be).
		for _, par := range []int{1, 8} {
			name := fmt.Sprintf("first=%d/parallel", n)
			if par > 1 {
				name += fmt.Sprintf("-x%d", par)
			}
			b.Run(name, func(b *testing.B) {
				b.SetParallelism(par)
				compareParallel(b, feedd, bare, serve, trips, redis)
			})
		}
	}
}

// compareParallel serves feedd and bare under b.RunParallel in alternating
// rounds (feedd, bare, bare, feedd, ...), b.N requests a round, so load
// from elsewhere on the machine falls on both alike, and reports feedd's
// figures and the bare server's (see BenchmarkHydratedPage).
func compareParallel(b *testing.B, feedd, bare http.Handler, serve func(testing.TB, http.Handler), trips func(*testing.B, func()), redis func() time.Duration) {
	const rounds = 8
	var spent [2]struct {
		d, cpu, redis time.Duration
		allocs, bytes uint64
	}
	phase := func(i int, h http.Handler) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		redis0 := redis()
		cpu0 := cpuTime()
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				serve(b, h)
			}
		})
		spent[i].d += time.Since(start)
		spent[i].cpu += cpuTime() - cpu0
		if redis0 > 0 {
			spent[i].redis += redis() - redis0
		}
		runtime.ReadMemStats(&after)
		spent[i].allocs += after.Mallocs - before.Mallocs
		spent[i].bytes += after.TotalAlloc - before.TotalAlloc
	}
	trips(b, func() {
		for round := range rounds {
			if round%2 == 0 {
				phase(0, feedd)
				phase(1, bare)
			} else {
				phase(1, bare)
				phase(0, feedd)
			}
		}
	})
	ops := float64(rounds * b.N)
	b.ReportMetric(float64(spent[0].d.Nanoseconds())/ops, "ns/op")
	b.ReportMetric(float64(spent[1].d.Nanoseconds())/ops, "bare-ns/op")
	b.ReportMetric(float64(spent[1].d)/float64(spent[0].d), "x-bare")
	b.ReportMetric(float64(spent[0].allocs)/ops, "allocs/op")
	b.ReportMetric(float64(spent[0].bytes)/ops, "B/op")
	b.ReportMetric(float64(spent[1].allocs)/ops, "bare-allocs/op")
	if spent[0].cpu > 0 {
		b.ReportMetric(msPer(spent[0].cpu, ops), "cpu-ms/page")
		b.ReportMetric(msPer(spent[1].cpu, ops), "bare-cpu-ms/page")
	}
	if spent[0].redis > 0 {
		b.ReportMetric(msPer(spent[0].redis, ops), "redis-cpu-ms/page")
	}
}

// cpuPerPage runs loop (b.N requests) and reports the CPU time this process
// spent per request and, when redis is not nil and reads a real Redis, the
// CPU Redis spent per request.
func cpuPerPage(b *testing.B, loop func(), redis func() time.Duration) {
	var redis0 time.Duration
	if redis != nil {
		redis0 = redis()
	}
	cpu0 := cpuTime()
	loop()
	cpu := cpuTime() - cpu0
	if cpu0 > 0 {
		b.ReportMetric(msPer(cpu, float64(b.N)), "cpu-ms/page")
	}
	if redis0 > 0 {
		b.ReportMetric(msPer(redis()-redis0, float64(b.N)), "redis-cpu-ms/page")
	}
}

func msPer(d time.Duration, n float64) float64 { return float64(d) / float64(time.Millisecond) / n }

// redisCPU is the CPU time Redis has used so far, over its masters (INFO
// cpu), or 0 where it is not read: the embedded store does not report it.
func redisCPU(c rueidis.Client) time.Duration {
	cpu, _, err := redisinfo.ReadCPU(context.Background(), c)
	if err != nil {
		return 0
	}
	return time.Duration(cpu.Total() * float64(time.Second))
}

// bareHandler is a bare gqlgen handler over feedd's schema whose
// resolvers answer the reader's first pages from memory, read once from
// svc: the same response, without loaders, Redis or middleware. Each
// request builds its page's views from memory, as feedd's resolvers build
// them from the loaders.
func bareHandler(tb testing.TB, svc *feedcore.Service) http.Handler {
	ctx := context.Background()
	m := &memRoot{Resolver: resolvers.New(svc), pages: map[int]*feedcore.FeedPage{},
		users: map[feedcore.ID]*feedcore.User{}, counts: map[feedcore.ID]feedcore.PostCounts{},
		liked: map[feedcore.ID]bool{}, graph: map[feedcore.ID]feedcore.GraphCounts{}}
	for _, n := range []int{20, 100} {
		p, err := svc.FollowingFeed(ctx, feedcore.FeedRequest{Viewer: reader, First: n})
		if err != nil {
			tb.Fatal(err)
		}
		m.pages[n] = p
		var posts, authors []feedcore.ID
		for _, e := range p.Edges {
			posts = append(posts, e.Post.ID)
			authors = append(authors, e.Post.Author)
		}
		h, err := svc.Hydrate(ctx, feedcore.HydrateRequest{Viewer: reader, Counts: posts, Liked: posts, Users: authors, GraphCounts: authors})
		if err != nil {
			tb.Fatal(err)
		}
		for i, id := range posts {
			m.counts[id], m.liked[id] = h.Counts[i], h.Liked[i]
		}
		for i, id := range authors {
			m.users[id], m.graph[id] = h.Users[i], h.GraphCounts[i]
		}
	}
	return bareServer(m)
}

// bareServer is gqlgen's own handler over our schema with r, as a plain
// gqlgen server is set up: POST and a query cache, nothing else.
func bareServer(r graph.ResolverRoot) http.Handler {
	srv := handler.New(graph.NewExecutableSchema(graph.Config{Resolvers: r}))
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	return srv
}

type memRoot struct {
	*resolvers.Resolver
	pages  map[int]*feedcore.FeedPage
	users  map[feedcore.ID]*feedcore.User
	counts map[feedcore.ID]feedcore.PostCounts
	liked  map[feedcore.ID]bool
	graph  map[feedcore.ID]feedcore.GraphCounts
}

func (m *memRoot) Query() graph.QueryResolver { return memQuery{m.Resolver.Query(), m} }

type memQuery struct {
	graph.QueryResolver
	m *memRoot
}

func (q memQuery) FollowingFeed(_ context.Context, first *int, _ *string, _ *int, _ *string) (*graph.PostConnection, error) {
	p := q.m.pages[*first]
	conn := &graph.PostConnection{PageInfo: &graph.PageInfo{HasNextPage: p.HasNext, EndCursor: &p.EndCursor}}
	for _, e := range p.Edges {
		a := e.Post.Author
		author := &view.User{User: q.m.users[a], Counts: view.Known(q.m.graph[a]), Following: view.Known(true)}
		node := &view.Post{Post: e.Post, Author: view.Known(author), Counts: view.Known(q.m.counts[e.Post.ID]),
			Liked: view.Known(q.m.liked[e.Post.ID])}
		conn.Edges = append(conn.Edges, &graph.PostEdge{Cursor: e.Cursor, Node: node})
	}
	return conn, nil
}
