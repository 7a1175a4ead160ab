// Package inline marshals a GraphQL list's elements one after another on
// the calling goroutine when nothing beneath the list can wait, writes
// an object's fields without the bookkeeping graphql.FieldSet spends on
// them, keeps an object's collected fields across requests, and marshals
// a response into a pooled buffer.
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
//
// tools/gqlgen also makes each object's marshal make a Set in place of
// its graphql.FieldSet. The bytes are the same; FieldSet.MarshalGQL
// allocated each field anew and a map of the aliases written, a tenth of
// a live page's CPU.
//
// Every object's marshal collects its fields from its selection
// (graphql.CollectFields), which gqlgen keeps for one request; CollectFields
// keeps them for every request of the query when no directive of the
// selection names a variable. A query's result is marshalled by Response
// into a buffer of a pool, which the transport hands back (Release) once
// it has written the response.
package inline

import (
	"context"
	"io"

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

// setValues is how many values a Set holds without an allocation of
// their own: most objects select fewer fields.
const setValues = 6

// Set is an object's field set: a graphql.FieldSet, whose Values and
// Invalids the executor fills and whose concurrent fields it dispatches,
// written as FieldSet.MarshalGQL writes it (each field once, by alias, in
// order) but without its bookkeeping. The set, its values and the writer
// are one allocation where graphql.NewFieldSet and a writer were three.
type Set struct {
	graphql.FieldSet
	fields []graphql.CollectedField
	values [setValues]graphql.Marshaler
}

// NewSet is graphql.NewFieldSet(fields) as a Set.
func NewSet(fields []graphql.CollectedField) *Set {
	s := &Set{fields: fields}
	if n := len(fields); n <= setValues {
		s.Values = s.values[:n:n]
	} else {
		s.Values = make([]graphql.Marshaler, n)
	}
	return s
}

func (s *Set) MarshalGQL(w io.Writer) { object{fields: s.fields, values: s.Values}.MarshalGQL(w) }

type object struct {
	fields []graphql.CollectedField
	values []graphql.Marshaler
}

func (o object) MarshalGQL(w io.Writer) {
	_, _ = io.WriteString(w, "{")
	first := true
	for i, f := range o.fields {
		if written(o.fields[:i], f.Alias) {
			continue
		}
		if !first {
			_, _ = io.WriteString(w, ",")
		}
		first = false
		// An alias is a GraphQL name ([_A-Za-z][_0-9A-Za-z]*): nothing
		// in it needs escaping.
		_, _ = io.WriteString(w, `"`)
		_, _ = io.WriteString(w, f.Alias)
		_, _ = io.WriteString(w, `":`)
		o.values[i].MarshalGQL(w)
	}
	_, _ = io.WriteString(w, "}")
}

// written reports whether one of fields has alias: the executor merges
// fields of one alias, so this is graphql.FieldSet's guard, at no cost
// for the few fields an object has.
func written(fields []graphql.CollectedField, alias string) bool {
	for _, f := range fields {
		if f.Alias == alias {
			return true
		}
	}
	return false
}
