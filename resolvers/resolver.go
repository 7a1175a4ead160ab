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
}

// New returns the resolver root over svc.
func New(svc *feedcore.Service) *Resolver { return &Resolver{Svc: svc} }

// Config returns the gqlgen configuration wiring r into the executable schema.
func (r *Resolver) Config() graph.Config { return graph.Config{Resolvers: r} }

func (r *Resolver) Query() graph.QueryResolver       { return &queryResolver{r} }
func (r *Resolver) Mutation() graph.MutationResolver { return &mutationResolver{r} }
func (r *Resolver) Post() graph.PostResolver         { return &postResolver{r} }
func (r *Resolver) User() graph.UserResolver         { return &userResolver{r} }
func (r *Resolver) LiveSession() graph.LiveSessionResolver {
	return &liveSessionResolver{r}
}

type (
	queryResolver       struct{ *Resolver }
	mutationResolver    struct{ *Resolver }
	postResolver        struct{ *Resolver }
	userResolver        struct{ *Resolver }
	liveSessionResolver struct{ *Resolver }
)
