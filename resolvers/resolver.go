// Package resolvers implements the GraphQL schema over feedcore. Resolvers
// stay thin: decode arguments, call the domain, shape the result. Errors
// are *feedcore.Error values; the server's error presenter turns them into
// GraphQL errors with extensions.code.
package resolvers

import (
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
)

// Resolver is the root of the resolver tree; one serves every request.
type Resolver struct {
	Svc *feedcore.Service

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
