package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/redis/rueidis"

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
	// MetricsURL is feedd's /metrics, read for its CPU time; Redis, when
	// set, is read (INFO) for Redis's CPU time and command statistics.
	MetricsURL string
	Redis      rueidis.Client
	// Interval is the width of the time series' buckets; 0: a second.
	Interval time.Duration
	// DormantShare is --dormant-share (0: none), and Dormant the users
	// dormant when the load begins: sessions leave them alone, but for a
	// returning reader's, ReturnRatio of the sessions (while any is left).
	DormantShare float64
	Dormant      []int
	ReturnRatio  float64
	// Workload is workloadMixed or workloadLive (--workload).
	Workload string
	// WarmReaders (--warm-readers): before the load, every active user
	// reads the workload's first page once, then the fan-out that queued
	// (first reads' upgrades) is waited for with Drain, when set.
	WarmReaders bool
	Drain       func(context.Context) error
	// Realtime is --subscribers and its companions (Subscribers 0: none).
	Realtime realtimeConfig
}

// The workloads (--workload): mixed is the sessions of run below; live is
// first live pages only, each for a random viewer on a fresh device.
const (
	workloadMixed = "mixed"
	workloadLive  = "live"
)

// The operations, as the report names them.
const (
	opFeed        = "followingFeed"         // first page
	opFeedReturn  = "followingFeed.return"  // a returning (dormant) reader's first page
	opFeedScroll  = "followingFeed.scroll"  // first/after endCursor
	opFeedRefresh = "followingFeed.refresh" // last/before startCursor
	opLive        = "liveFeed"
	opLiveScroll  = "liveFeed.scroll"
	opLiveFresh   = "liveFeed.fresh" // the live workload's first page on a fresh device
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
	rec     *recorder
	pop     *population
	seen    []string // post ids from the last feed page, for likes
	follows [][2]string
	device  string // the worker's X-Device-Id
	fresh   int    // fresh devices so far (the live workload)
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
	if d, ok := base.(deviceTransport); ok { // another device of the same clients
		base = d.base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = deviceTransport{base: base, device: name}
	return &clients{cfg: c.cfg, http: &hc, shared: c.shared}
}

func (c *clients) as(id int) (graphql.Client, error) {
	a, err := c.auth(id)
	if err != nil {
		return nil, err
	}
	return client.New(c.cfg.URL, a, c.http), nil
}

// auth is how the clients prove to be user id: a bearer token minted once
// with the secret, else the X-Viewer-Id header (dev auth).
func (c *clients) auth(id int) (client.Auth, error) {
	if c.cfg.Secret == nil {
		return client.Auth{ViewerID: strconv.Itoa(id)}, nil
	}
	ts := c.shared
	ts.mu.Lock()
	defer ts.mu.Unlock()
	t, ok := ts.tok[id]
	if !ok {
		var err error
		if t, err = auth.Mint(c.cfg.Secret, uint64(id), 24*time.Hour); err != nil {
			return client.Auth{}, err
		}
		ts.tok[id] = t
	}
	return client.Auth{Token: t}, nil
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
	w.rec.add(op, d, err == nil)
	if err != nil {
		s.errors[errorCode(err)]++
		w.errs.Add(1)
		return false
	}
	s.lat = append(s.lat, d)
	return true
}

// anyUser is a random user, dormant or not (one to follow).
func (w *worker) anyUser() int { return w.r.IntN(w.cfg.Users) + 1 }

// viewer is a session's viewer: with a dormant share, a returning reader
// ReturnRatio of the time (while any is left), else an active user.
func (w *worker) viewer() (v int, returning bool) {
	if w.cfg.DormantShare > 0 && w.r.Float64() < w.cfg.ReturnRatio {
		if v := w.pop.returning(w.r); v != 0 {
			return v, true
		}
	}
	return w.pop.viewer(w.r), false
}

// run repeats sessions until ctx ends: a viewer scrolls the following feed
// a few pages deep and may pull to refresh, or opens the live feed and
// scrolls it; after each read, a write with probability WriteRatio. A
// returning reader's session is of the following feed.
func (w *worker) run(ctx context.Context) {
	if w.cfg.Workload == workloadLive {
		w.runLive(ctx)
		return
	}
	for ctx.Err() == nil {
		v, returning := w.viewer()
		c, err := w.clients.as(v)
		if err != nil {
			return
		}
		if returning || w.r.IntN(4) < 3 {
			w.feedSession(ctx, c, v, returning)
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

// feedSession scrolls the following feed; a returning reader's first page
// is an operation of its own (opFeedReturn), the rest as any session's.
func (w *worker) feedSession(ctx context.Context, c graphql.Client, v int, returning bool) {
	size := w.cfg.PageSize
	var first *client.FollowingFeedResponse
	op := opFeed
	if returning {
		op = opFeedReturn
	}
	if !w.call(ctx, op, func() (err error) {
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

// runLive repeats first live pages until ctx ends, each for a random
// (active) viewer on a device never used before: the server finds no
// snapshot of the device to reuse, and takes a new one, the expensive
// first page. No writes, no scrolls.
func (w *worker) runLive(ctx context.Context) {
	size := w.cfg.PageSize
	for ctx.Err() == nil {
		w.fresh++
		c, err := w.clients.device(fmt.Sprintf("%s-%d", w.device, w.fresh)).as(w.pop.viewer(w.r))
		if err != nil {
			return
		}
		w.call(ctx, opLiveFresh, func() error { return firstLivePage(ctx, c, size) })
	}
}

// firstLivePage sends the typed client's LiveFeed request (the same
// operation and variables, so feedd does the same work) but keeps the
// page as raw JSON: the live workload needs only whether it failed, and
// decoding the typed response, whose fragments decode each session
// several times, cost the tool about 0.13 ms of CPU a page on the cores
// it shares with feedd and Redis, more than half of all it spent.
func firstLivePage(ctx context.Context, c graphql.Client, first int) error {
	var page json.RawMessage
	return c.MakeRequest(ctx, &graphql.Request{OpName: "LiveFeed", Query: client.LiveFeed_Operation,
		Variables: map[string]any{"first": first, "after": nil}}, &graphql.Response{Data: &page})
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
		target := w.anyUser()
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

// quantile of sorted durations (nearest rank); 0 for none.
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
