// Package loaders holds one request's dataloaders: posts, profiles, live
// sessions, post counters, follower counts and the viewer's flags (likes,
// follows). Loads made while a batch is open are read together in one
// pipelined round trip per kind, and each key is read once per request.
//
// A feed page is hydrated without waiting for batches at all: the feed
// resolver primes the loaders with the items it read and with Hydrate,
// which reads everything the page shows in one round trip; the field
// resolvers then find their values already loaded.
package loaders

import (
	"context"
	"errors"
	"time"

	"github.com/vikstrous/dataloadgen"

	"github.com/feedd/feedd/feedcore"
)

// Wait is how long a batch stays open for more keys after its first. Field
// resolvers of one object or list run concurrently and reach their loaders
// within microseconds; a longer wait only adds latency.
const Wait = 200 * time.Microsecond

type ID = feedcore.ID

// Loaders are one request's dataloaders. Viewer-specific loaders answer
// for the viewer the Loaders were made for.
type Loaders struct {
	svc    *feedcore.Service
	viewer ID

	posts       *dataloadgen.Loader[ID, *feedcore.Post]
	users       *dataloadgen.Loader[ID, *feedcore.User]
	live        *dataloadgen.Loader[ID, *feedcore.LiveSession]
	postCounts  *dataloadgen.Loader[ID, feedcore.PostCounts]
	graphCounts *dataloadgen.Loader[ID, feedcore.GraphCounts]
	liked       *dataloadgen.Loader[ID, bool]
	following   *dataloadgen.Loader[ID, bool]
}

// Option tunes Loaders.
type Option func(*options)

type options struct{ wait time.Duration }

// WithWait sets how long a batch stays open; default Wait.
func WithWait(d time.Duration) Option { return func(o *options) { o.wait = d } }

// New returns fresh loaders over svc for viewer (0: anonymous).
func New(svc *feedcore.Service, viewer ID, opts ...Option) *Loaders {
	o := options{wait: Wait}
	for _, f := range opts {
		f(&o)
	}
	l := &Loaders{svc: svc, viewer: viewer}
	opt := dataloadgen.WithWait(o.wait)
	l.posts = dataloadgen.NewMappedLoader(byID(svc.CachedPosts), opt)
	l.users = dataloadgen.NewMappedLoader(byID(svc.Users), opt)
	l.live = dataloadgen.NewMappedLoader(byID(svc.LiveSessions), opt)
	l.postCounts = dataloadgen.NewMappedLoader(byID(svc.PostCounts), opt)
	l.graphCounts = dataloadgen.NewMappedLoader(byID(svc.Counts), opt)
	l.liked = dataloadgen.NewMappedLoader(byID(func(ctx context.Context, ids []ID) ([]bool, error) {
		return svc.Liked(ctx, viewer, ids)
	}), opt)
	l.following = dataloadgen.NewMappedLoader(byID(func(ctx context.Context, ids []ID) ([]bool, error) {
		return svc.IsFollowing(ctx, viewer, ids)
	}), opt)
	return l
}

// byID turns a feedcore batch read (values in the order of ids) into a
// mapped fetch.
func byID[V any](read func(context.Context, []ID) ([]V, error)) func(context.Context, []ID) (map[ID]V, error) {
	return func(ctx context.Context, ids []ID) (map[ID]V, error) {
		vs, err := read(ctx, ids)
		if err != nil {
			return nil, err
		}
		m := make(map[ID]V, len(ids))
		for i, id := range ids {
			m[id] = vs[i]
		}
		return m, nil
	}
}

type ctxKey struct{}

// NewContext returns ctx carrying l.
func NewContext(ctx context.Context, l *Loaders) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// FromContext returns ctx's loaders, or nil.
func FromContext(ctx context.Context) *Loaders {
	l, _ := ctx.Value(ctxKey{}).(*Loaders)
	return l
}

// Viewer is the viewer the loaders answer for.
func (l *Loaders) Viewer() ID { return l.viewer }

// load is Load with dataloadgen's not-found mapped to the zero value (no
// fetch here leaves a key out, but a panic recovered by the loader might).
func load[V any](ctx context.Context, ld *dataloadgen.Loader[ID, V], id ID) (V, error) {
	v, err := ld.Load(ctx, id)
	if errors.Is(err, dataloadgen.ErrNotFound) {
		var zero V
		return zero, nil
	}
	return v, err
}

// Post returns a post (a tombstone has Deleted set), nil when none exists.
func (l *Loaders) Post(ctx context.Context, id ID) (*feedcore.Post, error) {
	return load(ctx, l.posts, id)
}

// User returns a profile, nil when none exists.
func (l *Loaders) User(ctx context.Context, id ID) (*feedcore.User, error) {
	return load(ctx, l.users, id)
}

// LiveSession returns a live session, nil when none exists.
func (l *Loaders) LiveSession(ctx context.Context, id ID) (*feedcore.LiveSession, error) {
	return load(ctx, l.live, id)
}

// PostCounts returns a post's counters.
func (l *Loaders) PostCounts(ctx context.Context, post ID) (feedcore.PostCounts, error) {
	return load(ctx, l.postCounts, post)
}

// GraphCounts returns a user's follower and following counts.
func (l *Loaders) GraphCounts(ctx context.Context, user ID) (feedcore.GraphCounts, error) {
	return load(ctx, l.graphCounts, user)
}

// Liked reports whether the viewer likes post; false when anonymous.
func (l *Loaders) Liked(ctx context.Context, post ID) (bool, error) {
	if l.viewer == 0 {
		return false, nil
	}
	return load(ctx, l.liked, post)
}

// Following reports whether the viewer follows user; false when anonymous
// and for the viewer's own profile.
func (l *Loaders) Following(ctx context.Context, user ID) (bool, error) {
	if l.viewer == 0 || l.viewer == user {
		return false, nil
	}
	return load(ctx, l.following, user)
}

// prime stores v for id, replacing what was loaded before.
func prime[V any](ld *dataloadgen.Loader[ID, V], id ID, v V) {
	ld.Clear(id)
	ld.Prime(id, v)
}

// PrimePosts records posts already read.
func (l *Loaders) PrimePosts(ps ...*feedcore.Post) {
	for _, p := range ps {
		if p != nil {
			prime(l.posts, p.ID, p)
		}
	}
}

// PrimeUsers records profiles already read.
func (l *Loaders) PrimeUsers(us ...*feedcore.User) {
	for _, u := range us {
		if u != nil {
			prime(l.users, u.ID, u)
		}
	}
}

// PrimeLiveSessions records sessions already read.
func (l *Loaders) PrimeLiveSessions(ls ...*feedcore.LiveSession) {
	for _, s := range ls {
		if s != nil {
			prime(l.live, s.ID, s)
		}
	}
}

// PrimeLike records a post's counters and whether the viewer likes it, as
// a like or unlike just left them.
func (l *Loaders) PrimeLike(post ID, c feedcore.PostCounts, liked bool) {
	prime(l.postCounts, post, c)
	prime(l.liked, post, liked)
}

// ForgetUsers drops what was loaded of users' counts and of whether the
// viewer follows them, after a follow or unfollow changed them.
func (l *Loaders) ForgetUsers(ids ...ID) {
	for _, id := range ids {
		l.graphCounts.Clear(id)
		l.following.Clear(id)
	}
}

// Hydrate reads everything req names in one round trip (see
// feedcore.Service.Hydrate) and primes the loaders with it. req.Viewer is
// set to the loaders' viewer.
func (l *Loaders) Hydrate(ctx context.Context, req feedcore.HydrateRequest) error {
	req.Viewer = l.viewer
	h, err := l.svc.Hydrate(ctx, req)
	if err != nil {
		return err
	}
	for i, id := range req.Counts {
		prime(l.postCounts, id, h.Counts[i])
	}
	for i, id := range req.Liked {
		prime(l.liked, id, h.Liked[i])
	}
	for i, id := range req.Users {
		prime(l.users, id, h.Users[i])
	}
	for i, id := range req.GraphCounts {
		prime(l.graphCounts, id, h.GraphCounts[i])
	}
	for i, id := range req.Following {
		prime(l.following, id, h.Following[i])
	}
	return nil
}
