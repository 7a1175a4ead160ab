package feedcore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestErrorsKeepTheirCause: a store error comes back wrapped with the
// operation that failed and still unwraps to its cause; a domain error
// keeps its message as it is.
func TestErrorsKeepTheirCause(t *testing.T) {
	st := storetest.New(t)
	s := newService(t, st, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1)
	// The author's outbox holds the wrong type: the publish's writes fail.
	if err := s.Redis.Do(ctx, s.Redis.B().Set().Key(s.Keys.Outbox(1)).Value("x").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	_, err := s.Publish(ctx, 1, "hello")
	if err == nil || !strings.HasPrefix(err.Error(), "publish: ") || !strings.Contains(err.Error(), "WRONGTYPE") {
		t.Fatalf("publish over a broken outbox: %v", err)
	}
	if errors.Unwrap(err) == nil {
		t.Fatalf("%v does not unwrap", err)
	}
	_, err = s.Publish(ctx, 99, "hello")
	var e *apierr.Error
	if !errors.As(err, &e) || e.Code != apierr.NotFound || err.Error() != e.Message {
		t.Fatalf("domain error reworded: %v", err)
	}
}

// TestEntryPointsNameTheirOperation: a store error out of an exported
// entry point says which operation failed.
func TestEntryPointsNameTheirOperation(t *testing.T) {
	st := storetest.New(t)
	s := newService(t, st, Options{})
	ctx := context.Background()
	// Keys of the wrong type: a post and a user that are strings, an
	// allowance that is a hash.
	limit := RateLimit{Rate: 10, Burst: 10}
	viewer := Subject{Viewer: 5}
	for _, cmd := range []func() error{
		func() error { return s.Redis.Do(ctx, s.Redis.B().Set().Key(s.Keys.Post(7)).Value("x").Build()).Error() },
		func() error { return s.Redis.Do(ctx, s.Redis.B().Set().Key(s.Keys.User(8)).Value("x").Build()).Error() },
		func() error {
			return s.Redis.Do(ctx, s.Redis.B().Hset().Key(s.RateKey(viewer)).FieldValue().FieldValue("f", "v").Build()).Error()
		},
	} {
		if err := cmd(); err != nil {
			t.Fatal(err)
		}
	}
	sink := ExportSink{
		User: func(User) error { return nil }, Follow: func(Edge, time.Time) error { return nil }, Relation: func(Relation) error { return nil },
		Post: func(*content.Post) error { return nil }, Live: func(*LiveSession) error { return nil },
		Like: func(_, _ store.ID) error { return nil }, Counts: func(store.ID, PostCounts) error { return nil },
		Favorite: func(Favorite) error { return nil },
	}
	for _, tc := range []struct {
		op   string
		call func() error
	}{
		{"user 5 likes post 7: ", func() error { _, _, err := s.Like(ctx, 5, 7); return err }},
		{"user 5 unlikes post 7: ", func() error { _, _, err := s.Unlike(ctx, 5, 7); return err }},
		{"spend 3 of an allowance's points: ", func() error { _, err := s.Spend(ctx, viewer, 3, limit); return err }},
		{"spend a point of user 5's allowance: ", func() error { return s.Allow(ctx, 5, limit) }},
		{"export: ", func() error { return s.Export(ctx, sink) }},
	} {
		err := tc.call()
		if err == nil || !strings.HasPrefix(err.Error(), tc.op) || !strings.Contains(err.Error(), "WRONGTYPE") {
			t.Errorf("want %q and the store's WRONGTYPE, got %v", tc.op, err)
		}
	}
}
