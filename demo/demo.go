// Package demo generates deterministic demo data through the feedcore API:
// about 300 users with a skewed follower graph (a few big-V authors, a long
// tail) whose follows were made over the last 90 days, about 3,600 posts
// over the last 7 days with some timestamp ties, the newest few with
// pictures, a GIF, a video and content warnings (served by feedd itself:
// media.go, with the avatars), threads of replies (600 of those posts) and
// reposts, a mix of active and inactive
// readers, and the active readers' favorites, so every path of the hybrid
// feed, and every list, can be tried from GraphiQL.
package demo

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/feedd/feedd/feedcore"
)

// Threshold is the big-V threshold the demo is shaped for. The default
// (10,000 followers) cannot be reached by 300 users, so `feedd serve`
// applies this one when it loads the demo and --bigv-threshold was not set:
// then the handful of most-followed authors are big-V and their posts are
// pulled by inactive readers instead of pushed to them.
const Threshold = 50

const (
	firstID     = 1001 // user ids are firstID, firstID+1, ...
	numUsers    = 300
	numPosts    = 3000
	numReplies  = 600 // threads: answers, answers to answers, authors going on
	numReposts  = 400
	activeShare = 0.6 // readers who read recently
	span        = 7 * 24 * time.Hour
	burstChance = 0.03 // chance a post starts a burst sharing one millisecond
	batchSize   = 250  // items per feedcore bulk call
	parallel    = 4    // bulk calls in flight; the store, not us, is the limit
)

// Viewer is a user worth looking at, with why.
type Viewer struct {
	ID          feedcore.ID
	Handle      string
	Description string
}

// Report says what was loaded and whom to try the feeds as.
type Report struct {
	Users, Follows, Posts, ActiveReaders int
	// Replies are among Posts; Reposts are reposts of them.
	Replies, Reposts int
	// Favorites is how many favorites (bookmarks) the active readers made.
	Favorites int
	// Threshold is the service's big-V threshold the report was made for.
	Threshold int
	// BigV are the authors above Threshold, most followed first.
	BigV []Viewer
	// Viewers are interesting X-Viewer-Id values: an active reader, an
	// inactive reader following big-V authors, a big-V author.
	Viewers []Viewer
}

// Load writes the demo data for seed into svc and returns once its fan-out
// is done. The same seed gives the same users, graph and posts; post times
// are relative to svc's clock. mediaBase is the absolute URL, ending in a
// slash, where MediaHandler is served (http://127.0.0.1:8080/demo/media/):
// the media of the showcase posts and the live covers point there.
func Load(ctx context.Context, svc *feedcore.Service, seed int64, mediaBase string) (Report, error) {
	rng := rand.New(rand.NewPCG(uint64(seed), 0xfeedd))
	people := makePeople(rng, numUsers)
	edges := makeFollows(rng, people)
	active := make([]feedcore.ID, 0, numUsers)
	isActive := map[feedcore.ID]bool{}
	for _, p := range people {
		if rng.Float64() < activeShare {
			active = append(active, p.ID)
			isActive[p.ID] = true
		}
	}
	posts := makePosts(rng, people, svc.Options().Now())
	shown := showcase(people, svc.Options().Now(), mediaBase)

	// The demo runs its own fan-out workers (any number may share a store)
	// so that it can wait for the fan-out between steps, whether or not the
	// caller runs workers.
	wctx, stop := context.WithCancel(ctx)
	workersDone := make(chan struct{})
	go func() {
		defer close(workersDone)
		_ = svc.RunWorkers(wctx, feedcore.WorkerOptions{Name: "demo-load", Block: 20 * time.Millisecond})
	}()
	defer func() { stop(); <-workersDone }()

	users := make([]feedcore.User, len(people))
	for i, p := range people {
		users[i] = p.User
		if p.AvatarURL != "" {
			users[i].AvatarURL = mediaBase + p.AvatarURL
		}
	}
	if _, err := svc.PutUsers(ctx, users); err != nil {
		return Report{}, fmt.Errorf("demo users: %w", err)
	}
	// Readers are marked active first, as if they had been reading all
	// along; following a big-V then puts them in its active set.
	if err := inBatches(ctx, active, 1, func(ctx context.Context, ids []feedcore.ID) error {
		return svc.Touch(ctx, ids[0])
	}); err != nil {
		return Report{}, fmt.Errorf("demo activity: %w", err)
	}
	// Posts go in before the follows, and their (empty) fan-out is drained
	// first: each follow then backfills the followee's posts into the
	// follower's inbox in one write, where publishing into an existing graph
	// would cost one inbox write per post and follower (~80,000 here), which
	// the embedded store takes tens of seconds to apply. The end state is
	// the same: every inbox holds its followees' recent posts.
	if err := inBatches(ctx, posts, batchSize, func(ctx context.Context, ps []*feedcore.Post) error {
		_, err := svc.PutPosts(ctx, ps)
		return err
	}); err != nil {
		return Report{}, fmt.Errorf("demo posts: %w", err)
	}
	if _, err := svc.PutPosts(ctx, shown); err != nil {
		return Report{}, fmt.Errorf("demo posts with media: %w", err)
	}
	// Engagement, skewed: most posts get a little, a few get a lot.
	for _, p := range posts {
		if rng.IntN(3) == 0 {
			continue
		}
		base := int(rng.ExpFloat64() * 12)
		c := feedcore.PostCounts{Likes: base, Comments: base / 4, Reposts: base / 6, Favorites: base / 3}
		if err := svc.SetCounts(ctx, p.ID, c); err != nil {
			return Report{}, fmt.Errorf("demo counts: %w", err)
		}
	}
	for i, p := range shown {
		n := len(shown) - i
		c := feedcore.PostCounts{Likes: 40 * n, Comments: 6 * n, Reposts: 3 * n, Favorites: 9 * n}
		if err := svc.SetCounts(ctx, p.ID, c); err != nil {
			return Report{}, fmt.Errorf("demo counts: %w", err)
		}
	}
	// Threads and reposts, after the posts they answer and repost.
	replies := makeReplies(rng, people, posts, svc.Options().Now())
	for _, ps := range replies {
		if _, err := svc.PutPosts(ctx, ps); err != nil {
			return Report{}, fmt.Errorf("demo replies: %w", err)
		}
	}
	reposts := makeReposts(rng, people, append(posts, flatten(replies)...), svc.Options().Now())
	if err := inBatches(ctx, reposts, batchSize, func(ctx context.Context, rs []*feedcore.Post) error {
		_, err := svc.PutReposts(ctx, rs)
		return err
	}); err != nil {
		return Report{}, fmt.Errorf("demo reposts: %w", err)
	}
	for i, l := range makeSessions(rng, people, svc.Options().Now()) {
		if i%2 == 0 {
			l.CoverURL = mediaBase + covers[i/2%len(covers)]
		}
		if err := svc.PutLive(ctx, l); err != nil {
			return Report{}, fmt.Errorf("demo live sessions: %w", err)
		}
	}
	if err := drain(ctx, svc); err != nil {
		return Report{}, err
	}
	lrng := listsRand(seed)
	favs := makeFavorites(lrng, edges, active, posts, svc.Options().Now())
	if err := loadLists(ctx, svc, edges, followTimes(lrng, edges, svc.Options().Now()), favs); err != nil {
		return Report{}, fmt.Errorf("demo follows and favorites: %w", err)
	}
	// Promotions of the authors who crossed the big-V threshold.
	if err := drain(ctx, svc); err != nil {
		return Report{}, err
	}
	r := report(people, edges, isActive, svc.Options().BigVThreshold)
	r.Posts, r.ActiveReaders, r.Favorites = len(posts)+len(shown)+len(flatten(replies)), len(active), len(favs)
	r.Replies, r.Reposts = len(flatten(replies)), len(reposts)
	return r, nil
}

// makeReplies answers recent posts, in rounds: each round answers the
// posts and replies before it (so threads grow: answers to answers, and
// a post's author going on under it, a third of the time), a few minutes
// to a few hours after what it answers, never past now. Ids are
// time-ordered like makePosts', after theirs.
func makeReplies(rng *rand.Rand, people []person, posts []*feedcore.Post, now time.Time) [][]*feedcore.Post {
	newest := now.Truncate(time.Millisecond).Add(-time.Minute)
	pool := append([]*feedcore.Post(nil), posts...)
	var rounds [][]*feedcore.Post
	n := len(posts)
	for made := 0; made < numReplies; {
		var round []*feedcore.Post
		for range min(numReplies/3, numReplies-made) {
			parent := pool[len(pool)-1-rng.IntN(min(len(pool), 400))] // recent ones more often
			if rng.IntN(2) == 0 {
				parent = pool[rng.IntN(len(pool))]
			}
			author := people[rng.IntN(len(people))]
			if rng.IntN(3) == 0 {
				author = personOf(people, parent.Author)
			}
			ts := parent.CreatedAt.Add(time.Duration(1+rng.IntN(240)) * time.Minute).Truncate(time.Millisecond)
			if ts.After(newest) {
				ts = newest
			}
			round = append(round, &feedcore.Post{ID: feedcore.ID(ts.UnixMilli())<<16 | feedcore.ID(n), Author: author.ID,
				Text: postText(rng, author.topic), CreatedAt: ts, ReplyTo: parent.ID, ReplyToAuthor: parent.Author})
			n++
		}
		made += len(round)
		pool = append(pool, round...)
		rounds = append(rounds, round)
	}
	return rounds
}

// makeReposts has users repost posts and replies, the most followed
// authors' most often, an hour to a day after them, never past now; one
// repost of a post per user. Ids are time-ordered, after the posts'.
func makeReposts(rng *rand.Rand, people []person, posts []*feedcore.Post, now time.Time) []*feedcore.Post {
	newest := now.Truncate(time.Millisecond).Add(-time.Minute)
	byRank := append([]*feedcore.Post(nil), posts...)
	sort.SliceStable(byRank, func(i, j int) bool {
		return personOf(people, byRank[i].Author).rank < personOf(people, byRank[j].Author).rank
	})
	done := map[[2]feedcore.ID]bool{}
	var out []*feedcore.Post
	for i := 0; len(out) < numReposts && i < 10*numReposts; i++ {
		orig := byRank[rng.IntN(1+rng.IntN(len(byRank)))] // skewed toward the top
		who := people[rng.IntN(len(people))]
		if done[[2]feedcore.ID{who.ID, orig.ID}] {
			continue
		}
		done[[2]feedcore.ID{who.ID, orig.ID}] = true
		ts := orig.CreatedAt.Add(time.Duration(60+rng.IntN(24*60)) * time.Minute).Truncate(time.Millisecond)
		if ts.After(newest) {
			ts = newest
		}
		out = append(out, &feedcore.Post{ID: feedcore.ID(ts.UnixMilli())<<16 | feedcore.ID(numPosts+numReplies+len(out)),
			Author: who.ID, CreatedAt: ts, RepostOf: orig.ID})
	}
	return out
}

// personOf is the person with id.
func personOf(people []person, id feedcore.ID) person {
	return people[id-firstID]
}

func flatten[T any](xss [][]T) []T {
	var out []T
	for _, xs := range xss {
		out = append(out, xs...)
	}
	return out
}

// makePosts spreads numPosts over the span before now. Creators post most;
// about a third of users only read. Bursts put several posts in the same
// millisecond, as imports and busy moments do, to exercise the id
// tie-break of the feed order.
func makePosts(rng *rand.Rand, people []person, now time.Time) []*feedcore.Post {
	weights := make([]float64, len(people))
	total := 0.0
	for i, p := range people {
		if p.rank >= len(creators) && rng.IntN(3) == 0 {
			continue // a reader who never posts
		}
		total += 1 / float64(p.rank+10) // creators several times as chatty
		weights[i] = total
	}
	newest := now.Truncate(time.Millisecond).Add(-time.Minute)
	posts := make([]*feedcore.Post, 0, numPosts)
	for len(posts) < numPosts {
		ts := newest.Add(-time.Duration(rng.Int64N(int64(span))))
		ts = ts.Truncate(time.Millisecond)
		n := 1
		if rng.Float64() < burstChance {
			n = 2 + rng.IntN(4)
		}
		for range min(n, numPosts-len(posts)) {
			p := people[sort.SearchFloat64s(weights, rng.Float64()*total)]
			posts = append(posts, &feedcore.Post{
				// Time-ordered ids like Publish makes (ms, then 16 bits);
				// the low bits are the post's index, so ties stay distinct.
				ID:        feedcore.ID(ts.UnixMilli())<<16 | feedcore.ID(len(posts)),
				Author:    p.ID,
				Text:      postText(rng, p.topic),
				CreatedAt: ts,
			})
		}
	}
	return posts
}

// drainTimeout bounds each wait for the demo's fan-out.
const drainTimeout = time.Minute

func drain(ctx context.Context, svc *feedcore.Service) error {
	ctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	if err := svc.Drain(ctx); err != nil {
		return fmt.Errorf("demo fan-out: %w", err)
	}
	return nil
}

// inBatches calls fn on consecutive batches of items, a few at a time.
func inBatches[T any](ctx context.Context, items []T, size int, fn func(context.Context, []T) error) error {
	g, ctx := errgroup.WithContext(ctx)
	limit := parallel
	if size == 1 {
		limit = 4 * parallel // single-item calls are round-trip bound
	}
	g.SetLimit(limit)
	for lo := 0; lo < len(items); lo += size {
		batch := items[lo:min(lo+size, len(items))]
		g.Go(func() error { return fn(ctx, batch) })
	}
	return g.Wait()
}

// makeSessions gives the most followed users live sessions in every state:
// live now (two starting in the same millisecond), scheduled, replays and a
// cancelled one, so the live feed has something in each section.
func makeSessions(rng *rand.Rand, people []person, now time.Time) []*feedcore.LiveSession {
	top := append([]person(nil), people...)
	sort.Slice(top, func(i, j int) bool { return top[i].rank < top[j].rank })
	top = top[:min(16, len(top))]
	at := func(d time.Duration) *time.Time { t := now.Add(d).Truncate(time.Millisecond).UTC(); return &t }
	tie := at(-20 * time.Minute)
	var out []*feedcore.LiveSession
	for i, p := range top {
		l := &feedcore.LiveSession{ID: feedcore.ID(900001 + i), Anchor: p.ID}
		hours := time.Duration(1+rng.IntN(48)) * time.Hour
		switch i % 4 {
		case 0: // live now
			l.Title, l.ScheduledStartAt, l.StartedAt = "Live: "+p.DisplayName+" on air", at(-hours/8), at(-hours/8+time.Minute)
			if i < 8 {
				l.StartedAt = tie
			}
		case 1: // scheduled
			l.Title, l.ScheduledStartAt = "Coming up with "+p.DisplayName, at(hours)
		case 2: // replay
			l.Title, l.ScheduledStartAt, l.StartedAt, l.EndedAt = "Replay: "+p.DisplayName+" live", at(-hours), at(-hours), at(-hours+45*time.Minute)
		case 3: // cancelled, or one more replay
			l.Title, l.ScheduledStartAt, l.EndedAt = "Cancelled: "+p.DisplayName, at(-hours), at(-hours+time.Minute)
			if i%8 == 7 {
				l.Title, l.StartedAt = "Replay: "+p.DisplayName+" late show", at(-hours)
			}
		}
		out = append(out, l)
	}
	return out
}
