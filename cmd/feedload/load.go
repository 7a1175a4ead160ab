package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/server"
)

// loadConfig is the workload.
type loadConfig struct {
	URL         string
	Users       int // viewers are ids 1..Users
	Concurrency int
	Duration    time.Duration
	Pages       int     // deepest page of a scroll
	PageSize    int     // first/last of a page
	WriteRatio  float64 // writes per read
	LagSamples  int
	LagTimeout  time.Duration // longest wait for a sample; 0: 30s
	// Backlog, when set, reads the fan-out backlog (events and tasks not
	// yet done), reported at the start and the end of the run.
	Backlog  func(context.Context) (int64, error)
	Seed     uint64
	Secret   []byte       // mint bearer tokens; nil: X-Viewer-Id
	HTTP     *http.Client // nil: one with a connection per client
	Progress io.Writer    // status line; nil: none
}

// The operations, as the report names them.
const (
	opFeed        = "followingFeed"         // first page
	opFeedScroll  = "followingFeed.scroll"  // first/after endCursor
	opFeedRefresh = "followingFeed.refresh" // last/before startCursor
	opLive        = "liveFeed"
	opLiveScroll  = "liveFeed.scroll"
	opPublish     = "publishPost"
	opLike        = "likePost"
	opFollow      = "followUser"
	opUnfollow    = "unfollowUser"
)

var allOps = []string{opFeed, opFeedScroll, opFeedRefresh, opLive, opLiveScroll, opPublish, opLike, opFollow, opUnfollow}

func isWrite(op string) bool {
	switch op {
	case opPublish, opLike, opFollow, opUnfollow:
		return true
	}
	return false
}

// opStats is one worker's record of one operation.
type opStats struct {
	lat    []time.Duration // successful calls
	errors map[string]int  // by extensions.code
}

// worker is one concurrent client.
type worker struct {
	cfg     *loadConfig
	r       *rand.Rand
	stats   map[string]*opStats
	clients *clients
	ops     *atomic.Int64
	errs    *atomic.Int64
	seen    []string // post ids from the last feed page, for likes
	follows [][2]string
}

// clients hands out a typed client per viewer, minting tokens once.
type clients struct {
	cfg    *loadConfig
	http   *http.Client
	shared *tokens
}

type tokens struct {
	mu  sync.Mutex
	tok map[int]string
}

// deviceTransport sends X-Device-Id, so each worker is a device of its
// own: a viewer's live snapshots are kept one per device, and a worker's
// first page must not replace the snapshot another is scrolling.
type deviceTransport struct {
	base   http.RoundTripper
	device string
}

func (t deviceTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set(server.DeviceHeader, t.device)
	return t.base.RoundTrip(req)
}

// device returns the clients as a device of their own.
func (c *clients) device(name string) *clients {
	hc := *c.http
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = deviceTransport{base: base, device: name}
	return &clients{cfg: c.cfg, http: &hc, shared: c.shared}
}

func (c *clients) as(id int) (graphql.Client, error) {
	a := client.Auth{ViewerID: strconv.Itoa(id)}
	if c.cfg.Secret != nil {
		ts := c.shared
		ts.mu.Lock()
		t, ok := ts.tok[id]
		if !ok {
			var err error
			if t, err = auth.Mint(c.cfg.Secret, uint64(id), 24*time.Hour); err != nil {
				ts.mu.Unlock()
				return nil, err
			}
			ts.tok[id] = t
		}
		ts.mu.Unlock()
		a = client.Auth{Token: t}
	}
	return client.New(c.cfg.URL, a, c.http), nil
}

// errorCode names err for the report: its extensions.code, TRANSPORT for a
// failure without a GraphQL answer, NO_CODE for an error without a code.
func errorCode(err error) string {
	if client.Errors(err) == nil {
		return "TRANSPORT"
	}
	if c := client.ErrorCode(err); c != "" {
		return c
	}
	return "NO_CODE"
}

// call runs one operation and records it, unless the run was over when it
// failed (the deadline cut it short: no verdict on the server).
func (w *worker) call(ctx context.Context, op string, f func() error) bool {
	start := time.Now()
	err := f()
	d := time.Since(start)
	if err != nil && ctx.Err() != nil {
		return false
	}
	s := w.stats[op]
	if s == nil {
		s = &opStats{errors: map[string]int{}}
		w.stats[op] = s
	}
	w.ops.Add(1)
	if err != nil {
		s.errors[errorCode(err)]++
		w.errs.Add(1)
		return false
	}
	s.lat = append(s.lat, d)
	return true
}

func (w *worker) viewer() int { return w.r.IntN(w.cfg.Users) + 1 }

// run repeats sessions until ctx ends: a viewer scrolls the following feed
// a few pages deep and may pull to refresh, or opens the live feed and
// scrolls it; after each read, a write with probability WriteRatio.
func (w *worker) run(ctx context.Context) {
	for ctx.Err() == nil {
		v := w.viewer()
		c, err := w.clients.as(v)
		if err != nil {
			return
		}
		if w.r.IntN(4) < 3 {
			w.feedSession(ctx, c, v)
		} else {
			w.liveSession(ctx, c, v)
		}
	}
}

func (w *worker) afterRead(ctx context.Context, c graphql.Client, v int) {
	if w.cfg.WriteRatio > 0 && w.r.Float64() < w.cfg.WriteRatio && ctx.Err() == nil {
		w.write(ctx, c, v)
	}
}

func (w *worker) feedSession(ctx context.Context, c graphql.Client, v int) {
	size := w.cfg.PageSize
	var first *client.FollowingFeedResponse
	if !w.call(ctx, opFeed, func() (err error) {
		first, err = client.FollowingFeed(ctx, c, &size, nil, nil, nil)
		return err
	}) {
		return
	}
	w.remember(first)
	w.afterRead(ctx, c, v)
	page := first
	depth := 1 + w.r.IntN(w.cfg.Pages)
	for i := 1; i < depth && page.FollowingFeed.PageInfo.HasNextPage && ctx.Err() == nil; i++ {
		after := page.FollowingFeed.PageInfo.EndCursor
		if !w.call(ctx, opFeedScroll, func() (err error) {
			page, err = client.FollowingFeed(ctx, c, &size, after, nil, nil)
			return err
		}) {
			return
		}
		w.afterRead(ctx, c, v)
	}
	if before := first.FollowingFeed.PageInfo.StartCursor; before != nil && w.r.IntN(2) == 0 && ctx.Err() == nil {
		if w.call(ctx, opFeedRefresh, func() error {
			_, err := client.FollowingFeed(ctx, c, nil, nil, &size, before)
			return err
		}) {
			w.afterRead(ctx, c, v)
		}
	}
}

func (w *worker) remember(p *client.FollowingFeedResponse) {
	w.seen = w.seen[:0]
	for _, e := range p.FollowingFeed.Edges {
		w.seen = append(w.seen, e.Node.Id)
	}
}

func (w *worker) liveSession(ctx context.Context, c graphql.Client, v int) {
	size := w.cfg.PageSize
	var page *client.LiveFeedResponse
	if !w.call(ctx, opLive, func() (err error) {
		page, err = client.LiveFeed(ctx, c, &size, nil)
		return err
	}) {
		return
	}
	w.afterRead(ctx, c, v)
	depth := 1 + w.r.IntN(w.cfg.Pages)
	for i := 1; i < depth && page.LiveFeed.PageInfo.HasNextPage && ctx.Err() == nil; i++ {
		after := page.LiveFeed.PageInfo.EndCursor
		if !w.call(ctx, opLiveScroll, func() (err error) {
			page, err = client.LiveFeed(ctx, c, &size, after)
			return err
		}) {
			return
		}
		w.afterRead(ctx, c, v)
	}
}

// write is one mutation by viewer v: a like of a post it just saw, a
// publish, a follow, or the undoing of an earlier follow (so the graph
// stays the size it was built).
func (w *worker) write(ctx context.Context, c graphql.Client, v int) {
	switch k := w.r.IntN(10); {
	case k < 4 && len(w.seen) > 0:
		id := w.seen[w.r.IntN(len(w.seen))]
		w.call(ctx, opLike, func() error { _, err := client.LikePost(ctx, c, id); return err })
	case k < 6 && len(w.follows) > 0:
		f := w.follows[0]
		w.follows = w.follows[1:]
		fc, err := w.clients.as(atoi(f[0]))
		if err != nil {
			return
		}
		w.call(ctx, opUnfollow, func() error { _, err := client.UnfollowUser(ctx, fc, f[1]); return err })
	case k < 8:
		target := w.viewer()
		if target == v {
			return
		}
		if w.call(ctx, opFollow, func() error { _, err := client.FollowUser(ctx, c, userNodeID(target)); return err }) {
			w.follows = append(w.follows, [2]string{strconv.Itoa(v), userNodeID(target)})
		}
	default:
		w.call(ctx, opPublish, func() error {
			_, err := client.PublishPost(ctx, c, client.PublishPostInput{Text: "feedload post from u" + strconv.Itoa(v)})
			return err
		})
	}
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func userNodeID(id int) string { return gqltype.Encode(gqltype.User, uint64(id)) }

// runLoad runs the workload and the fan-out lag probe for cfg.Duration and
// fills rep.
func runLoad(ctx context.Context, cfg loadConfig, rep *Report) error {
	hc := cfg.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			MaxIdleConns: 2 * cfg.Concurrency, MaxIdleConnsPerHost: 2 * cfg.Concurrency, IdleConnTimeout: time.Minute}}
	}
	cl := &clients{cfg: &cfg, http: hc, shared: &tokens{tok: map[int]string{}}}
	// Fail fast on a server that is not there or refuses us.
	probe, err := cl.as(1)
	if err != nil {
		return err
	}
	if _, err := client.Viewer(ctx, probe); err != nil {
		return fmt.Errorf("feedd at %s: %w (is it running, with --dev-auth or --jwt-secret?)", cfg.URL, err)
	}

	if cfg.Backlog != nil {
		rep.BacklogStart, _ = cfg.Backlog(ctx)
	}
	rctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	var ops, errs atomic.Int64
	workers := make([]*worker, cfg.Concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range workers {
		w := &worker{cfg: &cfg, r: rand.New(rand.NewPCG(cfg.Seed, uint64(i)+1)), stats: map[string]*opStats{},
			clients: cl.device(fmt.Sprintf("feedload-%d", i)), ops: &ops, errs: &errs}
		workers[i] = w
		wg.Go(func() { w.run(rctx) })
	}
	var lag LagReport
	wg.Go(func() { lag = probeLag(rctx, cl.device("feedload-lag"), cfg) })
	p := newProgress(cfg.Progress)
	wg.Go(func() {
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-rctx.Done():
				return
			case <-t.C:
				p.update(func() string {
					el := time.Since(start)
					n := ops.Load()
					return fmt.Sprintf("load: %v of %v, %d operations (%.0f/s), %d errors",
						el.Round(time.Second), cfg.Duration, n, float64(n)/el.Seconds(), errs.Load())
				})
			}
		}
	})
	wg.Wait()
	p.done()
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return err
	}

	rep.URL, rep.Users, rep.Concurrency, rep.Seconds = cfg.URL, cfg.Users, cfg.Concurrency, elapsed.Seconds()
	rep.Errors = map[string]int{}
	for _, name := range allOps {
		o := OpReport{Name: name, Errors: map[string]int{}}
		var lat []time.Duration
		for _, w := range workers {
			if s := w.stats[name]; s != nil {
				lat = append(lat, s.lat...)
				for c, n := range s.errors {
					o.Errors[c] += n
					o.ErrorCount += n
					rep.Errors[c] += n
				}
			}
		}
		o.Count = len(lat) + o.ErrorCount
		o.PerSecond = float64(o.Count) / elapsed.Seconds()
		slices.Sort(lat)
		o.P50, o.P95, o.P99 = ms(quantile(lat, 0.50)), ms(quantile(lat, 0.95)), ms(quantile(lat, 0.99))
		if isWrite(name) {
			rep.Writes += o.Count
		} else {
			rep.Reads += o.Count
		}
		rep.Ops = append(rep.Ops, o)
	}
	rep.PerSecond = float64(rep.Reads+rep.Writes) / elapsed.Seconds()
	if cfg.Backlog != nil {
		rep.BacklogEnd, _ = cfg.Backlog(ctx)
	}
	rep.FanoutLag = lag
	return nil
}

// quantile of sorted durations (nearest rank); 0 for none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// probeLag measures fan-out lag LagSamples times, spread over the run: it
// picks the most followed of a few random accounts as the author, has a
// random user follow it (so that user is a follower, wherever it falls in
// the fan-out's id order), publishes as the author, and polls the
// follower's first page until the post shows.
func probeLag(ctx context.Context, cl *clients, cfg loadConfig) LagReport {
	var rep LagReport
	if cfg.LagSamples <= 0 {
		return rep
	}
	r := rand.New(rand.NewPCG(cfg.Seed, 0x1a9))
	as := func(id int) graphql.Client { c, _ := cl.as(id); return c }
	author, followers := 0, -1
	for range 20 {
		id := r.IntN(cfg.Users) + 1
		u, err := client.User(ctx, as(id), "u"+strconv.Itoa(id))
		if err == nil && u.User != nil && u.User.FollowerCount > followers {
			author, followers = id, u.User.FollowerCount
		}
	}
	if author == 0 {
		return rep
	}
	rep.Author, rep.Followers = "u"+strconv.Itoa(author), followers
	gap := cfg.Duration / time.Duration(cfg.LagSamples+1)
	timeout := cfg.LagTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	var lags []time.Duration
	for i := 0; i < cfg.LagSamples; i++ {
		select {
		case <-ctx.Done():
		case <-time.After(gap / 2):
		}
		if ctx.Err() != nil {
			break
		}
		f := r.IntN(cfg.Users) + 1
		if f == author {
			continue
		}
		fc := as(f)
		if _, err := client.FollowUser(ctx, fc, userNodeID(author)); err != nil {
			continue
		}
		post, err := client.PublishPost(ctx, as(author), client.PublishPostInput{Text: "feedload fan-out probe"})
		if err != nil {
			continue
		}
		published := time.Now()
		id := post.PublishPost.Post.Id
		one := 5
		seen := false
		for !seen && ctx.Err() == nil && time.Since(published) < timeout {
			page, err := client.FollowingFeed(ctx, fc, &one, nil, nil, nil)
			if err == nil {
				for _, e := range page.FollowingFeed.Edges {
					seen = seen || e.Node.Id == id
				}
			}
			if !seen {
				time.Sleep(2 * time.Millisecond)
			}
		}
		switch {
		case seen:
			lags = append(lags, time.Since(published))
		case ctx.Err() == nil: // a sample the run's end cut short is no verdict
			rep.Timeouts++
		}
		select {
		case <-ctx.Done():
		case <-time.After(gap / 2):
		}
	}
	slices.Sort(lags)
	rep.Samples = len(lags)
	rep.P50, rep.Max = ms(quantile(lags, 0.5)), ms(quantile(lags, 1))
	return rep
}
