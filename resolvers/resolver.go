// Package resolvers implements the GraphQL schema over feedcore. Resolvers
// stay thin: decode arguments, call the domain, shape the result. Errors
// are *apierr.Error values; the server's error presenter turns them into
// GraphQL errors with extensions.code.
package resolvers

import (
	"context"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
)

// DefaultWriteTimeout bounds a mutation's writes when
// Resolver.WriteTimeout is zero.
const DefaultWriteTimeout = 10 * time.Second

// Resolver is the root of the resolver tree; one serves every request.
type Resolver struct {
	Svc *feedcore.Service
	// WriteTimeout bounds a mutation's writes, which do not end with
	// the request (see write); default DefaultWriteTimeout.
	WriteTimeout time.Duration

	// The type resolvers, made once: gqlgen asks for one per field.
	query       *queryResolver
	mutation    *mutationResolver
	post        *postResolver
	user        *userResolver
	liveSession *liveSessionResolver
}

// New returns the resolver root over svc.
func New(svc *feedcore.Service) *Resolver {
	r := &Resolver{Svc: svc}
	r.query, r.mutation, r.post = &queryResolver{r}, &mutationResolver{r}, &postResolver{r}
	r.user, r.liveSession = &userResolver{r}, &liveSessionResolver{r}
	return r
}

// Config returns the gqlgen configuration wiring r into the executable schema.
func (r *Resolver) Config() graph.Config { return graph.Config{Resolvers: r} }

func (r *Resolver) Query() graph.QueryResolver {
	if r.query == nil { // a root built without New
		return &queryResolver{r}
	}
	return r.query
}

func (r *Resolver) Mutation() graph.MutationResolver {
	if r.mutation == nil {
		return &mutationResolver{r}
	}
	return r.mutation
}

func (r *Resolver) Post() graph.PostResolver {
	if r.post == nil {
		return &postResolver{r}
	}
	return r.post
}

func (r *Resolver) User() graph.UserResolver {
	if r.user == nil {
		return &userResolver{r}
	}
	return r.user
}

func (r *Resolver) LiveSession() graph.LiveSessionResolver {
	if r.liveSession == nil {
		return &liveSessionResolver{r}
	}
	return r.liveSession
}

type (
	queryResolver       struct{ *Resolver }
	mutationResolver    struct{ *Resolver }
	postResolver        struct{ *Resolver }
	userResolver        struct{ *Resolver }
	liveSessionResolver struct{ *Resolver }
)

// write runs a mutation's writes (fn) under a context of their own: the
// request's values, without its cancellation, and with WriteTimeout. A
// client that goes away, or a request timeout, must not stop writes
// halfway: a post stored but not queued for fan-out, a follow counted on
// one side only. Reads that shape the payload afterwards use the
// request's context.
func (r *Resolver) write(ctx context.Context, fn func(context.Context) error) error {
	d := r.WriteTimeout
	if d <= 0 {
		d = DefaultWriteTimeout
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	defer cancel()
	return fn(wctx)
}
