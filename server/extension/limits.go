package extension

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/apierr"
)

// DepthLimit refuses operations nested deeper than Max, fragments
// included, before any resolver runs.
type DepthLimit struct {
	anySchema
	Max int
}

func (DepthLimit) ExtensionName() string { return "DepthLimit" }

func (d DepthLimit) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil {
		return nil
	}
	// Introspection is measured by its own rule: a client fetching the
	// schema (GraphiQL, codegen) nests __type's ofType chain about 15
	// levels deep, and it reads the static schema, not the store. The
	// NoIntrospection extension decides whether it is allowed at all.
	var rest ast.SelectionSet
	for _, sel := range op.Operation.SelectionSet {
		f, ok := sel.(*ast.Field)
		if !ok || (f.Name != "__schema" && f.Name != "__type") {
			rest = append(rest, sel)
			continue
		}
		if n := selectionDepth(op.Doc, f.SelectionSet, 1, maxIntrospectionDepth); n > maxIntrospectionDepth {
			return CodedError(apierr.BadInput, "introspection is nested deeper than the limit of %d", maxIntrospectionDepth)
		}
	}
	if n := selectionDepth(op.Doc, rest, 0, d.Max); n > d.Max {
		return CodedError(apierr.BadInput, "operation is nested deeper than the limit of %d", d.Max)
	}
	return nil
}

// maxIntrospectionDepth bounds __schema and __type selections: deep enough
// for the introspection queries of GraphiQL and graphql-codegen.
const maxIntrospectionDepth = 24

// selectionDepth is the deepest field nesting under set, where set's own
// fields are at depth+1. It stops descending past limit, so a hostile
// document costs at most limit levels of work.
func selectionDepth(doc *ast.QueryDocument, set ast.SelectionSet, depth, limit int) int {
	deepest := depth
	if depth > limit {
		return depth
	}
	for _, s := range set {
		var d int
		switch s := s.(type) {
		case *ast.Field:
			d = selectionDepth(doc, s.SelectionSet, depth+1, limit)
		case *ast.InlineFragment:
			d = selectionDepth(doc, s.SelectionSet, depth, limit)
		case *ast.FragmentSpread:
			if f := doc.Fragments.ForName(s.Name); f != nil {
				d = selectionDepth(doc, f.SelectionSet, depth, limit)
			}
		}
		deepest = max(deepest, d)
		if deepest > limit {
			break
		}
	}
	return deepest
}

// NoIntrospection refuses __schema and __type when introspection is off,
// with FORBIDDEN and a message that says so (gqlgen would otherwise fail
// the field at execution time, after running the rest of the operation).
// __typename stays allowed: clients need it.
type NoIntrospection struct{ anySchema }

func (NoIntrospection) ExtensionName() string { return "NoIntrospection" }

func (NoIntrospection) MutateOperationContext(ctx context.Context, op *graphql.OperationContext) *gqlerror.Error {
	if op.Operation == nil || op.Operation.Operation != ast.Query {
		return nil
	}
	if introspects(op.Doc, op.Operation.SelectionSet, 0) {
		return CodedError(apierr.Forbidden, "introspection is disabled on this server")
	}
	return nil
}

// introspects reports whether a root selection set asks for __schema or
// __type, directly or through fragments.
func introspects(doc *ast.QueryDocument, set ast.SelectionSet, hops int) bool {
	if hops > 100 { // fragments cannot cycle after validation; belt and braces
		return false
	}
	for _, s := range set {
		switch s := s.(type) {
		case *ast.Field:
			if s.Name == "__schema" || s.Name == "__type" {
				return true
			}
		case *ast.InlineFragment:
			if introspects(doc, s.SelectionSet, hops+1) {
				return true
			}
		case *ast.FragmentSpread:
			if f := doc.Fragments.ForName(s.Name); f != nil && introspects(doc, f.SelectionSet, hops+1) {
				return true
			}
		}
	}
	return false
}
