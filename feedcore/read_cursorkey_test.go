package feedcore

import (
	"context"
	"testing"

	"github.com/feedd/feedd/redisstore/storetest"
)

// TestCursorKeySurvivesItsLoss: two replicas share the cursor key kept in
// Redis. Redis loses it (a restart without persistence); a third replica
// starting then creates another. The replicas converge on one key without
// a restart: a cursor minted by any replica opens on every other.
func TestCursorKeySurvivesItsLoss(t *testing.T) {
	st := storetest.New(t)
	ctx := context.Background()
	replica := func() *Service {
		s, err := New(ctx, st.Client, Options{Prefix: st.Prefix})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	a, b := replica(), replica()
	mustUsers(t, a, 1)
	for range 3 {
		if _, err := a.Publish(ctx, 1, "post"); err != nil {
			t.Fatal(err)
		}
	}
	page := func(s *Service, after string) (string, error) {
		pg, err := s.FollowingFeed(ctx, FeedRequest{Viewer: 1, First: 1, After: after})
		if err != nil {
			return "", err
		}
		return pg.EndCursor, nil
	}
	crossOpens := func(what string, from, to *Service) {
		t.Helper()
		c, err := page(from, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := page(to, c); err != nil {
			t.Fatalf("%s: a cursor minted by one replica fails on another: %v", what, err)
		}
	}
	crossOpens("shared key", a, b)

	lose := func() {
		if err := st.Client.Do(ctx, st.Client.B().Del().Key(a.Keys.CursorKey()).Build()).Error(); err != nil {
			t.Fatal(err)
		}
	}
	// The key vanishes; the first replica to re-read it puts its own back.
	lose()
	if err := a.RefreshCursorKey(ctx); err != nil {
		t.Fatal(err)
	}
	crossOpens("key put back", b, a)
	crossOpens("key put back", a, b)

	// The key vanishes and a new replica creates another before the old
	// ones notice: a cursor of the new replica makes an old one re-read
	// the key and adopt it (no restart); the other adopts it on its
	// periodic re-read.
	lose()
	c := replica()
	crossOpens("new replica's cursor on an old replica", c, a)
	if err := b.RefreshCursorKey(ctx); err != nil {
		t.Fatal(err)
	}
	for _, pair := range [][2]*Service{{a, b}, {b, c}, {c, a}, {b, a}} {
		crossOpens("converged", pair[0], pair[1])
	}
	// A configured key is never replaced.
	fixed, err := New(ctx, st.Client, Options{Prefix: st.Prefix, CursorKey: []byte("configured-cursor-key-0123456789")})
	if err != nil {
		t.Fatal(err)
	}
	lose()
	if err := fixed.RefreshCursorKey(ctx); err != nil {
		t.Fatal(err)
	}
	if got := string(fixed.Sealer.Load().Key()); got != "configured-cursor-key-0123456789" {
		t.Fatalf("configured key replaced by %q", got)
	}
}
