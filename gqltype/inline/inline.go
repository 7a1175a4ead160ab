// Package inline marshals a GraphQL list's elements one after another on
// the calling goroutine when nothing beneath the list can wait.
//
// gqlgen's generated code marshals every list of objects through
// graphql.MarshalSliceConcurrently: one goroutine per element, so that an
// element's resolver fields (reads that may wait on Redis) overlap with
// its siblings' and their loaders batch. A feed page's posts, their
// authors and their media are views (package view) whose fields run
// inline and wait on nothing, and for them those goroutines were a third
// of a page's CPU: their creation, their stacks' growth and the
// scheduler's wake-ups.
//
// tools/gqlgen regenerates graph/ and rewrites each generated call of
// MarshalSliceConcurrently into a call of List with the selection of the
// list and the set of fields gqlgen runs concurrently (Fields, collected
// from gqlgen's own code model). List marshals inline when the selection
// reaches none of those fields at any depth, and hands the list to
// MarshalSliceConcurrently unchanged when it does, so a list whose
// elements page their replies still reads them side by side.
package inline

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Fields are the fields gqlgen resolves in goroutines of their own, by
// object type and field name.
type Fields map[string]map[string]bool

// waits reports whether a field selected on the type named parent is
// concurrent. On an interface or union (a fragment's type condition, or
// an interface's field) it is when the field is concurrent on any type.
func (fs Fields) waits(parent *ast.Definition, name string) bool {
	if parent != nil && parent.Kind == ast.Object {
		return fs[parent.Name][name]
	}
	for _, byName := range fs {
		if byName[name] {
			return true
		}
	}
	return false
}

// Reach reports whether sel selects, at any depth, a field fs holds, or
// defers a fragment: whether marshalling it may wait.
func (fs Fields) Reach(sel ast.SelectionSet) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if fs.waits(s.ObjectDefinition, s.Name) || fs.Reach(s.SelectionSet) {
				return true
			}
		case *ast.InlineFragment:
			if deferred(s.Directives) || fs.Reach(s.SelectionSet) {
				return true
			}
		case *ast.FragmentSpread:
			if deferred(s.Directives) || s.Definition == nil || fs.Reach(s.Definition.SelectionSet) {
				return true
			}
		}
	}
	return false
}

// deferred reports whether a fragment carries @defer, which the executor
// schedules through the goroutines List would skip.
func deferred(ds ast.DirectiveList) bool {
	return ds.ForName("defer") != nil
}

// List marshals a list of n elements selected by sel, as
// graphql.MarshalSliceConcurrently(ctx, n, workerLimit, omitPanicHandler,
// marshal) does, and inline when sel reaches none of fs (see Reach).
// Inline, every element has its own field context (its index in the
// path) and a panic is recovered into the response's errors and nulls the
// list, as there.
func List(ctx context.Context, fs Fields, sel ast.SelectionSet, n int, workerLimit int64, omitPanicHandler bool, marshal func(context.Context, int) graphql.Marshaler) graphql.Array {
	if n <= 1 || fs.Reach(sel) {
		return graphql.MarshalSliceConcurrently(ctx, n, workerLimit, omitPanicHandler, marshal)
	}
	ret := make(graphql.Array, n)
	for i := range n {
		child := graphql.WithFieldContext(ctx, &graphql.FieldContext{Index: &i})
		if !element(child, ret, i, omitPanicHandler, marshal) {
			return nil
		}
	}
	return ret
}

// element marshals ret[i], reporting false when it panicked.
func element(ctx context.Context, ret graphql.Array, i int, omitPanicHandler bool, marshal func(context.Context, int) graphql.Marshaler) (ok bool) {
	if !omitPanicHandler {
		defer func() {
			if r := recover(); r != nil {
				graphql.AddError(ctx, graphql.Recover(ctx, r))
				ok = false
			}
		}()
	}
	ret[i] = marshal(ctx, i)
	return true
}
