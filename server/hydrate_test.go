package server

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/rueidis"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

// replica is another feedd replica over st's store: its own Redis client
// (so its own, cold, client-side cache), service and HTTP server.
func replica(t *testing.T, st *storetest.Store) *env {
	t.Helper()
	return newEnvOn(t, replicaClient(t, st), st.Prefix)
}

// replicaWith is replica with an API surface.
func replicaWith(t *testing.T, st *storetest.Store, api APIConfig) *env {
	t.Helper()
	return newEnvWith(t, replicaClient(t, st), st.Prefix, api)
}

// replicaClient is a new Redis client on st's store, counting round trips.
func replicaClient(tb testing.TB, st *storetest.Store) rueidis.Client {
	tb.Helper()
	if st.Real {
		s, err := redisstore.Open(context.Background(), redisstore.Options{URL: os.Getenv(storetest.Env), ClientName: "feedd-test-replica"})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(s.Close)
		return s.Client
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{st.Embedded.Addr()}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return roundtrip.Wrap(c)
}

// trips is how many Redis round trips the last run of query operation op
// cost on e, given the total before it.
func (e *env) tripsSince(op string, before int64) int {
	return int(e.tripsSoFar(op) - before)
}

func (e *env) tripsSoFar(op string) int64 {
	trips, _ := e.metrics.roundTrips(e.t, op)
	return trips
}

// hydratedPage asks for everything a post shows: counters, the viewer's
// like, the author with counts and whether the viewer follows them.
const hydratedPage = `query HydratedPage($first: Int, $after: String) {
	followingFeed(first: $first, after: $after) {
		edges { cursor node {
			id databaseId text createdAt
			counts { likes comments reposts favorites }
			viewerHasLiked
			author { id databaseId handle displayName avatarUrl followerCount followingCount viewerIsFollowing }
		} }
		pageInfo { hasNextPage endCursor }
	}
}`

type hydratedEdge struct {
	Node struct {
		DatabaseID string `json:"databaseId"`
		Text       string
		Counts     struct{ Likes, Comments, Reposts, Favorites int }
		Liked      bool `json:"viewerHasLiked"`
		Author     struct {
			DatabaseID     string `json:"databaseId"`
			Handle         string
			FollowerCount  int  `json:"followerCount"`
			FollowingCount int  `json:"followingCount"`
			Following      bool `json:"viewerIsFollowing"`
		}
	}
}

type hydratedResult struct {
	FollowingFeed struct {
		Edges    []hydratedEdge
		PageInfo struct {
			HasNextPage bool
			EndCursor   *string
		}
	} `json:"followingFeed"`
}

// feedFixture is a store with two active readers whose inboxes are
// complete: reader 1 follows 50 authors, one of them (10) big-V; fan 2
// follows only the big-V. Posts are interleaved across authors; some have
// imported counters, reader 1 likes every third, fan 2 every fifth.
type feedFixture struct {
	st    *storetest.Store
	posts []feedcore.Post // by k: id 1000+k, created at base+k seconds
}

const (
	reader, fan = feedcore.ID(1), feedcore.ID(2)
	bigV        = feedcore.ID(10)
)

// newFeedFixture builds a feedFixture; decorate, when given, changes each
// post k before it is stored (media).
func newFeedFixture(t testing.TB, decorate ...func(k int, p *feedcore.Post)) *feedFixture {
	t.Helper()
	return newFeedFixtureOpts(t, feedcore.Options{}, decorate...)
}

// newFeedFixtureOpts is newFeedFixture over a Service with opts (its
// Prefix and BigVThreshold are the fixture's).
func newFeedFixtureOpts(t testing.TB, opts feedcore.Options, decorate ...func(k int, p *feedcore.Post)) *feedFixture {
	t.Helper()
	st := storetest.New(t)
	opts.Prefix, opts.BigVThreshold = st.Prefix, 3
	svc, err := feedcore.New(context.Background(), st.Client, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	defer feedtest.Workers(t, svc)()
	drain := func() { t.Helper(); feedtest.Drain(t, svc) }

	users := []feedcore.User{{ID: reader, Handle: "reader"}, {ID: fan, Handle: "fan"}}
	var edges []feedcore.Edge
	for a := feedcore.ID(10); a < 60; a++ {
		users = append(users, feedcore.User{ID: a, Handle: fmt.Sprintf("author%d", a), DisplayName: fmt.Sprintf("Author %d", a)})
		edges = append(edges, feedcore.Edge{Follower: reader, Followee: a})
	}
	edges = append(edges, feedcore.Edge{Follower: fan, Followee: bigV})
	for f := feedcore.ID(90); f < 95; f++ {
		users = append(users, feedcore.User{ID: f, Handle: fmt.Sprintf("follower%d", f)})
		edges = append(edges, feedcore.Edge{Follower: f, Followee: bigV})
	}
	if _, err := svc.PutUsers(ctx, users); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.FollowMany(ctx, edges); err != nil {
		t.Fatal(err)
	}
	// Reading makes a reader active; the workers then complete its inbox.
	for _, v := range []feedcore.ID{reader, fan} {
		if err := svc.Touch(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	drain()

	var authors []feedcore.ID
	for range 110 {
		authors = append(authors, bigV)
	}
	for a := feedcore.ID(11); a < 60; a++ {
		authors = append(authors, a, a, a)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(authors), func(i, j int) { authors[i], authors[j] = authors[j], authors[i] })
	f := &feedFixture{st: st}
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ptrs := make([]*feedcore.Post, len(authors))
	for k, a := range authors {
		f.posts = append(f.posts, feedcore.Post{ID: feedcore.ID(1000 + k), Author: a, Text: fmt.Sprintf("post %d", k), CreatedAt: base.Add(time.Duration(k) * time.Second)})
		for _, d := range decorate {
			d(k, &f.posts[k])
		}
	}
	for k := range f.posts {
		ptrs[k] = &f.posts[k]
	}
	if _, err := svc.PutPosts(ctx, ptrs); err != nil {
		t.Fatal(err)
	}
	for k, p := range f.posts {
		if k%7 == 0 {
			if err := svc.SetCounts(ctx, p.ID, feedcore.PostCounts{Likes: 100, Comments: 7, Reposts: 3, Favorites: 1}); err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range []struct {
			who   feedcore.ID
			every int
		}{{reader, 3}, {fan, 5}} {
			if k%l.every == 0 {
				if _, _, err := svc.Like(ctx, l.who, p.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	drain()
	return f
}

// want returns viewer's expected feed, newest first.
func (f *feedFixture) want(viewer feedcore.ID) []int {
	var ks []int
	for k := len(f.posts) - 1; k >= 0; k-- {
		if viewer == reader || f.posts[k].Author == bigV {
			ks = append(ks, k)
		}
	}
	return ks
}

// check compares a hydrated page with the fixture.
func (f *feedFixture) check(t *testing.T, viewer feedcore.ID, got hydratedResult, want []int) {
	t.Helper()
	edges := got.FollowingFeed.Edges
	if len(edges) != len(want) {
		t.Fatalf("viewer %d: %d edges, want %d", viewer, len(edges), len(want))
	}
	for i, k := range want {
		p, n := f.posts[k], edges[i].Node
		likes, others := 0, [3]int{}
		if k%7 == 0 {
			likes, others = 100, [3]int{7, 3, 1}
		}
		if k%3 == 0 {
			likes++
		}
		if k%5 == 0 {
			likes++
		}
		followers := 1
		if p.Author == bigV {
			followers = 7
		}
		every := map[feedcore.ID]int{reader: 3, fan: 5}[viewer]
		ok := n.DatabaseID == feedcore.FormatID(p.ID) && n.Text == p.Text &&
			n.Counts.Likes == likes && [3]int{n.Counts.Comments, n.Counts.Reposts, n.Counts.Favorites} == others &&
			n.Liked == (k%every == 0) &&
			n.Author.DatabaseID == feedcore.FormatID(p.Author) && n.Author.Handle == fmt.Sprintf("author%d", p.Author) &&
			n.Author.FollowerCount == followers && n.Author.FollowingCount == 0 && n.Author.Following
		if !ok {
			t.Fatalf("viewer %d, edge %d (post k=%d, %+v): got %+v", viewer, i, k, p, n)
		}
	}
}

// TestHydratedPageRoundTrips holds the round-trip budget: a followingFeed
// page with counters, authors (with their counts) and the viewer's flags
// costs at most 3 Redis round trips on a cold replica and, where
// client-side caching works (a real Redis), at most 2 once posts and
// profiles are cached, whatever the page size and however many distinct
// authors it shows, with the default rate limit on (its check rides with
// the page's first read). Round trips are those the server records for
// the request, from the moment it arrives.
func TestHydratedPageRoundTrips(t *testing.T) {
	f := newFeedFixture(t)
	for _, viewer := range []feedcore.ID{reader, fan} {
		for _, n := range []int{1, 20, 100} {
			t.Run(fmt.Sprintf("viewer=%d/first=%d", viewer, n), func(t *testing.T) {
				want := f.want(viewer)[:n]
				// The default allowance, refilled slowly: the second page's
				// spend must show however long the machine takes between
				// the two requests (at the default rate, 35 ms refill a page).
				limit := DefaultRateLimit
				limit.Rate = 1
				e := replicaWith(t, f.st, APIConfig{RateLimit: limit})
				vars := map[string]any{"first": n}

				before := e.tripsSoFar("HydratedPage")
				var got hydratedResult
				first := e.do(viewer, hydratedPage, vars)
				first.as(t, &got)
				cold := e.tripsSince("HydratedPage", before)
				f.check(t, viewer, got, want)
				authors := map[string]bool{}
				for _, ed := range got.FollowingFeed.Edges {
					authors[ed.Node.Author.DatabaseID] = true
				}
				t.Logf("%d posts by %d authors: %d round trips cold", n, len(authors), cold)
				if cold != 3 {
					t.Errorf("cold page cost %d round trips, want 3", cold)
				}

				before = e.tripsSoFar("HydratedPage")
				res := e.do(viewer, hydratedPage, vars)
				res.as(t, &got)
				warm := e.tripsSince("HydratedPage", before)
				f.check(t, viewer, got, want)
				t.Logf("%d round trips warm", warm)
				if remaining(t, res) >= remaining(t, first) {
					t.Errorf("the rate limit did not spend the pages' cost: %d points left, then %d", remaining(t, first), remaining(t, res))
				}
				if !f.st.Real {
					return // no client-side cache: warm is cold
				}
				if warm != 2 {
					t.Errorf("warm page cost %d round trips, want 2", warm)
				}
			})
		}
	}
}

// TestHydratedPageRoundTripsSmallInbox holds the same budget where the
// page reads further than the inbox holds: at an inbox cap of 24, a first
// page of 20 reads 20 + 1 + the repost window (71 entries), and the inbox
// has 24. A page decided on what the inbox held pulls nothing from the
// outboxes: 3 round trips on a replica that never served the reader, 2
// once posts and profiles are cached.
func TestHydratedPageRoundTripsSmallInbox(t *testing.T) {
	const inboxCap = 24
	f := newFeedFixtureOpts(t, feedcore.Options{InboxCap: inboxCap})
	for _, viewer := range []feedcore.ID{reader, fan} {
		t.Run(fmt.Sprintf("viewer=%d", viewer), func(t *testing.T) {
			e := newEnvOpts(t, replicaClient(t, f.st), feedcore.Options{Prefix: f.st.Prefix, BigVThreshold: 3, InboxCap: inboxCap}, APIConfig{})
			vars := map[string]any{"first": 20}
			for _, pass := range []string{"cold", "warm"} {
				before := e.tripsSoFar("HydratedPage")
				var got hydratedResult
				e.do(viewer, hydratedPage, vars).as(t, &got)
				trips := e.tripsSince("HydratedPage", before)
				f.check(t, viewer, got, f.want(viewer)[:20])
				t.Logf("%s: %d round trips", pass, trips)
				want := 3
				if pass == "warm" {
					if !f.st.Real {
						continue // no client-side cache: warm is cold
					}
					want = 2
				}
				if trips != want {
					t.Errorf("%s page cost %d round trips, want %d", pass, trips, want)
				}
			}
		})
	}
}

// TestPageBelowHorizonRoundTrips: the page after one whose read reached
// the inbox's horizon pulls from every followee's outbox. Its cursor says
// so (StatePull), and the page reads the following set with its view:
// 3 round trips on a replica that never served the reader (the view and
// the following set; the outboxes, with the posts of the inbox's last
// entries; the posts of the rest, with the hydration, every author being
// known by then: FeedRequest.Alongside), where the hydration's round
// trip of its own made them 4. A replica that has pulled for the reader
// seeks the outboxes it pulled with the view (core.Service.PulledBelow):
// the same page again costs 2, as one above the horizon does with its
// posts cached, and the next page 3 (its posts are new to the replica),
// where they cost 3 and 4.
func TestPageBelowHorizonRoundTrips(t *testing.T) {
	const inboxCap = 24
	f := newFeedFixtureOpts(t, feedcore.Options{InboxCap: inboxCap})
	for _, viewer := range []feedcore.ID{reader, fan} {
		t.Run(fmt.Sprintf("viewer=%d", viewer), func(t *testing.T) {
			opts := feedcore.Options{Prefix: f.st.Prefix, BigVThreshold: 3, InboxCap: inboxCap}
			var first hydratedResult
			newEnvOpts(t, replicaClient(t, f.st), opts, APIConfig{}).do(viewer, hydratedPage, map[string]any{"first": 20}).as(t, &first)
			all := f.want(viewer)
			if len(all) <= 40 {
				t.Fatalf("the fixture's feed has %d posts, not three pages", len(all))
			}
			e := newEnvOpts(t, replicaClient(t, f.st), opts, APIConfig{}) // never served the reader
			// exact: the page costs budget round trips; else at most that.
			page := func(pass string, after string, want []int, budget int, exact bool) hydratedResult {
				t.Helper()
				before := e.tripsSoFar("HydratedPage")
				var got hydratedResult
				e.do(viewer, hydratedPage, map[string]any{"first": 20, "after": after}).as(t, &got)
				trips := e.tripsSince("HydratedPage", before)
				f.check(t, viewer, got, want)
				t.Logf("%s: %d round trips", pass, trips)
				if trips > budget || exact && trips != budget {
					t.Errorf("%s page cost %d round trips, want %d", pass, trips, budget)
				}
				return got
			}
			second := page("cold second", *first.FollowingFeed.PageInfo.EndCursor, all[20:40], 3, true)
			if f.st.Real { // with no client-side cache, warm is cold
				page("warm second", *first.FollowingFeed.PageInfo.EndCursor, all[20:40], 2, true)
			}
			// The third page's posts may be new to the replica (the
			// second page's read may have looked them up): a round trip
			// for them, none for the pull.
			page("third", *second.FollowingFeed.PageInfo.EndCursor, all[40:min(60, len(all))], 3, false)
		})
	}
}

// TestIncompleteReaderHydratedRoundTrips: a reader whose inbox is
// incomplete (never upgraded, or demoted: here its complete mark taken
// away, as a demotion does) merges its big-V followees' outboxes into
// every page. On a replica that never served it, a hydrated page costs
// 3 round trips: the view (with the big-V followees), the outboxes'
// seeks (with the posts of the inbox's entries), and the posts of the
// outboxes' entries (with the hydration, every author being known by
// then: FeedRequest.Alongside), where the hydration made them 4; then 2.
func TestIncompleteReaderHydratedRoundTrips(t *testing.T) {
	f := newFeedFixture(t)
	svc, err := feedcore.New(context.Background(), f.st.Client, feedcore.Options{Prefix: f.st.Prefix, BigVThreshold: 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, viewer := range []feedcore.ID{reader, fan} {
		t.Run(fmt.Sprintf("viewer=%d", viewer), func(t *testing.T) {
			if err := svc.Do(context.Background(), svc.Redis.B().Hdel().Key(svc.Keys.Reader(viewer)).Field("c").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			want := f.want(viewer)[:20]
			e := newEnvOpts(t, replicaClient(t, f.st), feedcore.Options{Prefix: f.st.Prefix, BigVThreshold: 3}, APIConfig{})
			for _, pass := range []struct {
				name   string
				budget int
			}{{"cold", 3}, {"warm", 2}} {
				before := e.tripsSoFar("HydratedPage")
				var got hydratedResult
				e.do(viewer, hydratedPage, map[string]any{"first": 20}).as(t, &got)
				trips := e.tripsSince("HydratedPage", before)
				f.check(t, viewer, got, want)
				t.Logf("%s: %d round trips", pass.name, trips)
				if (pass.name == "cold" || f.st.Real) && trips != pass.budget {
					t.Errorf("%s page cost %d round trips, want %d", pass.name, trips, pass.budget)
				}
			}
		})
	}
}

// remaining is extensions.cost.remaining of r: the points left.
func remaining(t *testing.T, r *gqlResponse) int {
	t.Helper()
	cost, _ := r.Extensions["cost"].(map[string]any)
	n, ok := cost["remaining"].(float64)
	if !ok {
		t.Fatalf("no extensions.cost.remaining in %v", r.Extensions)
	}
	return int(n)
}

// Paging a hydrated feed to the end: every page is complete and right.
func TestHydratedPagesToTheEnd(t *testing.T) {
	f := newFeedFixture(t)
	e := replica(t, f.st)
	want := f.want(reader)
	var after any
	for page := 0; len(want) > 0; page++ {
		var got hydratedResult
		e.do(reader, hydratedPage, map[string]any{"first": 30, "after": after}).as(t, &got)
		n := min(30, len(want))
		f.check(t, reader, got, want[:n])
		want = want[n:]
		if got.FollowingFeed.PageInfo.HasNextPage != (len(want) > 0) {
			t.Fatalf("page %d: hasNextPage %v with %d left", page, got.FollowingFeed.PageInfo.HasNextPage, len(want))
		}
		after = *got.FollowingFeed.PageInfo.EndCursor
	}
}

// likePost and unlikePost over GraphQL: idempotent per viewer, the payload
// shows the counters and flag the change left, deleted and missing posts
// are NOT_FOUND, and anonymous callers are refused.
func TestLikeMutations(t *testing.T) {
	e := newEnv(t)
	e.users("ann", "bob", "cat")
	post := e.publish(1, "like me")
	const like = `mutation($id: ID!) { likePost(id: $id) { post { id counts { likes } viewerHasLiked } } }`
	const unlike = `mutation($id: ID!) { unlikePost(id: $id) { post { id counts { likes } viewerHasLiked } } }`
	type payload struct {
		Post struct {
			ID     string
			Counts struct{ Likes int }
			Liked  bool `json:"viewerHasLiked"`
		}
	}
	run := func(viewer feedcore.ID, q string) payload {
		t.Helper()
		var out map[string]payload
		e.do(viewer, q, map[string]any{"id": post}).as(t, &out)
		for _, p := range out {
			if p.Post.ID != post {
				t.Fatalf("payload post %s, want %s", p.Post.ID, post)
			}
			return p
		}
		t.Fatal("empty payload")
		return payload{}
	}
	for i, step := range []struct {
		viewer feedcore.ID
		q      string
		likes  int
		liked  bool
	}{
		{2, like, 1, true}, {2, like, 1, true}, {3, like, 2, true},
		{2, unlike, 1, false}, {2, unlike, 1, false}, {1, unlike, 1, false}, {1, like, 2, true},
	} {
		if p := run(step.viewer, step.q); p.Post.Counts.Likes != step.likes || p.Post.Liked != step.liked {
			t.Errorf("step %d: %+v, want %d likes, liked %v", i, p.Post, step.likes, step.liked)
		}
	}
	// Another viewer sees the counter and its own flag.
	var seen struct {
		Node struct {
			Counts struct{ Likes int }
			Liked  bool `json:"viewerHasLiked"`
		}
	}
	e.do(3, `query($id: ID!) { node(id: $id) { ... on Post { counts { likes } viewerHasLiked } } }`, map[string]any{"id": post}).as(t, &seen)
	if seen.Node.Counts.Likes != 2 || !seen.Node.Liked {
		t.Errorf("node as cat: %+v", seen.Node)
	}
	mustCode(t, "anonymous like", e.do(0, like, map[string]any{"id": post}), "UNAUTHENTICATED")
	mustCode(t, "bad id", e.do(2, like, map[string]any{"id": "nope"}), "BAD_USER_INPUT")
	mustCode(t, "missing post", e.do(2, like, map[string]any{"id": "999999"}), "NOT_FOUND")
	e.do(1, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": post}).as(t, &struct{}{})
	mustCode(t, "like a deleted post", e.do(2, like, map[string]any{"id": post}), "NOT_FOUND")
	mustCode(t, "unlike a deleted post", e.do(3, unlike, map[string]any{"id": post}), "NOT_FOUND")
}

// Every operation's round trips are recorded under its type and name.
func TestRoundTripsPerOperation(t *testing.T) {
	e := newEnv(t)
	e.users("ann")
	e.do(1, `query Me { viewer { handle followerCount } }`, nil).as(t, &struct{}{})
	e.do(1, `query Me { viewer { handle followerCount } }`, nil).as(t, &struct{}{})
	e.do(1, `mutation Post { publishPost(input: {text: "x"}) { post { id } } }`, nil).as(t, &struct{}{})
	if n := testutil.CollectAndCount(e.metrics.trips); n != 2 {
		t.Errorf("%d round-trip series, want 2 (Me and Post)", n)
	}
	f := gather(t, e.metrics.Registry())
	if n, _ := f.value("feedd_graphql_redis_round_trips_count", "type", "mutation", "operation", "Post"); n != 1 {
		t.Errorf("mutation Post ran %v times, want 1", n)
	}
	if n, _ := f.value("feedd_graphql_redis_round_trips_count", "type", "query", "operation", "Me"); n != 2 {
		t.Errorf("query Me ran %v times, want 2", n)
	}
	if sum, _ := f.value("feedd_graphql_redis_round_trips_sum", "type", "query", "operation", "Me"); sum < 2 {
		t.Errorf("query Me cost %v round trips in all, want at least 2", sum)
	}
	// Each run of Me cost at most 2: both are in the le="2" bucket.
	if m, ok := f.metric("feedd_graphql_redis_round_trips", "type", "query", "operation", "Me"); !ok {
		t.Error("no round trips for Me")
	} else {
		for _, b := range m.GetHistogram().GetBucket() {
			if b.GetUpperBound() == 2 && b.GetCumulativeCount() != 2 {
				t.Errorf("runs of Me costing at most 2 round trips: %d, want 2", b.GetCumulativeCount())
			}
		}
	}
}

// liveFeed pages show each session's anchor, hydrated in one round trip
// with its counts and whether the viewer follows it.
func TestLiveFeedAnchors(t *testing.T) {
	e := newEnv(t)
	e.users("viewer", "ann", "bob", "cat")
	ctx := context.Background()
	for _, f := range []feedcore.Edge{{Follower: 1, Followee: 2}, {Follower: 1, Followee: 3}, {Follower: 4, Followee: 3}, {Follower: 3, Followee: 2}} {
		if err := e.svc.Follow(ctx, f.Follower, f.Followee); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now().Add(time.Hour)
	for i, anchor := range []feedcore.ID{2, 3, 2} {
		if _, err := e.svc.ScheduleLive(ctx, anchor, fmt.Sprintf("show %d", i), start.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	var got struct {
		LiveFeed struct {
			Edges []struct {
				Node struct {
					Title  string
					Anchor struct {
						Handle         string
						FollowerCount  int  `json:"followerCount"`
						FollowingCount int  `json:"followingCount"`
						Following      bool `json:"viewerIsFollowing"`
					}
				}
			}
		} `json:"liveFeed"`
	}
	before := e.tripsSoFar("Live")
	e.do(1, `query Live { liveFeed(first: 10) { edges { node { title anchor { handle followerCount followingCount viewerIsFollowing } } } } }`, nil).as(t, &got)
	t.Logf("liveFeed page of %d sessions: %d round trips", len(got.LiveFeed.Edges), e.tripsSince("Live", before))
	want := map[string]string{"show 0": "ann 2 0 true", "show 1": "bob 2 1 true", "show 2": "ann 2 0 true"}
	if len(got.LiveFeed.Edges) != len(want) {
		t.Fatalf("live feed %+v", got)
	}
	for _, ed := range got.LiveFeed.Edges {
		a := ed.Node.Anchor
		if s := fmt.Sprintf("%s %d %d %v", a.Handle, a.FollowerCount, a.FollowingCount, a.Following); s != want[ed.Node.Title] {
			t.Errorf("%s: anchor %s, want %s", ed.Node.Title, s, want[ed.Node.Title])
		}
	}
}

// A publishPost costs at most 2 Redis round trips with the default rate
// limit on: the log script, which spends the charge, and the post. The
// viewer check is answered from the process's memory of users seen to
// exist. Every lane.
func TestPublishRoundTrips(t *testing.T) {
	st := storetest.New(t)
	e := newEnvWith(t, replicaClient(t, st), st.Prefix, APIConfig{RateLimit: DefaultRateLimit})
	e.users("ann")
	const publish = `mutation Post($key: String) { publishPost(input: {text: "hi", idempotencyKey: $key}) { post { id databaseId text } } }`
	trips := func() (sum, runs float64) {
		f := gather(t, e.metrics.Registry())
		sum, _ = f.value("feedd_graphql_redis_round_trips_sum", "type", "mutation", "operation", "Post")
		runs, _ = f.value("feedd_graphql_redis_round_trips_count", "type", "mutation", "operation", "Post")
		return sum, runs
	}
	// Scripts load on first use (a round trip per script): not counted.
	e.do(1, publish, nil).as(t, &struct{}{})
	for _, key := range []any{nil, "k1", "k1"} {
		sum0, runs0 := trips()
		e.do(1, publish, map[string]any{"key": key}).as(t, &struct{}{})
		sum, runs := trips()
		if runs != runs0+1 {
			t.Fatalf("publishPost ran %v times, want 1", runs-runs0)
		}
		t.Logf("publishPost (idempotency key %v): %v round trips", key, sum-sum0)
		if sum-sum0 > 2 {
			t.Errorf("publishPost (idempotency key %v): %v round trips, want at most 2", key, sum-sum0)
		}
	}
}

// TestFeedAuthorsFollowed: on a followingFeed page, viewerIsFollowing is
// true for the authors the viewer follows and false on the viewer's own
// posts (the page read, which keeps only those, says so without a read of
// its own).
func TestFeedAuthorsFollowed(t *testing.T) {
	e := newEnv(t)
	defer feedtest.Workers(t, e.svc)()
	e.users("ann", "bob")
	e.do(1, `mutation { followUser(userId: "2") { user { id } } }`, nil).as(t, &struct{}{})
	for v, text := range map[feedcore.ID]string{1: "ann's", 2: "bob's"} {
		e.do(v, `mutation($t: String!) { publishPost(input: {text: $t}) { post { id } } }`, map[string]any{"t": text}).as(t, &struct{}{})
	}
	feedtest.Drain(t, e.svc)
	var got struct {
		FollowingFeed struct {
			Edges []struct {
				Node struct {
					Text   string
					Author struct {
						Handle    string
						Following bool `json:"viewerIsFollowing"`
					}
				}
			}
		} `json:"followingFeed"`
	}
	e.do(1, `{ followingFeed { edges { node { text author { handle viewerIsFollowing } } } } }`, nil).as(t, &got)
	seen := map[string]bool{}
	for _, ed := range got.FollowingFeed.Edges {
		n := ed.Node
		seen[n.Text] = true
		if want := n.Author.Handle == "bob"; n.Author.Following != want {
			t.Errorf("%s's post: viewerIsFollowing = %v, want %v", n.Author.Handle, n.Author.Following, want)
		}
	}
	if !seen["ann's"] || !seen["bob's"] {
		t.Errorf("feed = %+v, want ann's and bob's posts", got.FollowingFeed.Edges)
	}
}
