package inline

import (
	"context"
	"slices"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// maxCollected bounds the selections whose fields are kept across
// requests: a few hundred distinct queries' worth. Past it the cache
// starts over, which costs a request a collection per object again; a
// client sending a new query each time costs what gqlgen's own
// collection costs, and the documents kept are at most this many
// entries' worth.
const maxCollected = 4096

// collected are the fields of selection sets, kept across requests.
var collected struct {
	sync.RWMutex
	fields map[collectKey]collectedFields
}

// collectKey names a selection set by its backing array, which the
// parsed document the executor's query cache keeps (or the fields
// collected from it, below) owns, and the object types it is collected
// for by a hash of their names (the entry holds the names, to compare).
type collectKey struct {
	sel       *ast.Selection
	n         int
	satisfies uint64 // hash of the type names
}

// collectedFields holds the selection set it was collected from, so
// that its array, whose address is the key, is not reused by another
// while the entry lives.
type collectedFields struct {
	sel       ast.SelectionSet
	satisfies []string
	fields    []graphql.CollectedField
}

// CollectFields is graphql.CollectFields, which collects an object's
// fields from its selection anew for every request (the executor keeps
// them for one request only): a tenth of a live page's allocations. A
// selection whose directives (@skip, @include, @defer) name no variable,
// that is nearly every one, is collected once for all requests of its
// query, which the executor's query cache parses once; one that names a
// variable is collected per request, as gqlgen does.
//
// The fields are shared between requests and read only, as gqlgen's own
// cache shares them between the goroutines of one request. A child
// object's selection is a CollectedField's Selections, kept by its
// parent's entry, so it keeps its address, and its key, too.
func CollectFields(op *graphql.OperationContext, sel ast.SelectionSet, satisfies []string) []graphql.CollectedField {
	if len(sel) == 0 {
		return graphql.CollectFields(op, sel, satisfies)
	}
	key := collectKey{sel: &sel[0], n: len(sel), satisfies: hashNames(satisfies)}
	collected.RLock()
	c, ok := collected.fields[key]
	collected.RUnlock()
	if ok && slices.Equal(c.satisfies, satisfies) {
		return c.fields
	}
	fields := graphql.CollectFields(op, sel, satisfies)
	if namesVariable(op.Doc, sel, map[string]bool{}) {
		return fields
	}
	collected.Lock()
	if collected.fields == nil || len(collected.fields) >= maxCollected {
		collected.fields = make(map[collectKey]collectedFields)
	}
	collected.fields[key] = collectedFields{sel: sel, satisfies: slices.Clone(satisfies), fields: fields}
	collected.Unlock()
	return fields
}

// CollectFieldsCtx is graphql.CollectFieldsCtx through CollectFields:
// the fields selected on the field ctx resolves.
func CollectFieldsCtx(ctx context.Context, satisfies []string) []graphql.CollectedField {
	return CollectFields(graphql.GetOperationContext(ctx), graphql.GetFieldContext(ctx).Field.Selections, satisfies)
}

// hashNames is FNV-1a over names, each ended by a zero byte.
func hashNames(names []string) uint64 {
	h := uint64(14695981039346656037)
	for _, n := range names {
		for i := 0; i < len(n); i++ {
			h = (h ^ uint64(n[i])) * 1099511628211
		}
		h *= 1099511628211 // the zero byte
	}
	return h
}

// namesVariable reports whether a directive of sel's own selections, or
// of the fragments they spread, takes a variable: what makes the fields
// collected depend on the request. A field's own selection is collected
// on its own, with its own check.
func namesVariable(doc *ast.QueryDocument, sel ast.SelectionSet, seen map[string]bool) bool {
	for _, s := range sel {
		switch s := s.(type) {
		case *ast.Field:
			if directivesName(s.Directives) {
				return true
			}
		case *ast.InlineFragment:
			if directivesName(s.Directives) || namesVariable(doc, s.SelectionSet, seen) {
				return true
			}
		case *ast.FragmentSpread:
			if directivesName(s.Directives) {
				return true
			}
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			f := doc.Fragments.ForName(s.Name)
			if f == nil || namesVariable(doc, f.SelectionSet, seen) {
				return true // not ours to judge: collected per request
			}
		default:
			return true
		}
	}
	return false
}

func directivesName(ds ast.DirectiveList) bool {
	for _, d := range ds {
		for _, a := range d.Arguments {
			if valueNames(a.Value) {
				return true
			}
		}
	}
	return false
}

func valueNames(v *ast.Value) bool {
	if v == nil {
		return false
	}
	if v.Kind == ast.Variable {
		return true
	}
	for _, c := range v.Children {
		if valueNames(c.Value) {
			return true
		}
	}
	return false
}
