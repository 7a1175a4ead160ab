package feedcore

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
)

// countedService is a second Service on st's server and prefix whose
// connections count the reply bytes they read.
func countedService(t *testing.T, st *storetest.Store, o Options) (*Service, *atomic.Int64) {
	s, replies, _ := countedServiceBoth(t, st, o)
	return s, replies
}

// countedServiceBoth is countedService counting the bytes sent to Redis
// too.
func countedServiceBoth(t *testing.T, st *storetest.Store, o Options) (_ *Service, replies, sent *atomic.Int64) {
	t.Helper()
	replies, sent = &atomic.Int64{}, &atomic.Int64{}
	ro := redisstore.Options{URL: os.Getenv(storetest.Env), Timeout: 30 * time.Second, ClientName: "feedd-test-counted",
		Dial: storetest.CountingDialBoth(replies, sent)}
	if st.Embedded != nil {
		ro.URL, ro.DisableCache, ro.SingleNode = "redis://"+st.Embedded.Addr(), true, true
	}
	counted, err := redisstore.Open(context.Background(), ro)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(counted.Close)
	return newService(t, &storetest.Store{Store: counted, Prefix: st.Prefix, Real: st.Real}, o), replies, sent
}

// TestPageCostDoesNotGrowWithTheNetwork: the Redis reply bytes of a warm
// followingFeed page of an active reader (the first, the next after its
// cursor, and a refresh before it) stay within 2x whether 20 or 20,000
// accounts elsewhere are big-V, and whether the reader follows 10
// authors or those plus 2,000 accounts that never post. Reading a global
// big-V set or the whole following list on every page fails it.
func TestPageCostDoesNotGrowWithTheNetwork(t *testing.T) {
	st := storetest.New(t)
	// Eight stream shards: the 20,000 promotions run on eight dispatchers.
	var bigV atomic.Int64 // the big-V threshold: the default, but while bigVs runs
	bigV.Store(10000)
	// An inbox at its cap has a horizon: 110 posts in an inbox of 100,
	// which a first page (20, and the repost window: 71 entries) and the
	// next do not read down to.
	o := Options{FollowLimit: 2100, StreamShards: 8, InboxCap: 100, BigVThresholdFunc: func() int { return int(bigV.Load()) }}
	s := newService(t, st, o)
	startWorkers(t, s, WorkerOptions{})
	cs, bytes := countedService(t, st, o)
	ctx := context.Background()

	const reader = store.ID(1)
	authors := idRange(11, 10)
	mustUsers(t, s, reader)
	putUsers(t, s, authors)
	follow(t, s, reader, authors)
	for round := range 11 {
		for _, a := range authors {
			if _, err := s.Publish(ctx, a, "post "+store.Itoa(round)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Touch(ctx, reader); err != nil {
		t.Fatal(err)
	}
	drain(t, s)

	// A warm page costs the same whether first, after a cursor (the
	// second page) or before one (a pull to refresh): a cursor above the
	// inbox's horizon reads nothing the first page does not.
	pages := func(what string) (n [3]int64) {
		t.Helper()
		reqs := []FeedRequest{{Viewer: reader, First: 20}}
		for i := range 3 {
			before := bytes.Load()
			pg, err := cs.FollowingFeed(ctx, reqs[i])
			n[i] = bytes.Load() - before
			if err != nil {
				t.Fatal(err)
			}
			if want := []int{20, 20, 0}[i]; len(pg.Edges) != want {
				t.Fatalf("%s: page %d of %d posts, want %d", what, i+1, len(pg.Edges), want)
			}
			if i == 0 {
				reqs = append(reqs, FeedRequest{Viewer: reader, First: 20, After: pg.EndCursor},
					FeedRequest{Viewer: reader, Last: 20, Before: pg.StartCursor})
			}
		}
		return n
	}
	warmPage := func(what string) [3]int64 {
		t.Helper()
		drain(t, s)
		pages(what) // warms the client-side cache
		n := pages(what)
		t.Logf("%s: a warm page read %d reply bytes, the next %d, a refresh %d", what, n[0], n[1], n[2])
		return n
	}

	// 20 big-V accounts the reader does not follow.
	bigVs := func(from store.ID, n int) {
		t.Helper()
		ids := idRange(from, n)
		putUsers(t, s, ids)
		// At threshold 0 one follower makes an account big-V; 20 fans
		// share the edges, within the follow limit.
		prev := bigV.Swap(0)
		defer bigV.Store(prev)
		fans := idRange(900_001, 20)
		putUsers(t, s, fans)
		edges := make([]Edge, len(ids))
		for i, b := range ids {
			edges[i] = Edge{Follower: fans[i%len(fans)], Followee: b}
		}
		followEdges(t, s, edges)
		// Promotions queue on the workers: allow them minutes under -race.
		ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		if err := s.Drain(ctx); err != nil {
			t.Fatal(err)
		}
	}
	bigVs(100_000, 20)
	base := warmPage("20 big-V elsewhere")
	if !isBigV(t, s, 100_000) {
		t.Fatal("the network's big-V accounts were not promoted")
	}

	// The embedded store runs each promotion's scripts in Go, too slowly
	// under -race for 20,000; a tenth still shows a global set's cost.
	many := 20_000
	if !st.Real {
		many = 2_000
	}
	bigVs(100_020, many-20)
	withBigV := warmPage(store.Itoa(many) + " big-V elsewhere")
	if !isBigV(t, s, 100_000+store.ID(many)-1) {
		t.Fatal("the network's big-V accounts were not promoted")
	}

	silent := idRange(200_000, 2000)
	putUsers(t, s, silent)
	follow(t, s, reader, silent)
	withSilent := warmPage("10 authors and 2,000 silent followees")

	for _, c := range []struct {
		what string
		n    [3]int64
	}{{store.Itoa(many) + " big-V accounts elsewhere", withBigV}, {"2,000 silent followees", withSilent}} {
		for i, page := range []string{"first page", "second page", "refresh"} {
			if c.n[i] > 2*base[i] {
				t.Errorf("with %s a warm %s costs %d reply bytes, more than twice the %d of the small network", c.what, page, c.n[i], base[i])
			}
		}
	}
}

func isBigV(t *testing.T, s *Service, id store.ID) bool {
	t.Helper()
	mode, _ := s.Do(context.Background(), s.Redis.B().Get().Key(s.Keys.PushMode(id)).Build()).ToString()
	return mode == timeline.PushAct
}

// TestLateFanoutToAnUnfollowerIsHidden: a fan-out that read the follower
// list just before an unfollow writes its post after the unfollow's
// cleanup. The page, which no longer reads the following set, hides it by
// the reader's recent-unfollow note; a new follow shows the author again.
// The big-V followees set follows the unfollow too.
func TestLateFanoutToAnUnfollowerIsHidden(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	follow(t, s, 1, []store.ID{2, 3})
	p2, err := s.Publish(ctx, 2, "by two")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Publish(ctx, 3, "by three"); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	if err := s.Promote(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if bv, _ := s.BigVFollowees(ctx, 1); len(bv) != 1 || bv[0] != 3 {
		t.Fatalf("big-V followees after promoting 3: %v, want [3]", bv)
	}
	if err := s.Unfollow(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Unfollow(ctx, 1, 3); err != nil {
		t.Fatal(err)
	}
	if bv, _ := s.BigVFollowees(ctx, 1); len(bv) != 0 {
		t.Fatalf("big-V followees after unfollowing 3: %v, want none", bv)
	}
	// The straggler: 2's post written to 1's inbox after the cleanup.
	late := s.AppendPush(nil, s.PostsTL(), 1, store.Item{TS: p2.CreatedAt.UnixMilli(), ID: p2.ID}, false)
	if err := store.FirstErr(s.DoMulti(ctx, late...)); err != nil {
		t.Fatal(err)
	}
	if got := readAll(t, s, 1, 10); len(got) != 0 {
		t.Fatalf("feed after unfollowing both shows %v", got)
	}
	follow(t, s, 1, []store.ID{2})
	drain(t, s)
	if got := readAll(t, s, 1, 10); len(got) != 1 || got[0] != p2.ID {
		t.Fatalf("feed after following 2 again: %v, want [%d]", got, p2.ID)
	}
}

// TestUnfollowNotesAreBounded: a reader's recent-unfollow notes, which
// every page reads, hold at most maxUnfollowNotes, the newest, and none
// older than unfollowMemory; a straggler's post of an author whose note
// has lapsed is no longer hidden (the limit the README states).
func TestUnfollowNotesAreBounded(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	const reader = store.ID(1)
	// The first for the lapse; the other maxUnfollowNotes+1 overflow the notes.
	authors := idRange(2, timeline.MaxUnfollowNotes+2)
	putUsers(t, s, append([]store.ID{reader}, authors...))
	follow(t, s, reader, authors)
	p, err := s.Publish(ctx, authors[0], "by the first")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	notes := func() []string {
		t.Helper()
		ms, err := s.Redis.Do(ctx, s.Redis.B().Zrange().Key(s.Keys.Unfollowed(reader)).Min("0").Max("-1").Build()).AsStrSlice()
		if err != nil {
			t.Fatal(err)
		}
		return ms
	}
	straggle := func() {
		t.Helper()
		late := s.AppendPush(nil, s.PostsTL(), reader, store.Item{TS: p.CreatedAt.UnixMilli(), ID: p.ID}, false)
		if err := store.FirstErr(s.DoMulti(ctx, late...)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Unfollow(ctx, reader, authors[0]); err != nil {
		t.Fatal(err)
	}
	straggle()
	clk.advance(timeline.UnfollowMemory - time.Second)
	if got := readAll(t, s, reader, 10); len(got) != 0 {
		t.Fatalf("within %v of the unfollow the feed shows %v", timeline.UnfollowMemory, got)
	}
	clk.advance(2 * time.Second)
	if got := readAll(t, s, reader, 10); len(got) != 1 || got[0] != p.ID {
		t.Fatalf("past %v the note should lapse: feed %v, want [%d]", timeline.UnfollowMemory, got, p.ID)
	}
	for _, a := range authors[1:] {
		clk.advance(time.Millisecond)
		if err := s.Unfollow(ctx, reader, a); err != nil {
			t.Fatal(err)
		}
	}
	ms := notes()
	if len(ms) != timeline.MaxUnfollowNotes {
		t.Fatalf("%d unfollow notes, want the newest %d", len(ms), timeline.MaxUnfollowNotes)
	}
	if ms[0] != store.Member(authors[2]) || ms[len(ms)-1] != store.Member(authors[len(authors)-1]) {
		t.Fatalf("notes run from %x to %x, want the %d newest unfollows", ms[0], ms[len(ms)-1], timeline.MaxUnfollowNotes)
	}
}

// TestActivityIsThrottled: a reader's pages record its read in its
// activity shard at most once per touchEvery in one process.
func TestActivityIsThrottled(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	const reader = store.ID(7)
	mustUsers(t, s, reader)
	seenAt := func() int64 {
		t.Helper()
		ms, err := s.Redis.Do(ctx, s.SeenCmd(reader)).AsFloat64()
		if err != nil {
			t.Fatal(err)
		}
		return int64(ms)
	}
	page := func() {
		t.Helper()
		if _, err := s.FollowingFeed(ctx, FeedRequest{Viewer: reader, First: 5}); err != nil {
			t.Fatal(err)
		}
	}
	page()
	first := clk.ms.Load()
	if got := seenAt(); got != first {
		t.Fatalf("first read recorded at %d, want %d", got, first)
	}
	clk.advance(core.TouchEvery - time.Second)
	page()
	if got := seenAt(); got != first {
		t.Fatalf("a read within %v wrote the activity again (%d, want %d)", core.TouchEvery, got, first)
	}
	clk.advance(2 * time.Second)
	page()
	if got := seenAt(); got != clk.ms.Load() {
		t.Fatalf("a read past %v recorded %d, want %d", core.TouchEvery, got, clk.ms.Load())
	}
}
