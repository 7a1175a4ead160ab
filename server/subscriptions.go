package server

import (
	"context"
	"errors"
	"time"

	"github.com/99designs/gqlgen/graphql"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/reqinfo"
	"github.com/feedd/feedd/server/extension"
)

// subscriptionOp runs a subscription operation, whose answer is a stream
// of responses for as long as the client wants (perOperation runs the
// rest):
//
//   - no per-operation loaders: the resolvers read each update through
//     loaders of its own, or the stream would show what was read at its
//     first update for ever;
//   - no request timeout; the stream ends at the token's expiry instead,
//     with UNAUTHENTICATED (an event stream has no close code to say so);
//   - a stream the server ended (the realtime layer dropped a subscriber
//     that let its queue fill) ends with UNAVAILABLE, so the client
//     subscribes again rather than waiting on a silent stream;
//   - a refused subscription (its first answer an error with no data) is
//     counted by its code; an open one in feedd_subscriptions_open.
type subscriptionOp struct {
	operation
	cfg Config
	reg *Metrics
}

// errTokenExpired is the cause of a subscription's end at its token's
// expiry.
var errTokenExpired = errors.New("the token expired")

func (s subscriptionOp) run(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	expires := reqinfo.Of(ctx).Identity.Expires
	cancel := context.CancelFunc(func() {})
	if !expires.IsZero() {
		ctx, cancel = context.WithDeadlineCause(ctx, expires, errTokenExpired)
	}
	closed := s.reg.subscriptionOpened(rootField(ctx))
	context.AfterFunc(ctx, closed)
	respond := next(ctx)
	st := &subscriptionState{}
	return func(rctx context.Context) *graphql.Response {
		if st.ended {
			return nil
		}
		resp := s.next(rctx, respond, expires)
		if !st.answered {
			st.answered = true
			st.refused = resp != nil && len(resp.Errors) > 0 && resp.Data == nil
			s.first(ctx, resp, st.refused)
		}
		if resp != nil {
			return resp
		}
		st.ended = true
		defer cancel()
		defer s.observe(ctx, s.cfg.Logger, s.reg)
		return s.end(ctx, rctx, expires, st.refused)
	}
}

// subscriptionState is where a subscription's stream is.
type subscriptionState struct {
	answered, refused, ended bool
}

// next is the stream's next response, nil at its end: at the latest at
// the token's expiry.
func (s subscriptionOp) next(rctx context.Context, respond graphql.ResponseHandler, expires time.Time) *graphql.Response {
	if !expires.IsZero() {
		var cancel context.CancelFunc
		rctx, cancel = context.WithDeadlineCause(rctx, expires, errTokenExpired)
		defer cancel()
	}
	return respond(rctx)
}

// first records the subscription's first answer: its round trips, and a
// refusal's code.
func (s subscriptionOp) first(ctx context.Context, resp *graphql.Response, refused bool) {
	s.ran(ctx, s.cfg.Logger, s.reg)
	if !refused {
		return
	}
	code, _ := resp.Errors[0].Extensions["code"].(string)
	s.reg.streamRefused(s.stream, apierr.Code(code))
}

// end is the stream's last response, nil for none: why the server ended
// it, when the client did not.
func (s subscriptionOp) end(ctx, rctx context.Context, expires time.Time, refused bool) *graphql.Response {
	switch {
	case refused:
		return nil
	case !expires.IsZero() && !time.Now().Before(expires):
		return extension.ReplaceAnswer(ctx, extension.CodedError(apierr.Unauthenticated,
			"the token has expired: sign in again, then subscribe again"))
	case rctx.Err() != nil || ctx.Err() != nil: // the client left, or the server is going away
		return nil
	}
	return extension.ReplaceAnswer(ctx, extension.CodedError(apierr.Unavailable,
		"the server ended this subscription (its updates came faster than they were read); subscribe again, and refresh what is on screen"))
}

// rootField is the subscription's field: a subscription has exactly one
// (validated), named in the schema, so the label stays bounded.
func rootField(ctx context.Context) string {
	op := graphql.GetOperationContext(ctx)
	for _, f := range graphql.CollectFields(op, op.Operation.SelectionSet, []string{"Subscription"}) {
		return f.Name
	}
	return ""
}
