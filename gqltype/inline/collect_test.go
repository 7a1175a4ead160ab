package inline

import (
	"slices"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

var postTypes = []string{"Post", "Node"}

// operation is query parsed once, as the executor's query cache keeps it,
// in an operation context with vars.
func operation(t *testing.T, query string) func(vars map[string]any) *graphql.OperationContext {
	t.Helper()
	s := gqlparser.MustLoadSchema(&ast.Source{Input: schema})
	doc, err := gqlparser.LoadQueryWithRules(s, query, nil)
	if err != nil {
		t.Fatalf("query %s: %v", query, err)
	}
	return func(vars map[string]any) *graphql.OperationContext {
		return &graphql.OperationContext{RawQuery: query, Doc: doc, Operation: doc.Operations[0], Variables: vars}
	}
}

func names(fs []graphql.CollectedField) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Alias+":"+f.Name)
	}
	return out
}

// TestCollectFieldsKeptAcrossRequests: a selection whose directives name
// no variable is collected once for every request of its query, with
// gqlgen's fields, and so are the selections of its fields' objects.
func TestCollectFieldsKeptAcrossRequests(t *testing.T) {
	for _, query := range []string{
		`{ feed { id text author { handle } } }`,
		`{ feed { id ...P ... on Post @include(if: true) { media { url } } } } fragment P on Post { text author { handle } }`,
		`{ feed { id t: text @skip(if: false) } }`,
	} {
		op := operation(t, query)
		var first [][]graphql.CollectedField
		for req := range 3 {
			oc := op(nil)
			feed := CollectFields(oc, oc.Operation.SelectionSet, nil)
			post := CollectFields(oc, feed[0].Selections, postTypes)
			want := graphql.CollectFields(op(nil), oc.Operation.SelectionSet[0].(*ast.Field).SelectionSet, postTypes)
			if !slices.Equal(names(post), names(want)) {
				t.Fatalf("%s: fields %v, gqlgen collects %v", query, names(post), names(want))
			}
			if req == 0 {
				first = [][]graphql.CollectedField{feed, post}
				continue
			}
			if &feed[0] != &first[0][0] || &post[0] != &first[1][0] {
				t.Errorf("%s: request %d collected its fields anew", query, req)
			}
		}
	}
}

// TestCollectFieldsPerRequestWithVariables: a selection whose directives
// name a variable, its own or a fragment's, is collected per request, by
// that request's variables.
func TestCollectFieldsPerRequestWithVariables(t *testing.T) {
	for _, query := range []string{
		`query($v: Boolean!) { feed { id text @include(if: $v) } }`,
		`query($v: Boolean!) { feed { id ... on Post @include(if: $v) { text } } }`,
		`query($v: Boolean!) { feed { id ...P } } fragment P on Post { text @include(if: $v) }`,
		`query($v: Boolean!) { feed { id ...P @include(if: $v) } } fragment P on Post { text }`,
	} {
		op := operation(t, query)
		for _, v := range []bool{true, false, true} {
			oc := op(map[string]any{"v": v})
			feed := CollectFields(oc, oc.Operation.SelectionSet, nil)
			post := CollectFields(oc, feed[0].Selections, postTypes)
			want := []string{"id:id"}
			if v {
				want = append(want, "text:text")
			}
			if !slices.Equal(names(post), want) {
				t.Errorf("%s with v=%v: fields %v, want %v", query, v, names(post), want)
			}
		}
	}
}
