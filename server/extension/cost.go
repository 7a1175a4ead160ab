package extension

import (
	"context"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/reqinfo"
)

// CostLimit prices an operation once it has parsed and validated: every
// field by the backend work it causes (the server's complexityRoot),
// aliases one by one, and never less than the allowance's base cost. It
// refuses an operation above the complexity limit or carrying too many
// mutation fields with BAD_USER_INPUT, and, when rate limiting is on,
// spends the cost from the caller's allowance of points (Allowance).
//
// The cost rides in the pipeline of the operation's first Redis call
// (feedcore.Charge), so the check costs no round trip of its own; a
// refused operation answers RATE_LIMITED and no data. A mutation's charge
// rides only a pipeline of reads and is spent alone before a first write
// (NewWriteCharge), so a refused mutation changes nothing.
//
// Every answered operation carries extensions.cost: {requested, limit} and,
// when rate limiting is on, remaining (the points left in the allowance).
// If Redis cannot answer the rate check, the operation goes ahead: it
// needs Redis anyway and will report UNAVAILABLE itself. A subscription
// spends its cost before it subscribes, once (subscribe). A request refused
// before it gets here spends the base cost through ChargeRefusals.
type CostLimit struct {
	anySchema
	Schema        graphql.ExecutableSchema
	MaxComplexity int // <= 0: none
	MaxMutations  int // <= 0: none
	Allowance     Allowance
	// Cache keeps operations' complexity; nil: each is priced anew.
	Cache *CostCache
}

func (CostLimit) ExtensionName() string { return "CostLimit" }

const costKey = "feedd.cost"

// opCost is what CostLimit learned about one operation.
type opCost struct {
	requested int
	charge    *feedcore.Charge // the operation's pending charge
}

func (c CostLimit) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil
	}
	n := c.Cache.complexity(ctx, c.Schema, op)
	oc := &opCost{requested: max(n, c.Allowance.BaseCost)}
	reqinfo.OutcomeOf(ctx).Priced(oc.requested)
	op.Stats.SetExtension(costKey, oc)
	if c.MaxComplexity > 0 && n > c.MaxComplexity {
		e := CodedError(apierr.BadInput, "operation costs %d points, more than the complexity limit of %d; ask for smaller pages or fewer fields", n, c.MaxComplexity)
		e.Extensions["cost"] = n
		e.Extensions["maxComplexity"] = c.MaxComplexity
		return e
	}
	if op.Operation.Operation == ast.Mutation && c.MaxMutations > 0 {
		if m := rootFields(op.Doc, op.Operation.SelectionSet, 0); m > c.MaxMutations {
			return CodedError(apierr.BadInput, "operation carries %d mutation fields (aliases count); at most %d are allowed, send the rest in further requests", m, c.MaxMutations)
		}
	}
	sub, limit, ok := c.Allowance.of(ctx)
	// A signed-in viewer's operation carries a charge even with the rate
	// limit off: it checks, riding the first pipeline, that the viewer's
	// account was not deleted (feedcore.NewCharge).
	ok = ok || sub.Viewer != 0 && c.Allowance.Service != nil
	switch {
	case !ok:
	case op.Operation.Operation == ast.Mutation:
		oc.charge = c.Allowance.Service.NewWriteCharge(sub, oc.requested, limit)
	default:
		oc.charge = c.Allowance.Service.NewCharge(sub, oc.requested, limit)
	}
	return nil
}

func (c CostLimit) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc, _ := graphql.GetOperationContext(ctx).Stats.GetExtension(costKey).(*opCost)
	if oc == nil {
		return next(ctx)
	}
	op := graphql.GetOperationContext(ctx).Operation
	if op != nil && op.Operation == ast.Subscription {
		return c.subscribe(ctx, oc, next)
	}
	if oc.charge != nil {
		ctx = feedcore.WithCharge(ctx, oc.charge)
	}
	respond := next(ctx)
	return func(ctx context.Context) *graphql.Response {
		resp := respond(ctx)
		if resp == nil {
			return nil
		}
		v, refused := c.settle(ctx, oc)
		if refused != nil {
			return ReplaceAnswer(ctx, refused)
		}
		c.addCost(resp, oc, v)
		return resp
	}
}

// settle spends oc's charge, if it has one not spent yet: the verdict (nil
// when there was no charge or the store did not answer, which lets the
// operation through), or the refusal.
func (c CostLimit) settle(ctx context.Context, oc *opCost) (*feedcore.Verdict, *gqlerror.Error) {
	if oc.charge == nil {
		return nil, nil
	}
	sctx, cancel := stepContext(ctx)
	got, err := oc.charge.Settle(sctx)
	cancel()
	switch {
	case err != nil:
		logStoreError(ctx, c.Allowance.Logger, "rate limit: store did not answer; letting the operation through", err)
		return nil, nil
	case got.Err != nil:
		return nil, refusal(ctx, got)
	}
	return &got, nil
}

// addCost sets resp's extensions.cost.
func (c CostLimit) addCost(resp *graphql.Response, oc *opCost, v *feedcore.Verdict) {
	cost := costReport{requested: oc.requested, limit: max(c.MaxComplexity, 0)}
	if v != nil && oc.charge.Rated() {
		cost.remaining, cost.rated = v.Remaining, true
	}
	if resp.Extensions == nil {
		resp.Extensions = make(map[string]any, 1)
	}
	resp.Extensions["cost"] = cost
}

// costReport is extensions.cost: {"limit": ..., "remaining": ...,
// "requested": ...}, limit only when there is one, remaining only when
// the operation was rated. It marshals to the bytes json.Marshal made of
// the map it replaces (keys sorted), without reflection: every answer
// carries one.
type costReport struct {
	requested int
	limit     int // 0: no complexity limit
	remaining int
	rated     bool // remaining is known
}

func (c costReport) MarshalJSON() ([]byte, error) { return c.appendJSON(nil), nil }

func (c costReport) appendJSON(b []byte) []byte {
	b = append(b, '{')
	if c.limit > 0 {
		b = append(b, `"limit":`...)
		b = strconv.AppendInt(b, int64(c.limit), 10)
		b = append(b, ',')
	}
	if c.rated {
		b = append(b, `"remaining":`...)
		b = strconv.AppendInt(b, int64(c.remaining), 10)
		b = append(b, ',')
	}
	b = append(b, `"requested":`...)
	b = strconv.AppendInt(b, int64(c.requested), 10)
	return append(b, '}')
}

// subscribe spends a subscription's cost before it subscribes (alone: its
// updates come later, from the realtime layer, and are not charged), so a
// refused one never opens; its first answer carries extensions.cost.
func (c CostLimit) subscribe(ctx context.Context, oc *opCost, next graphql.OperationHandler) graphql.ResponseHandler {
	v, refused := c.settle(ctx, oc)
	if refused != nil {
		return graphql.OneShot(ReplaceAnswer(ctx, refused))
	}
	respond := next(ctx)
	first := true
	return func(ctx context.Context) *graphql.Response {
		resp := respond(ctx)
		if resp != nil && first {
			first = false
			c.addCost(resp, oc, v)
		}
		return resp
	}
}

// rootFields counts the fields of an operation's root selection set,
// fragments included, aliases each.
func rootFields(doc *ast.QueryDocument, set ast.SelectionSet, hops int) int {
	if hops > 100 { // fragments cannot cycle after validation; belt and braces
		return 0
	}
	n := 0
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if s.Name != "__typename" {
				n++
			}
		case *ast.InlineFragment:
			n += rootFields(doc, s.SelectionSet, hops+1)
		case *ast.FragmentSpread:
			if f := doc.Fragments.ForName(s.Name); f != nil {
				n += rootFields(doc, f.SelectionSet, hops+1)
			}
		}
	}
	return n
}
