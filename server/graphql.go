package server

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	gqlextension "github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/graph"
	"github.com/feedd/feedd/loaders"
	"github.com/feedd/feedd/reqinfo"
	"github.com/feedd/feedd/resolvers"
	"github.com/feedd/feedd/roundtrip"
	"github.com/feedd/feedd/server/extension"
)

// graphqlHandler serves /query: POST with a JSON body for everything, GET
// for queries only (gqlgen's GET transport refuses mutations), so GETs
// stay safe to cache and to retry. In front of gqlgen, guard applies CORS,
// the content-type rule and the body limit; inside, before any resolver
// runs, an operation passes the persisted-query step, the token limit
// (parsing), validation, then the depth and introspection limits and the
// cost limit (complexity, mutation count, rate limit), in that order; an
// APQ registration is stored only after all of them. A request refused on
// the way still spends the base cost (extension.ChargeRefusals).
func graphqlHandler(cfg Config) http.Handler {
	api := cfg.APIConfig.withDefaults()
	return guard(api, newGraphQLServer(cfg, api))
}

func newGraphQLServer(cfg Config, api APIConfig) *handler.Server {
	known := extension.NewKnownOps(cfg.DevAuth, api.PersistedOnly)
	root := resolvers.New(cfg.Service)
	root.WriteTimeout = cfg.WriteTimeout
	root.ReportLimit = api.ReportLimit
	gc := root.Config()
	gc.Complexity = complexityRoot()
	es := graph.NewExecutableSchema(gc)
	srv := handler.New(es)
	srv.AddTransport(transport.Options{AllowedMethods: []string{http.MethodGet, http.MethodPost, http.MethodOptions}})
	allowance := extension.Allowance{Service: cfg.Service, Viewer: api.RateLimit, Anonymous: api.AnonRateLimit,
		BaseCost: api.RequestBaseCost, Logger: cfg.Logger}
	srv.AddTransport(extension.ChargeRefusals{Transport: transport.GET{}, Allowance: allowance})
	srv.AddTransport(extension.ChargeRefusals{Transport: extension.POST{}, Allowance: allowance})
	// Parsed and validated documents are reused: clients send the same few
	// operations over and over.
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	if api.MaxTokens > 0 {
		srv.SetParserTokenLimit(api.MaxTokens)
	}
	var apq *extension.APQCache
	switch {
	case api.PersistedOnly != nil:
		srv.Use(extension.PersistedOnly{ByHash: api.PersistedOnly})
	case !api.DisableAPQ:
		apq = extension.NewAPQCache(cfg.Service, api.APQTTL, cfg.Logger)
		srv.Use(extension.APQSizeLimit{Max: api.APQMaxBytes})
		srv.Use(gqlextension.AutomaticPersistedQuery{Cache: apq})
	}
	if api.MaxDepth > 0 {
		srv.Use(extension.DepthLimit{Max: api.MaxDepth})
	}
	if api.DisableIntrospection {
		srv.Use(extension.NoIntrospection{})
	} else {
		srv.Use(gqlextension.Introspection{})
	}
	srv.Use(extension.CostLimit{Schema: es, MaxComplexity: api.MaxComplexity, MaxMutations: api.MaxMutations,
		Allowance: allowance})
	if apq != nil { // last: only documents that passed everything are kept
		srv.Use(extension.APQRegister{Cache: apq, Service: cfg.Service, Limit: api.APQRegisterLimit, Known: known, Logger: cfg.Logger})
	}
	srv.SetErrorPresenter(presentError(cfg.Logger))
	srv.SetRecoverFunc(recoverPanic(cfg.Logger))
	srv.AroundOperations(perOperation(cfg, known))
	return srv
}

// perOperation gives each operation its dataloaders and a Redis round-trip
// counter, and records the round trips it cost under its type and name
// (known names only; others under otherOperation).
func perOperation(cfg Config, known *extension.KnownOps) graphql.OperationMiddleware {
	reg := cfg.Metrics
	if reg == nil {
		reg = NewMetrics()
	}
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		trips := roundtrip.FromContext(ctx)
		if trips == nil { // outside observeQuery (tests)
			ctx, trips = roundtrip.NewContext(ctx)
		}
		ctx = loaders.NewContext(ctx, loaders.New(cfg.Service, reqinfo.Viewer(ctx)))
		op := graphql.GetOperationContext(ctx)
		typ, name := "", op.OperationName
		if op.Operation != nil {
			typ = string(op.Operation.Operation)
			if name == "" { // a document's only operation, named in it
				name = op.Operation.Name
			}
		}
		name = known.Label(name)
		respond := next(ctx)
		var once sync.Once
		answered := false
		return func(ctx context.Context) *graphql.Response {
			resp := respond(ctx)
			if resp == nil && !answered && ctx.Err() != nil {
				// gqlgen answers nothing (the body "null") for an operation
				// whose context ended before it ran: say why, with a code.
				resp = extension.ReplaceAnswer(ctx, timedOut(ctx))
			}
			answered = true
			once.Do(func() {
				n := trips.Trips()
				reg.observeOperation(typ, name, n)
				reqinfo.OutcomeOf(ctx).RanOperation(reqinfo.Operation{Type: typ, Name: name, Trips: n})
				cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "graphql operation",
					slog.String("request_id", reqinfo.Of(ctx).RequestID), slog.String("type", typ),
					slog.String("operation", name), slog.Int("redis_round_trips", n))
			})
			return resp
		}
	}
}

// timedOut is the error of an operation whose request ran out of time
// (--request-timeout) before it could run: UNAVAILABLE, which clients
// already retry, rather than gqlgen's bare null.
func timedOut(ctx context.Context) *gqlerror.Error {
	msg := "the request took longer than the server allows; retry later"
	if errors.Is(ctx.Err(), context.Canceled) {
		msg = "the request was cancelled"
	}
	return extension.CodedError(apierr.Unavailable, "%s", msg)
}
