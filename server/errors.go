package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/reqinfo"
	"github.com/feedd/feedd/server/extension"
)

// unavailableMessage is all a client learns when Redis is down: the cause
// is for the logs, the advice is for the client.
const unavailableMessage = "the store is unavailable, retry later"

// presentError gives every GraphQL error an extensions.code from the
// brief's list and makes sure nothing internal reaches the client:
//
//   - a *apierr.Error is shown as is (its message is written for clients);
//   - gqlgen's parse and validation failures become BAD_USER_INPUT with
//     gqlgen's message, which points at the mistake in the document;
//   - an unreachable store is UNAVAILABLE with a fixed message;
//   - anything else is INTERNAL, logged with the request id the message quotes.
//
// It is where the code of nearly every error is decided, so it reports it
// to the request's Outcome (for the metrics and the access log).
func presentError(log *slog.Logger) graphql.ErrorPresenterFunc {
	return func(ctx context.Context, err error) *gqlerror.Error {
		out := present(ctx, log, err)
		code, _ := out.Extensions["code"].(string)
		reqinfo.OutcomeOf(ctx).AddCode(code)
		return out
	}
}

func present(ctx context.Context, log *slog.Logger, err error) *gqlerror.Error {
	out := clone(graphql.DefaultErrorPresenter(ctx, err))
	var fe *apierr.Error
	if errors.As(err, &fe) {
		if fe.Code == apierr.RateLimited && fe.RetryAfter > 0 {
			// A refusal of a resolver's own allowance (report): the hint
			// every refusal carries (extension.refusal), HTTP 429 too.
			reqinfo.OutcomeOf(ctx).SetRetryAfter(fe.RetryAfter)
			out = withCode(out, fe.Code, fe.Message)
			out.Extensions["retryAfterMs"] = fe.RetryAfter.Milliseconds()
			return out
		}
		return withCode(out, fe.Code, fe.Message)
	}
	var internalPanic *panicError
	if !errors.As(err, &internalPanic) && out.Err == nil {
		// Raised by gqlgen, a scalar or an extension, not by a resolver.
		code, _ := out.Extensions["code"].(string)
		switch {
		case code == errcode.ValidationFailed || code == errcode.ParseFailed:
			return withCode(out, apierr.BadInput, out.Message)
		case isKnownCode(code):
			return out
		case len(out.Path) == 0:
			// Request-level: an undecodable body, an unknown operation
			// name, a complexity limit. The client sent something wrong.
			return withCode(out, apierr.BadInput, out.Message)
		}
	}
	id := reqinfo.Of(ctx).RequestID
	if feedcore.CodeOf(err) == apierr.Unavailable {
		log.WarnContext(ctx, "graphql: store unavailable", "request", id, "path", out.Path.String(), "err", err)
		return withCode(out, apierr.Unavailable, unavailableMessage)
	}
	log.ErrorContext(ctx, "graphql: internal error", "request", id, "path", out.Path.String(), "err", err)
	return withCode(out, apierr.Internal, fmt.Sprintf("internal error (request %s)", id))
}

// panicError is a resolver panic turned into an error by recoverPanic.
type panicError struct{ value any }

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// recoverPanic logs a resolver panic with its stack and lets the presenter
// report it as INTERNAL; the rest of the response is still served.
func recoverPanic(log *slog.Logger) graphql.RecoverFunc {
	return func(ctx context.Context, v any) error {
		log.ErrorContext(ctx, "graphql: panic", "request", reqinfo.Of(ctx).RequestID, "panic", v, "stack", string(debug.Stack()))
		return &panicError{value: v}
	}
}

// knownCodes are the codes an error raised outside the resolvers keeps:
// the brief's list, and PERSISTED_QUERY_NOT_FOUND, which Apollo-style
// clients look for to resend a hash-only request with its query text.
var knownCodes = map[apierr.Code]bool{
	apierr.Unauthenticated: true, apierr.Forbidden: true, apierr.NotFound: true,
	apierr.BadInput: true, apierr.InvalidCursor: true, apierr.CursorExpired: true,
	apierr.FollowLimit: true, apierr.RateLimited: true, apierr.Unavailable: true,
	apierr.Internal: true, extension.CodePersistedQueryNotFound: true,
}

func isKnownCode(code string) bool { return knownCodes[apierr.Code(code)] }

// clone copies e so that setting a code never edits an error gqlgen shares
// (validation errors live in the query cache).
func clone(e *gqlerror.Error) *gqlerror.Error {
	c := *e
	c.Extensions = maps.Clone(e.Extensions)
	return &c
}

func withCode(e *gqlerror.Error, code apierr.Code, msg string) *gqlerror.Error {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = string(code)
	e.Message = msg
	// Err is not serialised, but drop it anyway: what the client gets is
	// exactly what this function decided.
	e.Err = nil
	return e
}
