package feedcore

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/feedd/feedd/apierr"
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
	if err := s.c.Do(ctx, s.c.B().Set().Key(s.k.outbox(1)).Value("x").Build()).Error(); err != nil {
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
