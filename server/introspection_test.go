package server

import (
	"os"
	"strings"
	"testing"
)

// TestSchemaFetchPassesTheDefaultLimits: the introspection query GraphiQL
// and graphql-codegen send (graphql-js's getIntrospectionQuery with every
// option, in testdata) passes the default limits and returns the schema,
// while the same depth outside introspection is still refused.
func TestSchemaFetchPassesTheDefaultLimits(t *testing.T) {
	q, err := os.ReadFile("testdata/introspection.graphql")
	if err != nil {
		t.Fatal(err)
	}
	e := newAPIEnv(t, APIConfig{})
	e.users("ann")
	r := e.do(1, string(q), nil)
	if len(r.Errors) > 0 || !strings.Contains(string(r.Data), `"queryType":{"name":"Query"`) {
		t.Fatalf("introspection: status %d, errors %+v, data %.200s", r.Status, r.Errors, r.Data)
	}
	deep := "{ __schema { types { fields { type { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { ofType { name } } } } } } } } } } } } } } } } } } } } } } } } }"
	if r := e.do(1, deep, nil); r.code() != "BAD_USER_INPUT" {
		t.Fatalf("introspection 26 deep: %+v, want BAD_USER_INPUT", r.Errors)
	}
}
