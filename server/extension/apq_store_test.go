package extension

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// A persisted query is read back by its hash until its TTL runs out, and a
// registration starts the TTL over; an unknown hash reads as "".
func TestPersistedQueryStore(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	svc, err := feedcore.New(ctx, st.Client, feedcore.Options{Prefix: st.Prefix, CursorKey: []byte("test-cursor-key-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	a := NewAPQCache(svc, time.Minute, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if q, err := a.lookup(ctx, "unknown"); err != nil || q != "" {
		t.Fatalf("unknown hash: %q, %v", q, err)
	}
	if err := a.register(ctx, "h1", "{ viewer { id } }"); err != nil {
		t.Fatal(err)
	}
	if q, err := a.lookup(ctx, "h1"); err != nil || q != "{ viewer { id } }" {
		t.Fatalf("registered text: %q, %v", q, err)
	}
	ttl := func() time.Duration {
		t.Helper()
		ms, err := st.Client.Do(ctx, st.Client.B().Pttl().Key(svc.Keys.PersistedQuery("h1")).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return time.Duration(ms) * time.Millisecond
	}
	if d := ttl(); d <= 0 || d > time.Minute {
		t.Fatalf("TTL %v after a registration for a minute", d)
	}
	a.ttl = time.Hour
	if err := a.register(ctx, "h1", "{ viewer { id } }"); err != nil {
		t.Fatal(err)
	}
	if d := ttl(); d <= time.Minute {
		t.Errorf("TTL %v after registering again for an hour", d)
	}
}
