package feedcore

import (
	"context"
	"testing"
	"time"

	"github.com/feedd/feedd/redisstore/storetest"
)

// A persisted query is read back by its hash until its TTL runs out, and a
// registration starts the TTL over; an unknown hash reads as "".
func TestPersistedQuery(t *testing.T) {
	st := storetest.New(t)
	s := newService(t, st, Options{})
	ctx := context.Background()
	if q, err := s.PersistedQuery(ctx, "unknown"); err != nil || q != "" {
		t.Fatalf("unknown hash: %q, %v", q, err)
	}
	if err := s.PersistQuery(ctx, "h1", "{ viewer { id } }", time.Minute); err != nil {
		t.Fatal(err)
	}
	if q, err := s.PersistedQuery(ctx, "h1"); err != nil || q != "{ viewer { id } }" {
		t.Fatalf("registered text: %q, %v", q, err)
	}
	ttl := func() time.Duration {
		t.Helper()
		ms, err := s.Redis.Do(ctx, s.Redis.B().Pttl().Key(s.Keys.PersistedQuery("h1")).Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		return time.Duration(ms) * time.Millisecond
	}
	if d := ttl(); d <= 0 || d > time.Minute {
		t.Fatalf("TTL %v after a registration for a minute", d)
	}
	if err := s.PersistQuery(ctx, "h1", "{ viewer { id } }", time.Hour); err != nil {
		t.Fatal(err)
	}
	if d := ttl(); d <= time.Minute {
		t.Errorf("TTL %v after registering again for an hour", d)
	}
}
