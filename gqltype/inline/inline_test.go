package inline

import (
	"bytes"
	"context"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

const schema = `
interface Node { id: ID! }
type Post implements Node { id: ID! text: String! author: User! replies: [Post!]! media: [Media!]! }
type User implements Node { id: ID! handle: String! posts: [Post!]! }
type Media { url: String! }
type Query { feed: [Post!]! nodes: [Node]! }
`

var fields = Fields{"Post": {"replies": true}, "User": {"posts": true}, "Query": {"feed": true, "nodes": true}}

// selection is the selection of the query's first root field.
func selection(t *testing.T, query string) ast.SelectionSet {
	t.Helper()
	s := gqlparser.MustLoadSchema(&ast.Source{Input: schema})
	doc, err := gqlparser.LoadQueryWithRules(s, query, nil)
	if err != nil {
		t.Fatalf("query %s: %v", query, err)
	}
	return doc.Operations[0].SelectionSet[0].(*ast.Field).SelectionSet
}

func TestReach(t *testing.T) {
	for _, tc := range []struct {
		query string
		want  bool
	}{
		{`{ feed { id text } }`, false},
		{`{ feed { id author { handle } media { url } } }`, false},
		{`{ feed { id replies { id } } }`, true},
		{`{ feed { author { posts { id } } } }`, true},
		{`{ feed { ...P } } fragment P on Post { author { posts { id } } }`, true},
		{`{ feed { ...P } } fragment P on Post { author { handle } }`, false},
		{`{ nodes { id ... on User { handle } } }`, false},
		{`{ nodes { ... on User { posts { id } } } }`, true},
		{`{ feed { ... on Post @defer { text } } }`, true},
	} {
		if got := fields.Reach(selection(t, tc.query)); got != tc.want {
			t.Errorf("Reach(%s) = %v, want %v", tc.query, got, tc.want)
		}
	}
}

// TestListInline marshals a list inline: each element on the caller's
// goroutine, with its own index in the path, in order.
func TestListInline(t *testing.T) {
	sel := selection(t, `{ feed { id text } }`)
	ctx := graphql.WithFieldContext(context.Background(), &graphql.FieldContext{})
	var order []int
	var busy, overlapped atomic.Int32
	ret := List(ctx, fields, sel, 3, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		if busy.Add(1) > 1 {
			overlapped.Store(1)
		}
		for range 100 {
			runtime.Gosched() // let any sibling goroutine run into busy
		}
		busy.Add(-1)
		order = append(order, i) // no lock: a data race here fails under -race if List went concurrent
		if got := *graphql.GetFieldContext(ctx).Index; got != i {
			t.Errorf("element %d has index %d", i, got)
		}
		return graphql.MarshalInt(i)
	})
	if overlapped.Load() != 0 {
		t.Fatal("elements were marshalled at the same time")
	}
	if len(ret) != 3 || len(order) != 3 || order[0] != 0 || order[2] != 2 {
		t.Fatalf("List returned %v, marshalled %v in that order", ret, order)
	}
}

// TestListPanic: a panicking element is an error in the response and
// nulls the list, as graphql.MarshalSliceConcurrently does.
func TestListPanic(t *testing.T) {
	sel := selection(t, `{ feed { id } }`)
	ctx := graphql.WithResponseContext(context.Background(), graphql.DefaultErrorPresenter, graphql.DefaultRecover)
	ctx = graphql.WithFieldContext(ctx, &graphql.FieldContext{})
	ret := List(ctx, fields, sel, 2, 0, false, func(ctx context.Context, i int) graphql.Marshaler {
		if i == 1 {
			panic("boom")
		}
		return graphql.MarshalInt(i)
	})
	if ret != nil {
		t.Fatalf("List after a panic = %v, want nil", ret)
	}
	if errs := graphql.GetErrors(ctx); len(errs) != 1 {
		t.Fatalf("errors after a panic: %v, want one", errs)
	}
}

// TestSetWritesAsFieldSet: a Set writes the bytes graphql.FieldSet
// writes, for objects of no field, one, several (aliases included), more
// than a Set holds inline, and an alias given twice, which FieldSet
// writes once, the first time.
func TestSetWritesAsFieldSet(t *testing.T) {
	field := func(alias string) graphql.CollectedField {
		return graphql.CollectedField{Field: &ast.Field{Alias: alias, Name: alias}}
	}
	for _, aliases := range [][]string{
		nil,
		{"id"},
		{"id", "text", "_first2", "Author"},
		{"id", "text", "id"},
		{"a", "b", "c", "d", "e", "f", "g", "h"},
	} {
		fields := make([]graphql.CollectedField, len(aliases))
		for i, a := range aliases {
			fields[i] = field(a)
		}
		out, set := graphql.NewFieldSet(fields), NewSet(fields)
		for i := range out.Values {
			out.Values[i] = graphql.MarshalString(`v"` + aliases[i] + "\n")
			set.Values[i] = out.Values[i]
		}
		var want, got bytes.Buffer
		out.MarshalGQL(&want)
		set.MarshalGQL(&got)
		if got.String() != want.String() {
			t.Errorf("fields %q: Set wrote %s, FieldSet %s", aliases, got.String(), want.String())
		}
	}
}
