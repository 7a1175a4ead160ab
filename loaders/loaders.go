// Package loaders holds one request's dataloaders: posts, profiles, live
// sessions, post counters, follower counts and the viewer's flags (likes,
// favorites, follows, and how each user relates to the viewer: blocks,
// mutes, hides). Loads made while a batch is open are read together in one
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
	"sync"
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
// for the viewer the Loaders were made for. Each loader is made on first
// use: most operations need two or three of them.
type Loaders struct {
	svc    *feedcore.Service
	viewer ID
	wait   time.Duration

	posts       lazy[*feedcore.Post]
	users       lazy[*feedcore.User]
	live        lazy[*feedcore.LiveSession]
	postCounts  lazy[feedcore.PostCounts]
	graphCounts lazy[feedcore.GraphCounts]
	liked       lazy[bool]
	reposted    lazy[bool]
	following   lazy[bool]
	relations   lazy[feedcore.RelationFlags]
	favorited   lazy[bool]
}

// Option tunes Loaders.
type Option func(*options)

type options struct{ wait time.Duration }

// WithWait sets how long a batch stays open; default Wait.
func WithWait(d time.Duration) Option { return func(o *options) { o.wait = d } }

// New returns fresh loaders over svc for viewer (0: anonymous).
func New(svc *feedcore.Service, viewer ID, opts ...Option) *Loaders {
	return &Loaders{svc: svc, viewer: viewer, wait: optionsOf(opts).wait}
}

func optionsOf(opts []Option) options {
	o := options{wait: Wait}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// lazy is a loader made on first use by get, and the values primed into
// it. Primed values are kept in a plain map consulted before the loader
// (a primed key never reaches it): priming a page's worth of values then
// costs a map entry each, not a cached thunk each in a loader that may
// never fetch anything.
type lazy[V any] struct {
	once sync.Once
	ld   *dataloadgen.Loader[ID, V]

	mu     sync.Mutex
	primed map[ID]V
}

// get returns z's loader, making it the first time over read, a batch
// read of l's service (values in the order of ids).
func (z *lazy[V]) get(l *Loaders, read func(l *Loaders, ctx context.Context, ids []ID) ([]V, error)) *dataloadgen.Loader[ID, V] {
	z.once.Do(func() {
		z.ld = dataloadgen.NewMappedLoader(func(ctx context.Context, ids []ID) (map[ID]V, error) {
			vs, err := read(l, ctx, ids)
			if err != nil {
				return nil, err
			}
			m := make(map[ID]V, len(ids))
			for i, id := range ids {
				m[id] = vs[i]
			}
			return m, nil
		}, dataloadgen.WithWait(l.wait))
	})
	return z.ld
}

// lookup returns the value primed for id, if any.
func (z *lazy[V]) lookup(id ID) (V, bool) {
	z.mu.Lock()
	v, ok := z.primed[id]
	z.mu.Unlock()
	return v, ok
}

// prime stores vs for ids (of equal length), replacing what was loaded
// or primed before.
func (z *lazy[V]) prime(ids []ID, vs []V) {
	if len(ids) == 0 {
		return
	}
	z.mu.Lock()
	for i, id := range ids {
		z.put(id, vs[i], len(ids))
	}
	z.mu.Unlock()
}

// put stores v for id, making the map (for about n values) on first use;
// z.mu must be held.
func (z *lazy[V]) put(id ID, v V, n int) {
	if z.primed == nil {
		z.primed = make(map[ID]V, n)
	}
	z.primed[id] = v
}

// forget drops what was primed for id.
func (z *lazy[V]) forget(id ID) {
	z.mu.Lock()
	delete(z.primed, id)
	z.mu.Unlock()
}

// The loaders, each over its batch read.
func (l *Loaders) postsLoader() *dataloadgen.Loader[ID, *feedcore.Post] {
	return l.posts.get(l, func(l *Loaders, ctx context.Context, ids []ID) ([]*feedcore.Post, error) {
		return l.svc.CachedPosts(ctx, ids)
	})
}

func (l *Loaders) usersLoader() *dataloadgen.Loader[ID, *feedcore.User] {
	return l.users.get(l, func(l *Loaders, ctx context.Context, ids []ID) ([]*feedcore.User, error) {
		return l.svc.Users(ctx, ids)
	})
}

func (l *Loaders) liveLoader() *dataloadgen.Loader[ID, *feedcore.LiveSession] {
	return l.live.get(l, func(l *Loaders, ctx context.Context, ids []ID) ([]*feedcore.LiveSession, error) {
		return l.svc.LiveSessions(ctx, ids)
	})
}

func (l *Loaders) postCountsLoader() *dataloadgen.Loader[ID, feedcore.PostCounts] {
	return l.postCounts.get(l, func(l *Loaders, ctx context.Context, ids []ID) ([]feedcore.PostCounts, error) {
		return l.svc.PostCounts(ctx, ids)
	})
}

func (l *Loaders) graphCountsLoader() *dataloadgen.Loader[ID, feedcore.GraphCounts] {
	return l.graphCounts.get(l, func(l *Loaders, ctx context.Context, ids []ID) ([]feedcore.GraphCounts, error) {
		return l.svc.Counts(ctx, ids)
	})
}

func (l *Loaders) likedLoader() *dataloadgen.Loader[ID, bool] {
	return l.liked.get(l, func(l *Loaders, ctx context.Context, ids []ID) ([]bool, error) {
		return l.svc.Liked(ctx, l.viewer, ids)
	})
}

func (l *Loaders) repostedLoader() *dataloadgen.Loader[ID, bool] {
	return l.reposted.get(l, func(l *Loaders, ctx context.Context, ids []ID) ([]bool, error) {
		return l.svc.Reposted(ctx, l.viewer, ids)
	})
}

func (l *Loaders) followingLoader() *dataloadgen.Loader[ID, bool] {
	return l.following.get(l, func(l *Loaders, ctx context.Context, ids []ID) ([]bool, error) {
		return l.svc.IsFollowing(ctx, l.viewer, ids)
	})
}

func (l *Loaders) relationsLoader() *dataloadgen.Loader[ID, feedcore.RelationFlags] {
	return l.relations.get(l, func(l *Loaders, ctx context.Context, ids []ID) ([]feedcore.RelationFlags, error) {
		return l.svc.RelationFlags(ctx, l.viewer, ids)
	})
}

func (l *Loaders) favoritedLoader() *dataloadgen.Loader[ID, bool] {
	return l.favorited.get(l, func(l *Loaders, ctx context.Context, ids []ID) ([]bool, error) {
		return l.svc.Favorited(ctx, l.viewer, ids)
	})
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

// Future is a value asked of a loader: Get returns it, waiting for its
// batch unless it was primed. Asking for every value an object shows
// first and getting them after puts them all in the same batches, one
// round trip per kind, as concurrent field resolvers would.
type Future[V any] struct {
	v  V
	th func() (V, error)
}

// Ready is a future holding v, known without a read.
func Ready[V any](v V) Future[V] { return Future[V]{v: v} }

// Get returns the value: dataloadgen's not-found is the zero value (no
// fetch here leaves a key out, but a panic recovered by the loader might).
func (f Future[V]) Get() (V, error) {
	if f.th == nil {
		return f.v, nil
	}
	v, err := f.th()
	if errors.Is(err, dataloadgen.ErrNotFound) {
		var zero V
		return zero, nil
	}
	return v, err
}

// start returns the value primed for id, else asks the loader for it.
func start[V any](ctx context.Context, l *Loaders, z *lazy[V], of func(*Loaders) *dataloadgen.Loader[ID, V], id ID) Future[V] {
	if v, ok := z.lookup(id); ok {
		return Future[V]{v: v}
	}
	return Future[V]{th: of(l).LoadThunk(ctx, id)}
}

// Post returns a post (a tombstone has Deleted set), nil when none exists.
func (l *Loaders) Post(ctx context.Context, id ID) (*feedcore.Post, error) {
	return l.StartPost(ctx, id).Get()
}

// StartPost asks for a post: Get returns nil when none exists.
func (l *Loaders) StartPost(ctx context.Context, id ID) Future[*feedcore.Post] {
	return start(ctx, l, &l.posts, (*Loaders).postsLoader, id)
}

// User returns a profile, nil when none exists.
func (l *Loaders) User(ctx context.Context, id ID) (*feedcore.User, error) {
	return l.StartUser(ctx, id).Get()
}

// StartUser asks for a profile: Get returns nil when none exists.
func (l *Loaders) StartUser(ctx context.Context, id ID) Future[*feedcore.User] {
	return start(ctx, l, &l.users, (*Loaders).usersLoader, id)
}

// LiveSession returns a live session, nil when none exists.
func (l *Loaders) LiveSession(ctx context.Context, id ID) (*feedcore.LiveSession, error) {
	return start(ctx, l, &l.live, (*Loaders).liveLoader, id).Get()
}

// PostCounts asks for a post's counters.
func (l *Loaders) PostCounts(ctx context.Context, post ID) Future[feedcore.PostCounts] {
	return start(ctx, l, &l.postCounts, (*Loaders).postCountsLoader, post)
}

// GraphCounts asks for a user's follower and following counts.
func (l *Loaders) GraphCounts(ctx context.Context, user ID) Future[feedcore.GraphCounts] {
	return start(ctx, l, &l.graphCounts, (*Loaders).graphCountsLoader, user)
}

// Liked asks whether the viewer likes post; false when anonymous.
func (l *Loaders) Liked(ctx context.Context, post ID) Future[bool] {
	if l.viewer == 0 {
		return Future[bool]{}
	}
	return start(ctx, l, &l.liked, (*Loaders).likedLoader, post)
}

// Reposted asks whether the viewer reposts post; false when anonymous.
func (l *Loaders) Reposted(ctx context.Context, post ID) Future[bool] {
	if l.viewer == 0 {
		return Future[bool]{}
	}
	return start(ctx, l, &l.reposted, (*Loaders).repostedLoader, post)
}

// Favorited asks whether the viewer has favorited post; false when
// anonymous.
func (l *Loaders) Favorited(ctx context.Context, post ID) Future[bool] {
	if l.viewer == 0 {
		return Future[bool]{}
	}
	return start(ctx, l, &l.favorited, (*Loaders).favoritedLoader, post)
}

// Following asks whether the viewer follows user; false when anonymous
// and for the viewer's own profile.
func (l *Loaders) Following(ctx context.Context, user ID) Future[bool] {
	if l.viewer == 0 || l.viewer == user {
		return Future[bool]{}
	}
	return start(ctx, l, &l.following, (*Loaders).followingLoader, user)
}

// Relation asks how user relates to the viewer (blocks either way, the
// viewer's mute and its end, the viewer's hide); the zero value when
// anonymous and for the viewer's own profile.
func (l *Loaders) Relation(ctx context.Context, user ID) Future[feedcore.RelationFlags] {
	if l.viewer == 0 || l.viewer == user {
		return Future[feedcore.RelationFlags]{}
	}
	return start(ctx, l, &l.relations, (*Loaders).relationsLoader, user)
}

// PrimePosts records posts already read.
func (l *Loaders) PrimePosts(ps ...*feedcore.Post) {
	primeEach(&l.posts, ps, func(p *feedcore.Post) ID { return p.ID })
}

// PrimeUsers records profiles already read.
func (l *Loaders) PrimeUsers(us ...*feedcore.User) {
	primeEach(&l.users, us, func(u *feedcore.User) ID { return u.ID })
}

// PrimeLiveSessions records sessions already read.
func (l *Loaders) PrimeLiveSessions(ls ...*feedcore.LiveSession) {
	primeEach(&l.live, ls, func(s *feedcore.LiveSession) ID { return s.ID })
}

// primeEach primes z with the non-nil values of vs, each under its id.
func primeEach[V any](z *lazy[*V], vs []*V, id func(*V) ID) {
	z.mu.Lock()
	defer z.mu.Unlock()
	for _, v := range vs {
		if v != nil {
			z.put(id(v), v, len(vs))
		}
	}
}

// PrimeLike records a post's counters and whether the viewer likes it, as
// a like or unlike just left them.
func (l *Loaders) PrimeLike(post ID, c feedcore.PostCounts, liked bool) {
	l.postCounts.prime([]ID{post}, []feedcore.PostCounts{c})
	l.liked.prime([]ID{post}, []bool{liked})
}

// PrimeReposted records whether the viewer reposts post, as a repost or
// its undoing just left it; the post's counters are read again.
func (l *Loaders) PrimeReposted(post ID, reposted bool) {
	l.reposted.prime([]ID{post}, []bool{reposted})
	l.postCounts.forget(post)
	l.postCountsLoader().Clear(post)
}

// PrimeFavorite records a post's counters and whether the viewer has
// favorited it, as a favorite or unfavorite just left them.
func (l *Loaders) PrimeFavorite(post ID, c feedcore.PostCounts, favorited bool) {
	l.postCounts.prime([]ID{post}, []feedcore.PostCounts{c})
	l.favorited.prime([]ID{post}, []bool{favorited})
}

// PrimeFollowing records whether the viewer follows users, as the caller
// already knows it.
func (l *Loaders) PrimeFollowing(following bool, users ...ID) {
	l.following.mu.Lock()
	defer l.following.mu.Unlock()
	for _, id := range users {
		l.following.put(id, following, len(users))
	}
}

// ForgetUsers drops what was loaded of users' counts, of whether the
// viewer follows them and of how they relate to the viewer, after a
// follow, unfollow, block, mute or hide changed them (a block removes
// follows too).
func (l *Loaders) ForgetUsers(ids ...ID) {
	for _, id := range ids {
		l.graphCounts.forget(id)
		l.following.forget(id)
		l.relations.forget(id)
		l.graphCountsLoader().Clear(id)
		l.followingLoader().Clear(id)
		l.relationsLoader().Clear(id)
	}
}

// HydrateUnprimed is Hydrate of what req names that the loaders do not
// hold yet (an earlier Hydrate in the request, such as a feed page's
// Alongside, may have read it all): nothing is read when they hold it
// all.
func (l *Loaders) HydrateUnprimed(ctx context.Context, req feedcore.HydrateRequest) error {
	req.Counts, req.Liked, req.Reposted = unprimed(&l.postCounts, req.Counts), unprimed(&l.liked, req.Liked), unprimed(&l.reposted, req.Reposted)
	req.Users, req.Posts, req.GraphCounts = unprimed(&l.users, req.Users), unprimed(&l.posts, req.Posts), unprimed(&l.graphCounts, req.GraphCounts)
	req.Following, req.Relations, req.Favorited = unprimed(&l.following, req.Following), unprimed(&l.relations, req.Relations), unprimed(&l.favorited, req.Favorited)
	if len(req.Counts)+len(req.Liked)+len(req.Reposted)+len(req.Users)+len(req.Posts)+len(req.GraphCounts)+
		len(req.Following)+len(req.Relations)+len(req.Favorited) == 0 {
		return nil
	}
	return l.Hydrate(ctx, req)
}

// unprimed is ids less those primed in z: ids itself when none is (a
// warm page's hydration, every call).
func unprimed[V any](z *lazy[V], ids []ID) []ID {
	z.mu.Lock()
	defer z.mu.Unlock()
	for i, id := range ids {
		if _, ok := z.primed[id]; ok {
			out := ids[:i:i] // appending copies: ids stays the caller's
			for _, id := range ids[i+1:] {
				if _, ok := z.primed[id]; !ok {
					out = append(out, id)
				}
			}
			return out
		}
	}
	return ids
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
	l.postCounts.prime(req.Counts, h.Counts)
	l.liked.prime(req.Liked, h.Liked)
	l.reposted.prime(req.Reposted, h.Reposted)
	l.users.prime(req.Users, h.Users)
	l.posts.prime(req.Posts, h.Posts)
	l.graphCounts.prime(req.GraphCounts, h.GraphCounts)
	l.following.prime(req.Following, h.Following)
	l.relations.prime(req.Relations, h.Relations)
	l.favorited.prime(req.Favorited, h.Favorited)
	return nil
}
