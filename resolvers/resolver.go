// Package resolvers implements the GraphQL schema over feedcore. Resolvers
// stay thin: decode arguments, call the domain, shape the result. Errors
// are *apierr.Error values; the server's error presenter turns them into
// GraphQL errors with extensions.code.
package resolvers

import (
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/graph"
)

// DefaultWriteTimeout bounds a mutation's writes when
// Resolver.WriteTimeout is zero.
const DefaultWriteTimeout = 10 * time.Second

// Resolver is the root of the resolver tree; one serves every request.
// Build it with New.
type Resolver struct {
	Svc *feedcore.Service
	// WriteTimeout bounds a mutation's writes, which do not end with
	// the request (see mutate); default DefaultWriteTimeout.
	WriteTimeout time.Duration
	// ReportLimit is each viewer's allowance of reports (zero Rate: none).
	ReportLimit feedcore.RateLimit

	// The type resolvers, made once: gqlgen asks for one per field. Only
	// the fields gqlgen.yml leaves to resolvers (the paged lists and
	// a keyword filter's id) have one; the rest read views (gqltype/view).
	query    *queryResolver
	mutation *mutationResolver
	sub      *subscriptionResolver
	post     *postResolver
	user     *userResolver
	filter   *keywordFilterResolver
}

// New returns the resolver root over svc.
func New(svc *feedcore.Service) *Resolver {
	r := &Resolver{Svc: svc}
	r.query, r.mutation, r.sub = &queryResolver{r}, &mutationResolver{r}, &subscriptionResolver{r}
	r.post, r.user, r.filter = &postResolver{r}, &userResolver{r}, &keywordFilterResolver{}
	return r
}

// Config returns the gqlgen configuration wiring r into the executable schema.
func (r *Resolver) Config() graph.Config { return graph.Config{Resolvers: r} }

// The type resolvers gqlgen asks for, once per field: the ones New made.
func (r *Resolver) Query() graph.QueryResolver       { return r.query }
func (r *Resolver) Mutation() graph.MutationResolver { return r.mutation }
func (r *Resolver) Subscription() graph.SubscriptionResolver {
	return r.sub
}
func (r *Resolver) Post() graph.PostResolver { return r.post }
func (r *Resolver) User() graph.UserResolver { return r.user }
func (r *Resolver) KeywordFilter() graph.KeywordFilterResolver {
	return r.filter
}

type (
	queryResolver         struct{ *Resolver }
	mutationResolver      struct{ *Resolver }
	subscriptionResolver  struct{ *Resolver }
	postResolver          struct{ *Resolver }
	userResolver          struct{ *Resolver }
	keywordFilterResolver struct{}
)
