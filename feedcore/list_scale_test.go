package feedcore

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

// TestListPageCostIsFlat: a page of an author's followers and of its
// posts, each with the hydration the API adds for it (a follower list's
// users with their counts and the viewer's flags; a post list's
// counters, the viewer's flags and the author), costs the same round
// trips, and reply bytes within 10%, for an author with 1,000 followers
// and one with many more, cold and warm, first page and the next. The
// graph is written directly with pipelined writes: the followers and
// follower-times sets in full, profiles and following sets for the
// newest 1,000 followers (the only ones a page near the top reads).
//
// By default the big author has 20,000 followers; the measurement for a
// million, on a real Redis (its figures are logged with -v):
//
//	FEED_SCALE=1 FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./feedcore -run '^TestListPageCostIsFlat$' -v
//
// (FEED_SCALE_FOLLOWERS sets another size.)
func TestListPageCostIsFlat(t *testing.T) {
	big := 20000
	if os.Getenv(scaleEnv) != "" {
		storetest.RequireReal(t)
		big = scaleFollowers(t, 1_000_000)
	}
	st := storetest.New(t)
	s := newService(t, st, Options{})
	counted, bytes := countedService(t, st, Options{})
	const small, viewer = 1000, store.ID(1)
	authors := []struct {
		id        store.ID
		followers int
	}{{10_000_000, small}, {20_000_000, big}}
	buildTimedFollowers(t, s, viewer, authors[0].id, authors[0].followers)
	buildTimedFollowers(t, s, viewer, authors[1].id, authors[1].followers)
	type cost struct{ trips, bytes int64 }
	// measure runs read (a page and its hydration) and returns its cost
	// and the page's end cursor.
	measure := func(read func(ctx context.Context) (string, error)) (cost, string) {
		ctx, trips := roundtrip.NewContext(context.Background())
		b0 := bytes.Load()
		end, err := read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return cost{int64(trips.Trips()), bytes.Load() - b0}, end
	}
	// The scripts loaded first: a server that has not seen one answers
	// NOSCRIPT once, which no page pays twice.
	if err := counted.LoadScripts(context.Background()); err != nil {
		t.Fatal(err)
	}
	var got [2]map[string]cost
	for i, a := range authors {
		got[i] = map[string]cost{}
		for _, list := range []string{"followers", "posts"} {
			after := ""
			for _, page := range []string{"1 first page", "2 next page"} {
				var end string
				for _, warmth := range []string{"cold", "warm"} {
					var c cost
					c, end = measure(func(ctx context.Context) (string, error) {
						if list == "followers" {
							return followersPage(ctx, counted, viewer, a.id, after)
						}
						return postsPage(ctx, counted, viewer, a.id, after)
					})
					got[i][list+", "+page+", "+warmth] = c
				}
				after = end
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got[0])) {
		a, b := got[0][k], got[1][k]
		t.Logf("%-28s %d followers: %d round trips, %5d reply bytes; %d followers: %d round trips, %5d reply bytes",
			k, authors[0].followers, a.trips, a.bytes, authors[1].followers, b.trips, b.bytes)
		if a.trips != b.trips || float64(b.bytes) > 1.1*float64(a.bytes)+64 {
			t.Errorf("%s: the cost grew with the followers: %+v vs %+v", k, a, b)
		}
	}
}

// followersPage reads a page of author's followers as the API does for
// a UserConnection of users with their counts and the viewer's flags,
// and returns its end cursor.
func followersPage(ctx context.Context, s *Service, viewer, author store.ID, after string) (string, error) {
	pg, err := s.Followers(ctx, viewer, author, DefaultPageSize, after)
	if err != nil {
		return "", err
	}
	if len(pg.Users) != DefaultPageSize {
		return "", fmt.Errorf("%d followers on a page", len(pg.Users))
	}
	_, err = s.Hydrate(ctx, HydrateRequest{Viewer: viewer, Users: pg.Users, GraphCounts: pg.Users, Following: pg.Users, Relations: pg.Users})
	return pg.EndCursor, err
}

// postsPage reads a page of author's posts as the API does for posts with
// their counters, the viewer's flags and the author, and returns its end
// cursor.
func postsPage(ctx context.Context, s *Service, viewer, author store.ID, after string) (string, error) {
	pg, err := s.AuthorPosts(ctx, viewer, author, false, DefaultPageSize, after)
	if err != nil {
		return "", err
	}
	if len(pg.Edges) != DefaultPageSize {
		return "", fmt.Errorf("%d posts on a page", len(pg.Edges))
	}
	ids := make([]store.ID, len(pg.Edges))
	for i, e := range pg.Edges {
		ids[i] = e.Post.ID
	}
	_, err = s.Hydrate(ctx, HydrateRequest{Viewer: viewer, Counts: ids, Liked: ids, Favorited: ids, Users: []store.ID{author}})
	return pg.EndCursor, err
}

// buildTimedFollowers gives author n followers, author+1 .. author+n,
// the later the id the later the follow, and 100 posts, with pipelined
// writes of 10,000 commands, two workers: the followers and follower
// times sets in full; profiles, following sets and their times for the
// newest 1,000 (and for the author and viewer).
func buildTimedFollowers(tb testing.TB, s *Service, viewer, author store.ID, n int) {
	tb.Helper()
	ctx := context.Background()
	const batch = 10000
	base := testEpoch.UnixMilli()
	var next atomic.Int64
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			for {
				lo := int(next.Add(batch)) - batch
				if lo >= n {
					errs <- nil
					return
				}
				hi := min(lo+batch, n)
				fr := s.Redis.B().Zadd().Key(s.Keys.Followers(author)).ScoreMember()
				frt := s.Redis.B().Zadd().Key(s.Keys.FollowerTimes(author)).ScoreMember()
				var cmds []rueidis.Completed
				for i := lo; i < hi; i++ {
					f, at := author+1+store.ID(i), float64(base+int64(i))
					fr, frt = fr.ScoreMember(0, store.Member(f)), frt.ScoreMember(at, store.Member(f))
					if i >= n-1000 {
						cmds = append(cmds, s.Redis.B().Hset().Key(s.Keys.User(f)).FieldValue().FieldValue("h", "u"+store.FormatID(f)).FieldValue("n", "U").Build(),
							s.Redis.B().Zadd().Key(s.Keys.Following(f)).ScoreMember().ScoreMember(0, store.Member(author)).Build(),
							s.Redis.B().Zadd().Key(s.Keys.FollowingTimes(f)).ScoreMember().ScoreMember(at, store.Member(author)).Build())
					}
				}
				cmds = append(cmds, fr.Build(), frt.Build())
				if err := store.FirstErr(s.Redis.DoMulti(ctx, cmds...)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 2 {
		if err := <-errs; err != nil {
			tb.Fatal(err)
		}
	}
	var cmds []rueidis.Completed
	for _, u := range []store.ID{author, viewer} {
		cmds = append(cmds, s.Redis.B().Hset().Key(s.Keys.User(u)).FieldValue().FieldValue("h", "u"+store.FormatID(u)).FieldValue("n", "U").Build())
	}
	for i := range 100 {
		p, at := author*1000+store.ID(i), base+int64(i)*1000
		cmds = append(cmds, s.Redis.B().Hset().Key(s.Keys.Post(p)).FieldValue().FieldValue("a", store.FormatID(author)).
			FieldValue("t", store.ScoreArg(at)).FieldValue("x", "post "+store.Itoa(i)).Build(),
			s.Redis.B().Zadd().Key(s.Keys.Outbox(author)).ScoreMember().ScoreMember(float64(at), store.Member(p)).Build())
	}
	if err := store.FirstErr(s.Redis.DoMulti(ctx, cmds...)); err != nil {
		tb.Fatal(err)
	}
	if card, err := s.Redis.Do(ctx, s.Redis.B().Zcard().Key(s.Keys.FollowerTimes(author)).Build()).AsInt64(); err != nil || card != int64(n) {
		tb.Fatalf("author %d has %d timed followers (%v), want %d", author, card, err, n)
	}
}
