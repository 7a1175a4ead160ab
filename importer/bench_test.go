package importer

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/importer/importgen"
	"github.com/feedd/feedd/redisstore/storetest"
)

// The benchmark's file: 20,000 users, then a million follow edges, 50 a
// user, with a skewed choice of followee (the most followed accounts get
// 10,000 to 20,000 followers, so they turn big-V during the import).
var followsSpec = importgen.Spec{Users: 20_000, Follows: 1_000_000, Seed: 1}

var followsFile = sync.OnceValues(func() ([]byte, error) {
	var buf bytes.Buffer
	_, err := importgen.Write(&buf, followsSpec)
	return buf.Bytes(), err
})

// BenchmarkImportFollows loads a million follow edges into a real Redis:
//
//	FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./importer -run '^$' -bench ImportFollows -benchtime 1x -v
//
// Each iteration loads the whole file under a fresh key prefix.
func BenchmarkImportFollows(b *testing.B) {
	if os.Getenv(storetest.Env) == "" {
		b.Skipf("needs a real Redis with room for a million edges: set %s=redis://127.0.0.1:6379", storetest.Env)
	}
	file, err := followsFile()
	if err != nil {
		b.Fatal(err)
	}
	st := storetest.New(b)
	ctx := context.Background()
	var spent time.Duration
	b.ResetTimer()
	for i := range b.N {
		svc, err := feedcore.New(ctx, st.Client, feedcore.Options{
			Prefix: fmt.Sprintf("%sb%d:", st.Prefix, i), CursorKey: []byte("importer-bench-cursor-key-0123456789")})
		if err != nil {
			b.Fatal(err)
		}
		start := time.Now()
		stats, err := Load(ctx, svc, bytes.NewReader(file))
		took := time.Since(start)
		spent += took
		if err != nil {
			b.Fatal(err)
		}
		if stats.Follows != followsSpec.Follows || stats.Users != followsSpec.Users {
			b.Fatalf("stats %+v", stats)
		}
		b.Logf("%d edges (after %d users) loaded in %.1f s: %.0f edges/s",
			stats.Follows, stats.Users, took.Seconds(), float64(stats.Follows)/took.Seconds())
	}
	b.ReportMetric(float64(b.N*followsSpec.Follows)/spent.Seconds(), "edges/s")
}

// The generator's files load, posts included.
func TestImportgenLoads(t *testing.T) {
	var buf bytes.Buffer
	spec := importgen.Spec{Users: 50, Follows: 420, Posts: 100, Seed: 3}
	c, err := importgen.Write(&buf, spec)
	if err != nil {
		t.Fatal(err)
	}
	if c != (importgen.Counts{Users: 50, Follows: 420, Posts: 100}) {
		t.Fatalf("wrote %+v", c)
	}
	svc := newService(t)
	st, err := Load(context.Background(), svc, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Stats{Users: 50, Follows: 420, Posts: 100, Lines: 570}); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	if _, err := importgen.Write(io.Discard, importgen.Spec{Users: 10, Follows: 100}); err == nil {
		t.Error("10 follows a user among 10 users: want an error")
	}
}
