package extension

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/reqinfo"
)

// Allowance is what requests spend their points from (shared by every
// replica through Redis): a signed-in viewer spends the viewer's own,
// anyone else (anonymous, or with credentials that were refused) the
// client address's, which is smaller, since one address may send as many
// anonymous requests as it likes. Every request spends at least BaseCost
// points, whether or not it runs: a refused one was parsed too.
type Allowance struct {
	Service *feedcore.Service
	// Viewer is each signed-in viewer's allowance; Rate <= 0: none.
	Viewer feedcore.RateLimit
	// Anonymous is each client address's allowance; the zero value means
	// Viewer's, Rate < 0 none.
	Anonymous feedcore.RateLimit
	// BaseCost is the least a request spends; 0: an operation spends its
	// cost (at least 1 point), a refused request nothing.
	BaseCost int
	Logger   *slog.Logger
}

// of is whose allowance ctx's request spends and its limit, and whether
// there is one to spend.
func (a Allowance) of(ctx context.Context) (feedcore.Subject, feedcore.RateLimit, bool) {
	var (
		sub   feedcore.Subject
		limit = a.Viewer
	)
	if v := reqinfo.Viewer(ctx); v != 0 {
		sub.Viewer = v
	} else {
		if sub.Addr = reqinfo.Of(ctx).ClientAddr; sub.Addr == "" {
			sub.Addr = "unknown"
		}
		if a.Anonymous != (feedcore.RateLimit{}) {
			limit = a.Anonymous
		}
	}
	return sub, limit, a.Service != nil && limit.Rate > 0
}

// spendBase spends the base cost of a request that will not run, in a round
// trip of its own: a RATE_LIMITED refusal once the allowance is spent, else
// nil. A store that does not answer lets the request's own answer through.
func (a Allowance) spendBase(ctx context.Context) *gqlerror.Error {
	sub, limit, ok := a.of(ctx)
	if !ok || a.BaseCost <= 0 {
		return nil
	}
	sctx, cancel := stepContext(ctx)
	defer cancel()
	v, err := a.Service.Spend(sctx, sub, a.BaseCost, limit)
	switch {
	case err != nil:
		logStoreError(ctx, a.Logger, "rate limit: store did not answer; answering the refused request", err)
	case v.Err != nil:
		return refusal(ctx, v)
	}
	return nil
}

// refusal is RATE_LIMITED with extensions.retryAfterMs, the cost and the
// points left; the HTTP response becomes 429 with Retry-After (the
// request's reqinfo.Outcome).
func refusal(ctx context.Context, v feedcore.Verdict) *gqlerror.Error {
	var fe *apierr.Error
	if !errors.As(v.Err, &fe) {
		return CodedError(apierr.Internal, "rate limit")
	}
	if fe.Code != apierr.RateLimited { // UNAUTHENTICATED: a deleted account
		return CodedError(fe.Code, "%s", fe.Message)
	}
	reqinfo.OutcomeOf(ctx).SetRetryAfter(fe.RetryAfter)
	return &gqlerror.Error{
		Err:     fe,
		Message: fe.Message,
		Extensions: map[string]any{
			"code":         string(apierr.RateLimited),
			"retryAfterMs": fe.RetryAfter.Milliseconds(),
			"cost":         map[string]any{"requested": v.Cost, "remaining": v.Remaining},
		},
	}
}

// ChargeRefusals is a gqlgen transport that runs the one it wraps with an
// executor under which a request refused before its operation can run
// still spends the allowance's base cost: its parameters (a persisted
// query not found, or not allowed), its parse or validation, the depth,
// introspection and cost limits, and, over GET, a mutation (which the GET
// transport refuses once the operation is known). The spend is a round
// trip of its own, on this path only (an operation's charge rides its
// first Redis call, see CostLimit). Once the allowance is spent, the
// refusal is RATE_LIMITED, 429, like any other: refusals cannot be sent
// for free.
type ChargeRefusals struct {
	graphql.Transport
	Allowance Allowance
}

func (c ChargeRefusals) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	if c.Allowance.BaseCost > 0 {
		// A WebSocket's upgrade is a GET too, but its operations may be
		// anything.
		getOnly := r.Method == http.MethodGet && r.Header.Get("Upgrade") == ""
		exec = chargingRefusals{GraphExecutor: exec, a: c.Allowance, queriesOnly: getOnly}
	}
	c.Transport.Do(w, r, exec)
}

type chargingRefusals struct {
	graphql.GraphExecutor
	a           Allowance
	queriesOnly bool
}

func (e chargingRefusals) CreateOperationContext(ctx context.Context, params *graphql.RawParams) (*graphql.OperationContext, gqlerror.List) {
	op, errs := e.GraphExecutor.CreateOperationContext(ctx, params)
	refused := errs != nil || e.queriesOnly && op.Operation != nil && op.Operation.Operation != ast.Query
	if !refused {
		return op, nil
	}
	if err := e.a.spendBase(ctx); err != nil {
		return op, gqlerror.List{err}
	}
	return op, errs
}
