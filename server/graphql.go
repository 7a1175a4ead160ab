package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

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
// stay safe to cache and to retry; subscriptions over a WebSocket
// (graphql-transport-ws) or server-sent events (a POST with Accept:
// text/event-stream), see streams.go. In front of gqlgen, guard applies CORS,
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
	// gqlgen serves a request with the first transport that supports it:
	// the WebSocket upgrade (a GET with Upgrade, which GET leaves), and
	// SSE (a POST with Accept: text/event-stream) before POST, which
	// would take it too.
	l := api.Streams.withDefaults(api.MaxBodyBytes)
	srv.AddTransport(extension.ChargeRefusals{Transport: newWebsocket(cfg, api, cfg.Connections), Allowance: allowance})
	srv.AddTransport(extension.ChargeRefusals{Transport: sseTransport{SSE: transport.SSE{KeepAlivePingInterval: l.PingInterval},
		conns: cfg.Connections, limits: l, m: cfg.Metrics}, Allowance: allowance})
	srv.AddTransport(extension.ChargeRefusals{Transport: transport.GET{}, Allowance: allowance})
	srv.AddTransport(extension.ChargeRefusals{Transport: extension.POST{}, Allowance: allowance})
	// Parsed and validated documents are reused: clients send the same few
	// operations over and over.
	srv.SetQueryCache(lru.New[*ast.QueryDocument](queryCacheSize))
	if api.MaxTokens > 0 {
		srv.SetParserTokenLimit(api.MaxTokens)
	}
	var apq *extension.APQCache
	switch {
	case api.PersistedOnly != nil:
		use(srv, extension.PersistedOnly{ByHash: api.PersistedOnly})
	case !api.DisableAPQ:
		apq = extension.NewAPQCache(cfg.Service, api.APQTTL, cfg.Logger)
		use(srv, extension.APQSizeLimit{Max: api.APQMaxBytes})
		use(srv, gqlextension.AutomaticPersistedQuery{Cache: apq})
	}
	if api.MaxDepth > 0 {
		use(srv, extension.DepthLimit{Max: api.MaxDepth})
	}
	if api.DisableIntrospection {
		use(srv, extension.NoIntrospection{})
	} else {
		use(srv, gqlextension.Introspection{})
	}
	use(srv, extension.CostLimit{Schema: es, MaxComplexity: api.MaxComplexity, MaxMutations: api.MaxMutations,
		Allowance: allowance, Cache: extension.NewCostCache(queryCacheSize)})
	if apq != nil { // last: only documents that passed everything are kept
		use(srv, extension.APQRegister{Cache: apq, Service: cfg.Service, Limit: api.APQRegisterLimit, Known: known, Logger: cfg.Logger})
	}
	srv.SetErrorPresenter(presentError(cfg.Logger))
	srv.SetRecoverFunc(recoverPanic(cfg.Logger))
	srv.AroundOperations(perOperation(cfg, known))
	return srv
}

// queryCacheSize is how many parsed and validated documents are kept, and
// as many operations' prices (extension.CostCache).
const queryCacheSize = 1000

// perOperation gives each operation its dataloaders and a Redis round-trip
// counter, and records the round trips it cost under its type and name
// (known names only; others under otherOperation). An operation on a
// WebSocket, one of many on its connection, gets a round-trip counter and
// an outcome of its own, and is observed as a request (operation.observe);
// a query or mutation on a stream gets the request timeout, which
// observeQuery leaves out of a stream. A subscription takes its own path
// (subscriptionOp).
func perOperation(cfg Config, known *extension.KnownOps) graphql.OperationMiddleware {
	reg := cfg.Metrics
	if reg == nil {
		reg = NewMetrics()
	}
	timeout := requestTimeout(cfg)
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		o := newOperation(ctx, known)
		ctx, o.trips = o.counted(ctx)
		if o.typ == string(ast.Subscription) {
			return subscriptionOp{operation: o, cfg: cfg, reg: reg}.run(ctx, next)
		}
		if o.stream != "" {
			parent := ctx
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, timeout)
			// Not at the answer: the steps around this one (the cost's
			// settling) still use the context then. Its parent, the
			// operation's, ends with it (gqlgen cancels it).
			context.AfterFunc(parent, cancel)
		}
		ctx = loaders.NewContext(ctx, loaders.New(cfg.Service, reqinfo.Viewer(ctx)))
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
				o.ran(ctx, cfg.Logger, reg)
				o.observe(ctx, cfg.Logger, reg)
			})
			return resp
		}
	}
}

// operation is what perOperation knows of one operation.
type operation struct {
	typ, name string
	// stream is the transport of the stream the operation runs on, ""
	// for a plain request.
	stream string
	start  time.Time
	trips  *roundtrip.Counter
}

func newOperation(ctx context.Context, known *extension.KnownOps) operation {
	op := graphql.GetOperationContext(ctx)
	o := operation{name: op.OperationName, stream: streamOf(ctx).Transport(), start: time.Now()}
	if op.Operation != nil {
		o.typ = string(op.Operation.Operation)
		if o.name == "" { // a document's only operation, named in it
			o.name = op.Operation.Name
		}
	}
	o.name = known.Label(o.name)
	return o
}

// counted is ctx with the operation's round-trip counter: on a WebSocket
// a new one (with an outcome of its own), else the request's.
func (o operation) counted(ctx context.Context) (context.Context, *roundtrip.Counter) {
	if o.stream == transportWebsocket {
		return roundtrip.NewContext(reqinfo.WithOutcome(ctx))
	}
	if trips := roundtrip.FromContext(ctx); trips != nil {
		return ctx, trips
	}
	return roundtrip.NewContext(ctx) // outside observeQuery (tests)
}

// ran records the round trips the operation cost so far.
func (o operation) ran(ctx context.Context, log *slog.Logger, reg *Metrics) {
	n := o.trips.Trips()
	reg.observeOperation(o.typ, o.name, n)
	reqinfo.OutcomeOf(ctx).RanOperation(reqinfo.Operation{Type: o.typ, Name: o.name, Trips: n})
	log.LogAttrs(ctx, slog.LevelDebug, "graphql operation",
		slog.String("request_id", reqinfo.Of(ctx).RequestID), slog.String("type", o.typ),
		slog.String("operation", o.name), slog.Int("redis_round_trips", n))
}

// observe records an operation on a WebSocket as observeQuery records a
// request: its latency (not a subscription's: it lasts as long as the
// client wants) and error codes, and a log line. Other operations are
// their request's.
func (o operation) observe(ctx context.Context, log *slog.Logger, reg *Metrics) {
	if o.stream != transportWebsocket {
		return
	}
	codes := reqinfo.OutcomeOf(ctx).Codes()
	d := time.Since(o.start)
	if o.typ == string(ast.Subscription) {
		reg.observeErrors(o.typ, o.name, codes)
	} else {
		reg.observeRequest(o.typ, o.name, d, codes)
	}
	attrs := []slog.Attr{
		slog.String("request_id", reqinfo.Of(ctx).RequestID),
		slog.String("transport", o.stream),
		slog.String("type", o.typ),
		slog.String("operation", o.name),
		slog.Duration("duration", d),
	}
	if v := reqinfo.Viewer(ctx); v != 0 {
		attrs = append(attrs, slog.String("viewer", strconv.FormatUint(v, 10)))
	}
	if len(codes) > 0 {
		attrs = append(attrs, slog.Any("error_codes", codes))
	}
	log.LogAttrs(ctx, slog.LevelInfo, "operation", attrs...)
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

// use adds an extension to srv, and refuses one that would intercept
// fields: the executor marshals plain leaves straight from their values
// (tools/gqlgen), past any field middleware, which would then see only
// some of the fields.
func use(srv *handler.Server, ext graphql.HandlerExtension) {
	if _, ok := ext.(graphql.FieldInterceptor); ok {
		panic(fmt.Sprintf("server: %T intercepts fields, which the generated executor passes by for plain leaves (see tools/gqlgen)", ext))
	}
	srv.Use(ext)
}
