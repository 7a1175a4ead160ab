package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	graphql "github.com/hasura/go-graphql-client"
	"golang.org/x/sync/errgroup"

	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/cmd/feedload/loadreport"
)

// Realtime under load (--subscribers N): before the workload, N
// followingFeedUpdates subscriptions are opened over graphql-transport-ws,
// a connection each, as a phone would hold one, spread over the active
// users (one each, then round again: the per-viewer limit is per replica);
// feedd's memory is read before and after, and divided by the connections.
// Then posts by authors those subscribers' viewers follow are published
// one at a time, and the time from just before each publishPost to each
// due update's arrival is the publish-to-notice latency. With
// --fanout-posts, a burst of posts is published and drained with none open
// and again with the N open: the fan-out throughput without and with
// realtime. The workload then runs with the N open, and they are closed
// at the end.

// followingUpdates is the subscription each subscriber holds: the pill's
// count and the authors, whose first names the newest post's.
const followingUpdates = `subscription FeedloadUpdates { followingFeedUpdates { newPostCount newPostAuthors { id } } }`

// realtimeConfig is --subscribers and its companions.
type realtimeConfig struct {
	Subscribers int
	// OpenConcurrency is how many connections are opened at a time.
	OpenConcurrency int
	// WSURL is the WebSocket endpoint: --url as ws:// (wss://).
	WSURL string
	// NoticePosts are the probe's posts; NoticeGap is the quiet before
	// each (feedd's --subscription-min-interval: an update sooner would
	// wait for the coalescing, not the pipeline); NoticeTimeout the
	// longest wait for a post's updates.
	NoticePosts   int
	NoticeGap     time.Duration
	NoticeTimeout time.Duration
	// FanoutPosts is each fan-out burst's posts; 0: no bursts.
	FanoutPosts int
}

// wsURL is the WebSocket URL of a GraphQL endpoint: http becomes ws,
// https wss.
func wsURL(graphqlURL string) (string, error) {
	u, err := url.Parse(graphqlURL)
	if err != nil {
		return "", err
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	default:
		return "", fmt.Errorf("%q is not an http(s) URL", graphqlURL)
	}
	return u.String(), nil
}

// realtimeRun is a run's subscriptions and what they received.
type realtimeRun struct {
	t    *target
	cfg  realtimeConfig
	hc   *http.Client
	rep  *loadreport.RealtimeReport
	subs []*subscriber // by subscriber; nil where the open failed
	// byViewer are the subscribers of each viewer.
	byViewer map[int][]int
	received atomic.Int64
	lastAt   atomic.Int64 // unix nanoseconds of the latest update
	closing  atomic.Bool

	mu    sync.Mutex
	ended map[string]int
	gone  map[int]bool // subscribers feedd ended
	probe *noticeProbe // the post being timed, if any
}

// noticeProbe is one post being timed: its author (a global id), when its
// publish was sent, the subscribers due an update and those that got one.
type noticeProbe struct {
	author   string
	sent     time.Time
	due      map[int]bool
	got      map[int]bool
	others   map[int]bool // not due, told all the same
	lat      []time.Duration
	last     time.Time // the latest arrival
	complete chan struct{}
}

// startRealtime runs the fan-out burst with none open (with
// --fanout-posts), opens the subscriptions and measures feedd's memory for
// them, runs the burst again, and times the notices; finish closes them
// and runs the burst a third time, with none open again.
func (t *target) startRealtime(ctx context.Context) (*realtimeRun, error) {
	cfg := t.cfg.Realtime
	rt := &realtimeRun{t: t, cfg: cfg, rep: &loadreport.RealtimeReport{Subscribers: cfg.Subscribers},
		subs: make([]*subscriber, cfg.Subscribers), byViewer: map[int][]int{}, ended: map[string]int{}, gone: map[int]bool{},
		hc: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: cfg.OpenConcurrency}}}
	if cfg.FanoutPosts > 0 {
		rt.rep.Fanout = append(rt.rep.Fanout, t.fanoutBurst(ctx, 0))
	}
	if err := rt.open(ctx); err != nil {
		return nil, err
	}
	if cfg.FanoutPosts > 0 {
		rt.rep.Fanout = append(rt.rep.Fanout, t.fanoutBurst(ctx, rt.rep.Open))
	}
	rt.rep.Notices = rt.timeNotices(ctx)
	return rt, ctx.Err()
}

// open opens the subscriptions, cfg.OpenConcurrency at a time, then
// waits (up to a minute) for feedd's gauge to count them, and reads
// feedd's memory before and after.
func (rt *realtimeRun) open(ctx context.Context) error {
	t, n := rt.t, rt.cfg.Subscribers
	viewers := t.pop.activeUsers()
	rt.rep.Viewers = min(n, len(viewers))
	gc := collectGarbage(ctx, t.probe.hc, t.cfg.MetricsURL)
	before, berr := scrapeMetrics(ctx, t.probe.hc, t.cfg.MetricsURL)
	start := time.Now()
	var next, opened, failed atomic.Int64
	var errMu sync.Mutex
	errs := map[string]int{}
	var g errgroup.Group
	for range min(rt.cfg.OpenConcurrency, n) {
		g.Go(func() error {
			for i := int(next.Add(1) - 1); i < n && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				if err := rt.openOne(ctx, i, viewers[i%len(viewers)]); err != nil {
					failed.Add(1)
					errMu.Lock()
					errs[wsErrorKind(err)]++
					errMu.Unlock()
				} else {
					opened.Add(1)
				}
				t.progress.update(func() string {
					return fmt.Sprintf("subscribers: %d of %d open, %d failed (%.0f/s)", opened.Load(), n, failed.Load(),
						float64(opened.Load()+failed.Load())/time.Since(start).Seconds())
				})
			}
			return nil
		})
	}
	_ = g.Wait()
	t.progress.done()
	if err := ctx.Err(); err != nil {
		rt.close()
		return err
	}
	rt.rep.OpenSeconds = time.Since(start).Seconds()
	rt.rep.Open = int(opened.Load())
	if len(errs) > 0 {
		rt.rep.OpenErrors = errs
	}
	for i, c := range rt.subs {
		if c != nil {
			v := viewers[i%len(viewers)]
			rt.byViewer[v] = append(rt.byViewer[v], i)
		}
	}
	after, aerr := rt.awaitGauge(ctx, before)
	if gc && collectGarbage(ctx, t.probe.hc, t.cfg.MetricsURL) {
		after, aerr = scrapeMetrics(ctx, t.probe.hc, t.cfg.MetricsURL)
	} else {
		gc = false
	}
	rt.rep.Memory = connMemory(before, after, firstErr(berr, aerr), rt.rep.Open)
	rt.rep.Memory.GCForced = gc
	fmt.Fprintf(t.cfg.Progress, "feedload: %d subscriptions open in %.1fs\n", rt.rep.Open, rt.rep.OpenSeconds)
	return nil
}

// openOne opens subscriber i's connection as viewer, identified by
// connection_init's payload (a browser cannot set WebSocket headers), and
// waits (up to 30s) for feedd's connection_ack, after which its subscribe
// is sent. A refused upgrade or a closed connection is the error.
func (rt *realtimeRun) openOne(ctx context.Context, i, viewer int) error {
	a, err := rt.t.cl.auth(viewer)
	if err != nil {
		return err
	}
	payload := map[string]any{client.DevHeader: a.ViewerID}
	if a.Token != "" {
		payload = map[string]any{"Authorization": "Bearer " + a.Token}
	}
	return rt.connect(ctx, i, payload)
}

// connect opens subscriber i's connection with connection_init's payload
// and subscribes; see openOne.
func (rt *realtimeRun) connect(ctx context.Context, i int, payload map[string]any) error {
	s := rt.newSubscriber(i, payload)
	if _, err := s.sc.Exec(followingUpdates, nil, rt.handler(i)); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	var rctx context.Context
	rctx, s.cancel = context.WithCancel(context.Background()) // Run's, ended by close
	go func() { s.ran <- s.sc.RunWithContext(rctx) }()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	var err error
	select {
	case <-s.connected:
		rt.subs[i] = s
		return nil
	case err := <-s.ran:
		s.cancel()
		return s.failed(err)
	case <-timer.C:
		err = errors.New("no connection_ack within 30s")
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.cancel()
	<-s.ran
	return err
}

// subscriber is one subscription's connection: a SubscriptionClient of
// hasura/go-graphql-client, which holds one WebSocket (one per subscriber,
// as a phone holds one, so feedd's memory divided by them is a
// connection's).
type subscriber struct {
	sc        *graphql.SubscriptionClient
	upgrade   *upgradeStatus
	cancel    context.CancelFunc // ends Run
	ran       chan error         // Run's return
	connected chan struct{}      // closed at connection_ack
	up        atomic.Bool        // acknowledged, and not ended since
	lastErr   atomic.Pointer[error]
}

// subscriberReadTimeout bounds the wait for any message from feedd; its
// pings (every 20s by default) keep an idle connection read well within it.
const subscriberReadTimeout = 10 * time.Minute

// newSubscriber is subscriber i's client, not yet running: graphql-ws
// (graphql-transport-ws), the messages in order on the reader (a refusal's
// error before its complete, an arrival stamped when read), one dial and
// no reconnection (a refusal or an end is counted once, and the
// connection a figure is about stays the one opened).
func (rt *realtimeRun) newSubscriber(i int, payload map[string]any) *subscriber {
	s := &subscriber{upgrade: &upgradeStatus{next: rt.hc.Transport}, ran: make(chan error, 1), connected: make(chan struct{})}
	s.sc = graphql.NewSubscriptionClient(rt.cfg.WSURL).
		WithProtocol(graphql.GraphQLWS).
		WithConnectionParams(payload).
		WithWebSocketOptions(graphql.WebsocketOptions{HTTPClient: &http.Client{Transport: s.upgrade}}).
		WithReadTimeout(subscriberReadTimeout).
		WithSyncMode(true).
		WithRetryTimeout(time.Nanosecond).      // the first failed dial is the last
		WithExitWhenNoSubscription(false).      // a refused subscription leaves its connection open, as an app's would
		WithConnectionInitialisationTimeout(0). // openOne bounds the wait; no ticker goroutine each
		OnConnected(func() {
			if !s.up.Swap(true) {
				close(s.connected)
			}
		}).
		OnError(func(_ *graphql.SubscriptionClient, err error) error {
			s.lastErr.Store(&err)
			return err // no retry: Run ends with it
		}).
		OnDisconnected(func() {
			// Not after a failed dial (openOne counts it), nor at our close.
			if s.up.Swap(false) && !rt.closing.Load() {
				rt.endedBy(i, wsErrorKind(s.err(nil)))
			}
			// The client would dial again after a dropped connection; the
			// cancelled dial ends Run instead.
			if s.cancel != nil {
				s.cancel()
			}
		}).
		OnSubscriptionComplete(func(graphql.Subscription) { rt.endedBy(i, "COMPLETE") })
	return s
}

// err is the reason the connection ended: the error OnError saw, else
// runErr; a refused upgrade as its status.
func (s *subscriber) err(runErr error) error {
	if p := s.lastErr.Load(); p != nil {
		runErr = *p
	}
	if code := int(s.upgrade.code.Load()); code != 0 && code != http.StatusSwitchingProtocols {
		return &refusedUpgrade{StatusCode: code, Err: runErr}
	}
	return runErr
}

// failed is the error of a connection that ended before its ack.
func (s *subscriber) failed(runErr error) error {
	if err := s.err(runErr); err != nil {
		return err
	}
	return errors.New("the connection ended before connection_ack")
}

// close ends the connection (a complete for the subscription, then a
// normal closure) and waits for Run to return.
func (s *subscriber) close() {
	_ = s.sc.Close()
	s.cancel()
	<-s.ran
}

// upgradeStatus is the dial's http.RoundTripper, keeping the status of
// the upgrade's response: the library's dial error does not carry it, and
// a refused upgrade (503 past feedd's --max-connections) is counted by it.
type upgradeStatus struct {
	next http.RoundTripper
	code atomic.Int32
}

func (u *upgradeStatus) RoundTrip(r *http.Request) (*http.Response, error) {
	res, err := u.next.RoundTrip(r)
	if res != nil {
		u.code.Store(int32(res.StatusCode))
	}
	return res, err
}

// refusedUpgrade is an upgrade the server answered with StatusCode (503
// past its connection limit, 403 for a refused Origin), not 101.
type refusedUpgrade struct {
	StatusCode int
	Err        error
}

func (e *refusedUpgrade) Error() string {
	return fmt.Sprintf("WebSocket upgrade refused: HTTP %d %s: %v", e.StatusCode, http.StatusText(e.StatusCode), e.Err)
}

func (e *refusedUpgrade) Unwrap() error { return e.Err }

// awaitGauge waits until feedd's gauge of open subscriptions has grown
// by the subscriptions opened, less those it ended (refused past a
// limit): a subscribe message is handled after its connection's ack, and
// until then a post could miss it. It returns the scrape that saw it;
// without the gauge, the first scrape, with a note.
func (rt *realtimeRun) awaitGauge(ctx context.Context, before feeddMetrics) (feeddMetrics, error) {
	t := rt.t
	deadline := time.Now().Add(time.Minute)
	for {
		want := before.gauges[subscriptionsMetric] + float64(rt.rep.Open-rt.endedCount())
		m, err := scrapeMetrics(ctx, t.probe.hc, t.cfg.MetricsURL)
		if err != nil {
			return m, err
		}
		v, ok := m.gauges[subscriptionsMetric]
		switch {
		case !ok:
			rt.rep.GaugeNote = "no " + subscriptionsMetric + " on feedd's /metrics: subscriptions not confirmed"
			return m, nil
		case v >= want:
			rt.rep.ServerSubscriptions = &v
			return m, nil
		case time.Now().After(deadline) || ctx.Err() != nil:
			rt.rep.ServerSubscriptions = &v
			rt.rep.GaugeNote = fmt.Sprintf("want %.0f after a minute", want)
			return m, nil
		}
		select { // the next look at the gauge
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// connMemory is feedd's memory for open connections: the growth of its
// RSS and Go heap in use between the scrapes, divided by open.
func connMemory(before, after feeddMetrics, err error, open int) loadreport.ConnMemory {
	var m loadreport.ConnMemory
	for _, name := range []string{rssMetric, heapInuseMetric} {
		_, ok0 := before.gauges[name]
		_, ok1 := after.gauges[name]
		if err == nil && (!ok0 || !ok1) {
			err = fmt.Errorf("no %s on feedd's /metrics", name)
		}
	}
	if err == nil && open == 0 {
		err = errors.New("no connection open")
	}
	if err != nil {
		m.Error = err.Error()
		return m
	}
	m.RSSBefore, m.RSSAfter = int64(before.gauges[rssMetric]), int64(after.gauges[rssMetric])
	m.HeapInuseBefore, m.HeapInuseAfter = int64(before.gauges[heapInuseMetric]), int64(after.gauges[heapInuseMetric])
	m.RSSPerConn = float64(m.RSSAfter-m.RSSBefore) / float64(open)
	m.HeapPerConn = float64(m.HeapInuseAfter-m.HeapInuseBefore) / float64(open)
	return m
}

// handler is subscriber i's: it counts updates, times the probe's, and
// notes a subscription that feedd ended with errors (a refusal comes as a
// result with errors, then complete: OnSubscriptionComplete). It gets a
// result's data, or its errors; it runs on the connection's reader, so
// the arrival is stamped as the message is read.
func (rt *realtimeRun) handler(i int) func([]byte, error) error {
	return func(data []byte, err error) error {
		at := time.Now()
		if err != nil {
			rt.endedBy(i, errorsKind(err))
			return nil
		}
		rt.received.Add(1)
		rt.lastAt.Store(at.UnixNano())
		rt.noticed(i, data, at)
		return nil
	}
}

// endedCount is how many subscriptions feedd has ended so far.
func (rt *realtimeRun) endedCount() int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	n := 0
	for _, c := range rt.ended {
		n += c
	}
	return n
}

// endedBy notes that feedd ended subscriber i, and why: the first
// reason only (a refusal's complete follows its error).
func (rt *realtimeRun) endedBy(i int, kind string) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if !rt.gone[i] {
		rt.gone[i] = true
		rt.ended[kind]++
	}
}

// noticed times an update of subscriber i (a result's data, arrived at
// at) for the probe's post: the first that names its author first, after
// its publish was sent.
func (rt *realtimeRun) noticed(i int, data []byte, at time.Time) {
	rt.mu.Lock()
	p := rt.probe
	rt.mu.Unlock()
	if p == nil || at.Before(p.sent) {
		return
	}
	var r struct {
		FollowingFeedUpdates struct {
			NewPostAuthors []struct {
				ID string `json:"id"`
			} `json:"newPostAuthors"`
		} `json:"followingFeedUpdates"`
	}
	if json.Unmarshal(data, &r) != nil {
		return
	}
	authors := r.FollowingFeedUpdates.NewPostAuthors
	if len(authors) == 0 || authors[0].ID != p.author {
		return
	}
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if rt.probe != p {
		return
	}
	switch {
	case !p.due[i]:
		p.others[i] = true
	case !p.got[i]:
		p.got[i] = true
		p.lat = append(p.lat, at.Sub(p.sent))
		p.last = at
		if len(p.got) == len(p.due) {
			close(p.complete)
		}
	}
}

// timeNotices publishes cfg.NoticePosts posts one at a time, each by a
// random active user that some subscribers' viewers follow, and times the
// updates due. Each waits until no update has arrived for NoticeGap.
func (rt *realtimeRun) timeNotices(ctx context.Context) loadreport.NoticeReport {
	var rep loadreport.NoticeReport
	if rt.cfg.NoticePosts == 0 {
		return rep
	}
	if rt.rep.Open == 0 {
		rep.Error = "no subscription open"
		return rep
	}
	t := rt.t
	r := rand.New(rand.NewPCG(t.cfg.Seed, 0x5b5))
	followers := map[int][]int{}
	var lat []time.Duration
	for n := 0; n < rt.cfg.NoticePosts && ctx.Err() == nil; n++ {
		if err := rt.quiet(ctx); err != nil {
			rep.Error = err.Error()
			break
		}
		author, due, err := rt.pickAuthor(ctx, r, followers)
		if err != nil {
			rep.Error = err.Error()
			break
		}
		c, err := t.cl.as(author)
		if err != nil {
			rep.Error = err.Error()
			break
		}
		p := &noticeProbe{author: userNodeID(author), due: due, got: map[int]bool{}, others: map[int]bool{},
			complete: make(chan struct{})}
		rt.mu.Lock()
		p.sent = time.Now()
		rt.probe = p
		rt.mu.Unlock()
		_, err = client.PublishPost(ctx, c, client.PublishPostInput{Text: "feedload notice probe"})
		if err == nil {
			select {
			case <-p.complete:
			case <-time.After(rt.cfg.NoticeTimeout):
			case <-ctx.Done():
			}
		}
		rt.mu.Lock()
		rt.probe = nil
		rt.mu.Unlock()
		if err != nil {
			rep.Error = fmt.Sprintf("publishPost as %d: %v", author, err)
			break
		}
		rep.Posts++
		rep.Expected += len(p.due)
		rep.Received += len(p.got)
		rep.Unexpected += len(p.others)
		lat = append(lat, p.lat...)
		t.progress.update(func() string {
			return fmt.Sprintf("publish-to-notice: %d of %d posts, %d of %d updates due received", rep.Posts, rt.cfg.NoticePosts, rep.Received, rep.Expected)
		})
	}
	t.progress.done()
	rep.Missed = rep.Expected - rep.Received
	slices.Sort(lat)
	rep.P50, rep.P95, rep.P99, rep.Max = ms(quantile(lat, 0.50)), ms(quantile(lat, 0.95)), ms(quantile(lat, 0.99)), ms(quantile(lat, 1))
	return rep
}

// quiet waits until no subscriber has had an update for NoticeGap (at
// most a minute), so the next post's updates are not held back by the
// coalescing of earlier ones.
func (rt *realtimeRun) quiet(ctx context.Context) error {
	deadline := time.Now().Add(time.Minute)
	for {
		idle := time.Since(time.Unix(0, rt.lastAt.Load()))
		if idle >= rt.cfg.NoticeGap {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the subscribers never had %v without an update within a minute", rt.cfg.NoticeGap)
		}
		select { // until the gap would have passed
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(rt.cfg.NoticeGap - idle):
		}
	}
}

// pickAuthor is a random active user some of whose followers hold
// subscriptions, and those subscriptions and the author's own;
// followers caches each user's
// followers (read as that user, through followers(first:, after:)).
func (rt *realtimeRun) pickAuthor(ctx context.Context, r *rand.Rand, followers map[int][]int) (int, map[int]bool, error) {
	const tries = 50
	for range tries {
		a := rt.t.pop.viewer(r)
		fs, ok := followers[a]
		if !ok {
			var err error
			if fs, err = rt.followersOf(ctx, a); err != nil {
				return 0, nil, err
			}
			followers[a] = fs
		}
		due := map[int]bool{}
		rt.mu.Lock()
		// The author's own subscriptions are due too: its post is in its
		// own feed.
		for _, f := range append(fs, a) {
			for _, i := range rt.byViewer[f] {
				if !rt.gone[i] {
					due[i] = true
				}
			}
		}
		rt.mu.Unlock()
		if len(due) > len(rt.byViewer[a]) { // a follower's too, not the author's alone
			return a, due, nil
		}
	}
	return 0, nil, fmt.Errorf("none of %d random users has a follower with a subscription open", tries)
}

// maxFollowerPages bounds the pages of an author's followers read.
const maxFollowerPages = 1000

// followersOf is user u's followers' ids.
func (rt *realtimeRun) followersOf(ctx context.Context, u int) ([]int, error) {
	c, err := rt.t.cl.as(u)
	if err != nil {
		return nil, err
	}
	var out []int
	var after *string
	hundred := 100
	for range maxFollowerPages {
		page, err := client.UserFollowers(ctx, c, "u"+strconv.Itoa(u), &hundred, after)
		if err != nil {
			return nil, fmt.Errorf("read u%d's followers: %w", u, err)
		}
		if page.User == nil {
			return nil, fmt.Errorf("read u%d's followers: no such user (is this a network feedload built?)", u)
		}
		fs := page.User.Followers
		for _, e := range fs.Edges {
			if id, err := strconv.Atoi(e.Node.DatabaseId); err == nil {
				out = append(out, id)
			}
		}
		if !fs.PageInfo.HasNextPage || fs.PageInfo.EndCursor == nil {
			break
		}
		after = fs.PageInfo.EndCursor
	}
	return out, nil
}

// fanoutBurst publishes cfg.FanoutPosts posts, --concurrency at a time,
// by random active users (the same ones each burst), and waits for feedd's fan-out to drain them;
// open is the subscriptions open meanwhile, for the report.
func (t *target) fanoutBurst(ctx context.Context, open int) loadreport.FanoutRun {
	run := loadreport.FanoutRun{Open: open, Posts: t.cfg.Realtime.FanoutPosts}
	if t.cfg.Drain == nil {
		run.Error = "needs --redis, where the fan-out's backlog is read"
		return run
	}
	fail := func(err error) loadreport.FanoutRun { run.Error = err.Error(); return run }
	dctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if err := t.cfg.Drain(dctx); err != nil { // start from an idle fan-out
		return fail(err)
	}
	before, err := scrapeMetrics(ctx, t.probe.hc, t.cfg.MetricsURL)
	if err != nil {
		return fail(err)
	}
	var next, errs atomic.Int64
	var g errgroup.Group
	start := time.Now()
	// Every burst's posts are by the same authors, in the same order, so
	// each burst asks the fan-out for the same work.
	for w := range t.cfg.Concurrency {
		r := rand.New(rand.NewPCG(t.cfg.Seed, uint64(w)+0xfa))
		g.Go(func() error {
			for next.Add(1) <= int64(run.Posts) && ctx.Err() == nil {
				a := t.pop.viewer(r)
				c, err := t.cl.as(a)
				if err == nil {
					_, err = client.PublishPost(ctx, c, client.PublishPostInput{Text: "feedload fan-out burst from u" + strconv.Itoa(a)})
				}
				if err != nil {
					errs.Add(1)
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	if err := t.cfg.Drain(dctx); err != nil {
		return fail(err)
	}
	run.Seconds = time.Since(start).Seconds()
	run.Errors = int(errs.Load())
	run.PostsPerSecond = float64(run.Posts-run.Errors) / run.Seconds
	after, err := scrapeMetrics(ctx, t.probe.hc, t.cfg.MetricsURL)
	if err == nil {
		err = firstErr(before.inboxErr, after.inboxErr)
	}
	if err == nil {
		run.InboxWrites = int64(after.inboxWrites - before.inboxWrites)
		v := float64(run.InboxWrites) / run.Seconds
		run.InboxWritesPerSecond = &v
	}
	fmt.Fprintf(t.cfg.Progress, "feedload: fan-out burst of %d posts with %d subscriptions open drained in %.2fs\n", run.Posts, open, run.Seconds)
	return run
}

// fanoutRatio is the inbox writes a second of the burst with the
// subscriptions open over the mean of the bursts with none open, before
// and after it (bracketing it, so that what changed meanwhile, readers
// made active, caches warmed, weighs on both sides alike); nil unless
// all three were measured.
func fanoutRatio(runs []loadreport.FanoutRun) *float64 {
	if len(runs) != 3 {
		return nil
	}
	for _, r := range runs {
		if r.InboxWritesPerSecond == nil {
			return nil
		}
	}
	none := (*runs[0].InboxWritesPerSecond + *runs[2].InboxWritesPerSecond) / 2
	if none == 0 {
		return nil
	}
	v := *runs[1].InboxWritesPerSecond / none
	return &v
}

// collectGarbage has feedd run a garbage collection (GET
// /debug/pprof/heap?gc=1 on the listener serving its metrics: its ops
// listener, --ops-url), so the heap read next is live memory, not garbage
// a collection would free; false where there is no such endpoint.
func collectGarbage(ctx context.Context, hc *http.Client, metricsURL string) bool {
	u, err := url.Parse(metricsURL)
	if err != nil {
		return false
	}
	u.Path, u.RawQuery = "/debug/pprof/heap", "gc=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return false
	}
	res, err := hc.Do(req)
	if err != nil {
		return false
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode == http.StatusOK
}

// finish closes the subscriptions, runs the last fan-out burst with none
// open, and fills the report's last figures.
func (rt *realtimeRun) finish(ctx context.Context, rep *loadreport.Report) {
	rt.close()
	if rt.cfg.FanoutPosts > 0 {
		rt.rep.Fanout = append(rt.rep.Fanout, rt.t.fanoutBurst(ctx, 0))
		rt.rep.Ratio = fanoutRatio(rt.rep.Fanout)
	}
	rt.rep.Received = rt.received.Load()
	rt.mu.Lock()
	if len(rt.ended) > 0 {
		rt.rep.Ended = rt.ended
	}
	rt.mu.Unlock()
	rep.Realtime = rt.rep
}

// close closes every open connection, cfg.OpenConcurrency at a time.
func (rt *realtimeRun) close() {
	rt.closing.Store(true)
	var next atomic.Int64
	var g errgroup.Group
	for range max(rt.cfg.OpenConcurrency, 1) {
		g.Go(func() error {
			for i := int(next.Add(1) - 1); i < len(rt.subs); i = int(next.Add(1) - 1) {
				if s := rt.subs[i]; s != nil {
					s.close()
				}
			}
			return nil
		})
	}
	_ = g.Wait()
	rt.subs = nil // closed: a second close has nothing to do
}

// wsErrorKind names a failed or ended connection for the report: its
// refused upgrade's status (HTTP_503), its close code (CLOSE_4401), or
// TRANSPORT.
func wsErrorKind(err error) string {
	var ru *refusedUpgrade
	switch {
	case errors.As(err, &ru):
		return "HTTP_" + strconv.Itoa(ru.StatusCode)
	case websocket.CloseStatus(err) > 0:
		return "CLOSE_" + strconv.Itoa(int(websocket.CloseStatus(err)))
	}
	return "TRANSPORT"
}

// errorsKind names a subscription's GraphQL errors (a result's, or an
// error message's) by the first one's code: ERROR_RATE_LIMITED, or ERROR
// without a code.
func errorsKind(err error) string {
	var errs graphql.Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		return "ERROR"
	}
	if code, ok := errs[0].Extensions["code"].(string); ok && code != "" {
		return "ERROR_" + code
	}
	return "ERROR"
}
