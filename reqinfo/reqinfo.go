// Package reqinfo carries what every layer knows of a request through its
// context. Facts: who the caller is, from which address, on which device,
// and the request's id. They enter the context once, at the edge (the HTTP
// middleware; a WebSocket's connection_init for subscriptions), and are
// read from it everywhere else: no resolver or extension reads a header.
// Outcome: what became of the request (its error codes, a wait before a
// retry, the operation it ran), told by whoever decided it. The package
// sits beneath the server, its extensions and the resolvers, so all of
// them import it without a cycle.
package reqinfo

import (
	"context"

	"github.com/feedd/feedd/auth"
)

// Facts are what is known of a request before any of it runs.
type Facts struct {
	// RequestID names the request in logs and in the message of an
	// INTERNAL error.
	RequestID string
	// ClientAddr is the client's address as the per-address limits key it:
	// an IPv4 address, or the /64 network of an IPv6 one; "unknown" when
	// there is none.
	ClientAddr string
	// Identity is who the caller authenticated as (auth.Resolve).
	Identity auth.Identity
	// Device names the caller's device (an app install, a browser): each
	// device of a viewer keeps a live feed snapshot of its own. Optional;
	// see feedcore.LiveRequest.Device for what it may hold.
	Device string
}

// info is what a request's context carries: one value, set once.
type info struct {
	facts   Facts
	outcome *Outcome
}

type infoKey struct{}

// With returns ctx carrying f, and the request's Outcome: ctx's own when
// it has one (facts learned later, as from a WebSocket's connection_init,
// replace the first ones for the same request), else a new one. It is a
// plain function, not a middleware, so that code which learns the facts
// elsewhere than from HTTP headers sets them the same way.
func With(ctx context.Context, f Facts) context.Context {
	in := &info{facts: f, outcome: OutcomeOf(ctx)}
	if in.outcome == nil {
		in.outcome = &Outcome{}
	}
	return context.WithValue(ctx, infoKey{}, in)
}

// WithOutcome returns ctx carrying its facts and a new Outcome: for each
// operation of a connection that runs many (a WebSocket), so that what
// became of each is told apart, and one connection's outcomes do not pile
// up for as long as it stays open.
func WithOutcome(ctx context.Context) context.Context {
	return context.WithValue(ctx, infoKey{}, &info{facts: Of(ctx), outcome: &Outcome{}})
}

// Of returns the facts ctx carries; the zero Facts (an anonymous caller,
// no address, no id) outside a request.
func Of(ctx context.Context) Facts {
	if in := infoOf(ctx); in != nil {
		return in.facts
	}
	return Facts{}
}

func infoOf(ctx context.Context) *info {
	in, _ := ctx.Value(infoKey{}).(*info)
	return in
}

// Viewer is the signed-in viewer's database id, 0 for an anonymous
// caller or one whose credentials were refused.
func Viewer(ctx context.Context) uint64 { return Of(ctx).Identity.ViewerID }
