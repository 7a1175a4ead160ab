// Package extension holds feedd's gqlgen extensions, the steps an
// operation passes between its arrival and its resolvers: automatic
// persisted queries and the allow-list, the depth and introspection
// limits, the cost limit (complexity, mutation count, rate limit), and the
// operation names known for metric labels. The server installs them in
// order (server/graphql.go). They read the request's facts, and report
// what they decide, through package reqinfo.
package extension

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/reqinfo"
)

// The hooks of each extension: one missing would never run, silently.
var (
	_ paramMutator   = APQSizeLimit{}
	_ paramMutator   = PersistedOnly{}
	_ contextMutator = DepthLimit{}
	_ contextMutator = NoIntrospection{}
	_ contextMutator = CostLimit{}
	_ contextMutator = APQRegister{}

	_ graphql.OperationInterceptor = CostLimit{}
)

type (
	paramMutator interface {
		graphql.HandlerExtension
		graphql.OperationParameterMutator
	}
	contextMutator interface {
		graphql.HandlerExtension
		graphql.OperationContextMutator
	}
)

// anySchema gives the extensions that embed it gqlgen's Validate hook:
// they work with any schema.
type anySchema struct{}

func (anySchema) Validate(graphql.ExecutableSchema) error { return nil }

// CodedError is a request-level refusal with an extensions.code.
func CodedError(code apierr.Code, format string, args ...any) *gqlerror.Error {
	return &gqlerror.Error{
		Message:    fmt.Sprintf(format, args...),
		Extensions: map[string]any{"code": string(code)},
	}
}

// stepShare is the part of a request's remaining time that one step in
// front of the operation (rate limit, APQ lookup or registration) may take.
// A step that may fail open must not eat the whole budget: with a silent
// store the operation itself still gets the time to report UNAVAILABLE
// (gqlgen answers a bare null once the request's deadline has passed).
const stepShare = 4

// stepContext bounds a pre-operation step to 1/stepShare of what is left of
// ctx's deadline.
func stepContext(ctx context.Context) (context.Context, context.CancelFunc) {
	dl, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, time.Until(dl)/stepShare)
}

// logStoreError logs a store failure that a step tolerates (the rate
// limiter, APQ): a Warn when the store is unavailable (feedcore.CodeOf, the
// one classifier), an Error when it answered something unexpected.
func logStoreError(ctx context.Context, log *slog.Logger, msg string, err error) {
	if feedcore.CodeOf(err) == apierr.Unavailable {
		log.WarnContext(ctx, msg, "request", reqinfo.Of(ctx).RequestID, "err", err)
		return
	}
	log.ErrorContext(ctx, msg, "request", reqinfo.Of(ctx).RequestID, "err", err)
}

// ReplaceAnswer is an operation's answer replaced by the one error e,
// made without the error presenter: it reports e's code as the request's
// only one, the answer it replaces being dropped with its errors.
func ReplaceAnswer(ctx context.Context, e *gqlerror.Error) *graphql.Response {
	code, _ := e.Extensions["code"].(string)
	reqinfo.OutcomeOf(ctx).ReplaceCodes(code)
	return &graphql.Response{Errors: gqlerror.List{e}}
}
