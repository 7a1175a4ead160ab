package reqinfo

import (
	"context"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
)

// Facts set again for the same request (a WebSocket's connection_init)
// replace the first ones and keep the request's Outcome; outside a request
// there are no facts and no Outcome, and reporting to it does nothing.
func TestFactsAndOutcome(t *testing.T) {
	bg := context.Background()
	if f, o := Of(bg), OutcomeOf(bg); f != (Facts{}) || o != nil {
		t.Fatalf("outside a request: %+v, %v", f, o)
	}
	OutcomeOf(bg).AddCode("INTERNAL") // no Outcome: nothing happens
	OutcomeOf(bg).SetRetryAfter(time.Second)

	ctx := With(bg, Facts{RequestID: "r1", ClientAddr: "192.0.2.1"})
	out := OutcomeOf(ctx)
	out.AddCode("UNAUTHENTICATED")
	ctx = With(ctx, Facts{RequestID: "r1", ClientAddr: "192.0.2.1", Identity: auth.Identity{ViewerID: 7}, Device: "phone"})
	if Viewer(ctx) != 7 || Of(ctx).Device != "phone" {
		t.Errorf("facts set again: %+v", Of(ctx))
	}
	if OutcomeOf(ctx) != out {
		t.Fatal("facts set again: the request's Outcome was replaced")
	}
	out.AddCode("NOT_FOUND")
	out.ReplaceCodes("RATE_LIMITED")
	out.SetRetryAfter(2 * time.Second)
	out.RanOperation(Operation{Type: "query", Name: "Feed", Trips: 2})
	out.RanOperation(Operation{Type: "query", Name: "Feed", Trips: 1})
	if c := out.Codes(); len(c) != 1 || c[0] != "RATE_LIMITED" || out.RetryAfter() != 2*time.Second || out.Operation().Trips != 3 {
		t.Errorf("outcome: codes %q, retry after %v, operation %+v", c, out.RetryAfter(), out.Operation())
	}
	if o := OutcomeOf(With(bg, Facts{})); o == out || o == nil {
		t.Error("another request shares the Outcome")
	}
}
