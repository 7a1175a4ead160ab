package server

import (
	"net/http"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/resolvers"
)

// graphqlHandler serves /query: POST with a JSON body for everything, GET
// for queries only (gqlgen's GET transport refuses mutations), so GETs
// stay safe to cache and to retry.
func graphqlHandler(cfg Config) http.Handler {
	srv := handler.New(graph.NewExecutableSchema(resolvers.New(cfg.Service).Config()))
	srv.AddTransport(transport.Options{AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodOptions}})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	// Parsed and validated documents are reused: clients send the same few
	// operations over and over.
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	srv.Use(extension.Introspection{})
	srv.SetErrorPresenter(presentError(cfg.Logger))
	srv.SetRecoverFunc(recoverPanic(cfg.Logger))
	return srv
}
