package server

import (
	"context"
	"testing"

	"github.com/99designs/gqlgen/complexity"
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/reqinfo"
	"github.com/feedd/feedd/server/extension"
)

// TestCostCache: with its cache, the cost limit prices an operation as
// complexity.Calculate does for the same variable values, whatever it
// priced before (the page size is a variable: 10 and 20 cost apart).
func TestCostCache(t *testing.T) {
	es := graph.NewExecutableSchema(graph.Config{Complexity: complexityRoot()})
	doc := gqlparser.MustLoadQueryWithRules(es.Schema(), hydratedPage, nil)
	op := doc.Operations[0]
	cached := extension.CostLimit{Schema: es, Cache: extension.NewCostCache(10)}
	prices := map[int]int{}
	for _, raw := range []map[string]any{
		{"first": 10}, {"first": 20}, {"first": 10}, {}, {"first": nil}, {"first": 20, "after": "x"},
		{"first": 20, "after": nil}, {"first": 20},
	} {
		vars, err := validator.VariableValues(es.Schema(), op, raw)
		if err != nil {
			t.Fatal(err)
		}
		ctx := reqinfo.With(context.Background(), reqinfo.Facts{})
		oc := &graphql.OperationContext{Doc: doc, Operation: op, Variables: vars, Stats: graphql.Stats{}}
		if err := cached.MutateOperationContext(ctx, oc); err != nil {
			t.Fatal(err)
		}
		got, want := reqinfo.OutcomeOf(ctx).Operation().Cost, complexity.Calculate(ctx, es, op, vars)
		if got != want {
			t.Errorf("%v: priced %d, want %d", raw, got, want)
		}
		if f, ok := raw["first"].(int); ok && raw["after"] == nil {
			prices[f] = got
		}
	}
	if prices[10] == prices[20] {
		t.Errorf("pages of 10 and 20 cost alike: %v", prices)
	}
}
