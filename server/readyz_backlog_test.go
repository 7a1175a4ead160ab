package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// oldReadyMaxBacklog is the bound /readyz used to answer 503 above (the
// default of --ready-max-backlog, now ignored).
const oldReadyMaxBacklog = 10000

// TestReadyzIgnoresBacklogOnEveryReplica: the fan-out backlog is one
// number every replica shares, so a bound on it took all of them out of
// rotation at once and a worker outage became a read outage. Two serve
// replicas (two Services over one store, no workers running) and a
// worker's operations listener, with a backlog over the old bound of
// 10,000: every /readyz answers 200 and reports the backlog, both replicas
// serve a GraphQL page, and /metrics shows the backlog in total and by
// stream.
func TestReadyzIgnoresBacklogOnEveryReplica(t *testing.T) {
	ctx := context.Background()
	st := storetest.New(t)
	const shards = 2
	type replica struct {
		*env
		ops *httptest.Server
	}
	newReplica := func() replica {
		svc, err := feedcore.New(ctx, st.Client, feedcore.Options{Prefix: st.Prefix, StreamShards: shards})
		if err != nil {
			t.Fatal(err)
		}
		cfg := Config{Service: svc, DevAuth: true, Verifier: &auth.Verifier{HS256Secret: testSecret},
			Metrics: NewMetrics(), RequestTimeout: testRequestTimeout}
		srv := httptest.NewServer(New(cfg))
		t.Cleanup(srv.Close)
		ops := httptest.NewServer(OpsHandler(cfg))
		t.Cleanup(ops.Close)
		return replica{env: &env{t: t, svc: svc, srv: srv, metrics: cfg.Metrics}, ops: ops}
	}
	replicas := []replica{newReplica(), newReplica()}
	// What `feedd worker --ops-addr` serves: OpsHandler over its Service.
	workerSvc, err := feedcore.New(ctx, st.Client, feedcore.Options{Prefix: st.Prefix, StreamShards: shards})
	if err != nil {
		t.Fatal(err)
	}
	workerOps := httptest.NewServer(OpsHandler(Config{Service: workerSvc}))
	t.Cleanup(workerOps.Close)

	a := replicas[0]
	a.users("ann", "bob")
	if err := a.svc.Follow(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	if _, err := a.svc.Publish(ctx, 2, "queued, never fanned out"); err != nil {
		t.Fatal(err)
	}
	// The backlog: entries in this test's own streams (its key prefix), in
	// one pipelined batch; no worker runs to take them.
	const events, tasks = oldReadyMaxBacklog + 1, 5
	eventsKey, tasksKey := st.Prefix+"fo:{s0}:ev", st.Prefix+"fo:{s1}:tk"
	xadd := func(key string) rueidis.Completed {
		return st.Client.B().Xadd().Key(key).Id("*").FieldValue().FieldValue("t", "test").Build()
	}
	cmds := make([]rueidis.Completed, 0, events+tasks)
	for range events {
		cmds = append(cmds, xadd(eventsKey))
	}
	for range tasks {
		cmds = append(cmds, xadd(tasksKey))
	}
	for _, r := range st.Client.DoMulti(ctx, cmds...) {
		if err := r.Error(); err != nil {
			t.Fatal(err)
		}
	}

	readyz := func(base string) {
		t.Helper()
		res, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var got struct {
			Ready   bool   `json:"ready"`
			Reason  string `json:"reason"`
			Backlog *int64 `json:"backlog"`
		}
		if err := json.Unmarshal(b, &got); err != nil || res.StatusCode != http.StatusOK || !got.Ready ||
			got.Reason != "" || got.Backlog == nil || *got.Backlog <= oldReadyMaxBacklog {
			t.Errorf("%s/readyz with a backlog over %d: %d %s", base, oldReadyMaxBacklog, res.StatusCode, b)
		}
	}
	for i, r := range replicas {
		readyz(r.srv.URL)
		readyz(r.ops.URL)

		var page struct {
			Viewer        struct{ Handle string }
			FollowingFeed struct {
				Edges    []struct{ Node struct{ ID string } }
				PageInfo struct{ HasNextPage bool }
			}
		}
		r.do(1, `query Page { viewer { handle } followingFeed(first: 5) { edges { node { id } } pageInfo { hasNextPage } } }`, nil).
			as(t, &page)
		if page.Viewer.Handle != "ann" {
			t.Errorf("replica %d: viewer %q, want ann", i, page.Viewer.Handle)
		}

		s := (&opsEnv{env: r.env}).scrape()
		total, ok := s.value("feedd_fanout_backlog")
		if !ok || total <= oldReadyMaxBacklog {
			t.Errorf("replica %d: feedd_fanout_backlog = %v (found %v), want over %d", i, total, ok, oldReadyMaxBacklog)
		}
		var sum float64
		for _, m := range s["feedd_fanout_stream_backlog"].GetMetric() {
			sum += m.GetGauge().GetValue()
		}
		if sum != total || len(s["feedd_fanout_stream_backlog"].GetMetric()) != 3*shards {
			t.Errorf("replica %d: %d feedd_fanout_stream_backlog series adding up to %v, want %d adding up to the total %v",
				i, len(s["feedd_fanout_stream_backlog"].GetMetric()), sum, 3*shards, total)
		}
		for _, c := range []struct {
			stream string
			shard  int
			least  float64
			exact  bool
		}{
			{"events", 0, events, false}, // and whatever the publish queued
			{"tasks", 1, tasks, true},    // no worker dispatched an event into a task
			{"tasks", 0, 0, true},
		} {
			got, ok := s.value("feedd_fanout_stream_backlog", "stream", c.stream, "shard", strconv.Itoa(c.shard))
			if !ok || got < c.least || (c.exact && got != c.least) {
				t.Errorf("replica %d: feedd_fanout_stream_backlog{stream=%q,shard=\"%d\"} = %v (found %v), want %v (exact %v)",
					i, c.stream, c.shard, got, ok, c.least, c.exact)
			}
		}
		if _, ok := s.value("feedd_fanout_stream_backlog", "stream", "journal", "shard", "1"); !ok {
			t.Errorf("replica %d: no journal stream backlog for shard 1", i)
		}
	}
	readyz(workerOps.URL)
}
