package server

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// replicaPrefixEnv, set, makes TestReplicaProcess serve feedd over the
// store's keys under this prefix, as a replica in a process of its own.
const replicaPrefixEnv = "FEEDD_TEST_REPLICA_PREFIX"

// TestReplicaProcess is not a test: it is the other process of
// TestCacheInvalidationAcrossProcesses. It serves feedd on a free port,
// prints its address, and serves (its /metrics holding its round trips)
// until its stdin closes.
func TestReplicaProcess(t *testing.T) {
	prefix := os.Getenv(replicaPrefixEnv)
	if prefix == "" {
		t.Skip("helper process of TestCacheInvalidationAcrossProcesses")
	}
	ctx := context.Background()
	st, err := redisstore.Open(ctx, redisstore.Options{URL: os.Getenv(storetest.Env), ClientName: "feedd-test-other-process"})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := feedcore.New(ctx, st.Client, feedcore.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/", New(Config{Service: svc, DevAuth: true, Metrics: NewMetrics()}))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	fmt.Printf("listening on http://%s\n", ln.Addr())
	stdinClosed := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(stdinClosed) }()
	select {
	case <-stdinClosed:
	case <-time.After(2 * time.Minute): // never outlive a crashed parent for long
	}
	_ = srv.Close()
}

// otherProcess is a feedd replica in another OS process, over the same
// Redis and keys.
type otherProcess struct {
	t    *testing.T
	url  string
	http *http.Client
}

func startOtherProcess(t *testing.T, prefix string) *otherProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestReplicaProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), replicaPrefixEnv+"="+prefix)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		_ = cmd.Wait()
	})
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if url, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				lines <- url
			}
		}
	}()
	select {
	case url := <-lines:
		return &otherProcess{t: t, url: url, http: &http.Client{Timeout: 10 * time.Second}}
	case <-time.After(60 * time.Second):
		t.Fatal("the other process did not start serving within 60s")
		return nil
	}
}

// query posts a query (as viewer, when not 0) and decodes its data into out.
func (p *otherProcess) query(viewer feedcore.ID, q string, vars map[string]any, out any) {
	p.t.Helper()
	body, _ := json.Marshal(map[string]any{"query": q, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, p.url+"/query", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	if viewer != 0 {
		req.Header.Set("X-Viewer-Id", feedcore.FormatID(viewer))
	}
	res, err := p.http.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	var r gqlResponse
	if err := json.NewDecoder(res.Body).Decode(&r); err != nil {
		p.t.Fatal(err)
	}
	r.as(p.t, out)
}

// trips is the round trips query operation op has cost the other process
// in all.
func (p *otherProcess) trips(op string) int64 {
	p.t.Helper()
	res, err := p.http.Get(p.url + "/metrics")
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	trips, _ := parseExposition(p.t, string(b)).value("feedd_graphql_redis_round_trips_sum", "type", "query", "operation", op)
	return int64(trips)
}

// TestCacheInvalidationAcrossProcesses: another feedd process caches a
// big-V post and a profile locally (a repeated read costs no round trip);
// a delete through this process's API, and a profile edit, show in that
// process's very next read, because Redis invalidates its copy.
func TestCacheInvalidationAcrossProcesses(t *testing.T) {
	storetest.RequireReal(t)
	st := storetest.New(t)
	e := newEnvOpts(t, st.Client, feedcore.Options{Prefix: st.Prefix, BigVThreshold: 2}, APIConfig{})
	e.users("star", "reader", "f3", "f4")
	e.workers()
	for _, f := range []feedcore.ID{2, 3, 4} {
		if err := e.svc.Follow(context.Background(), f, 1); err != nil {
			t.Fatal(err)
		}
	}
	post := e.publish(1, "big news")
	e.drain()

	other := startOtherProcess(t, st.Prefix)
	type readResult struct {
		Post *struct {
			Text   string
			Author struct{ DisplayName string }
		}
		User *struct{ DisplayName string }
	}
	const read = `query Read($post: ID!, $user: ID!) {
		post: node(id: $post) { ... on Post { text author { displayName } } }
		user: node(id: $user) { ... on User { displayName } }
	}`
	vars := map[string]any{"post": post, "user": gqltype.Encode(gqltype.User, 1)}
	readOther := func() (readResult, int) {
		t.Helper()
		before := other.trips("Read")
		var r readResult
		other.query(0, read, vars, &r)
		return r, int(other.trips("Read") - before)
	}
	// Cold, then warm: the second read is served from the local cache.
	r, cold := readOther()
	if r.Post == nil || r.Post.Text != "big news" || r.Post.Author.DisplayName != "The star" || r.User.DisplayName != "The star" {
		t.Fatalf("other process, first read: %+v", r)
	}
	r, warm := readOther()
	if r.Post == nil || warm != 0 {
		t.Fatalf("other process, second read: %+v in %d round trips (first: %d); want it from the local cache", r, warm, cold)
	}
	t.Logf("other process at %s: first read %d round trips, second %d", other.url, cold, warm)
	var feed hydratedResult
	other.query(2, hydratedPage, map[string]any{"first": 5}, &feed)
	if len(feed.FollowingFeed.Edges) != 1 {
		t.Fatalf("reader's feed in the other process: %+v", feed)
	}

	// An edited profile: the next read shows the new name.
	if err := e.svc.PutUser(context.Background(), feedcore.User{ID: 1, Handle: "star", DisplayName: "Star, renamed"}); err != nil {
		t.Fatal(err)
	}
	r, _ = readOther()
	if r.User.DisplayName != "Star, renamed" || r.Post.Author.DisplayName != "Star, renamed" {
		t.Fatalf("after the edit the other process read %+v", r)
	}

	// A delete through the API: gone from the other process's next read.
	e.do(1, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": post}).as(t, &struct{}{})
	r, _ = readOther()
	if r.Post != nil {
		t.Fatalf("deleted post still read by the other process: %+v", r.Post)
	}
	other.query(2, hydratedPage, map[string]any{"first": 5}, &feed)
	if len(feed.FollowingFeed.Edges) != 0 {
		t.Fatalf("deleted post still in the reader's feed in the other process: %+v", feed)
	}
}
