// Package resolvers implements the GraphQL schema over feedcore. Resolvers
// stay thin: decode arguments, call the domain, shape the result. Errors
// are *apierr.Error values; the server's error presenter turns them into
// GraphQL errors with extensions.code.
package resolvers

import (
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/gqltype"
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

	// The type resolvers, made once: gqlgen asks for one per field.
	query       *queryResolver
	mutation    *mutationResolver
	post        *postResolver
	user        *userResolver
	liveSession *liveSessionResolver
	filter      *keywordFilterResolver
}

// New returns the resolver root over svc.
func New(svc *feedcore.Service) *Resolver {
	r := &Resolver{Svc: svc}
	r.query, r.mutation = &queryResolver{r}, &mutationResolver{r}
	r.post = &postResolver{r, nodeIDs[feedcore.Post]{gqltype.Post, func(p *feedcore.Post) feedcore.ID { return p.ID }}}
	r.user = &userResolver{r, nodeIDs[feedcore.User]{gqltype.User, func(u *feedcore.User) feedcore.ID { return u.ID }}}
	r.liveSession = &liveSessionResolver{r, nodeIDs[feedcore.LiveSession]{gqltype.LiveSession,
		func(l *feedcore.LiveSession) feedcore.ID { return l.ID }}}
	r.filter = &keywordFilterResolver{nodeIDs[feedcore.KeywordFilter]{gqltype.KeywordFilter,
		func(f *feedcore.KeywordFilter) feedcore.ID { return f.ID }}}
	return r
}

// Config returns the gqlgen configuration wiring r into the executable schema.
func (r *Resolver) Config() graph.Config { return graph.Config{Resolvers: r} }

// The type resolvers gqlgen asks for, once per field: the ones New made.
func (r *Resolver) Query() graph.QueryResolver             { return r.query }
func (r *Resolver) Mutation() graph.MutationResolver       { return r.mutation }
func (r *Resolver) Post() graph.PostResolver               { return r.post }
func (r *Resolver) User() graph.UserResolver               { return r.user }
func (r *Resolver) LiveSession() graph.LiveSessionResolver { return r.liveSession }
func (r *Resolver) KeywordFilter() graph.KeywordFilterResolver {
	return r.filter
}

type (
	queryResolver    struct{ *Resolver }
	mutationResolver struct{ *Resolver }
	postResolver     struct {
		*Resolver
		nodeIDs[feedcore.Post]
	}
	userResolver struct {
		*Resolver
		nodeIDs[feedcore.User]
	}
	liveSessionResolver struct {
		*Resolver
		nodeIDs[feedcore.LiveSession]
	}
	keywordFilterResolver struct {
		nodeIDs[feedcore.KeywordFilter]
	}
)
