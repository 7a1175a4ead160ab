package main

import (
	"context"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/Khan/genqlient/graphql"

	"github.com/feedd/feedd/client"
)

// lagRun is what the fan-out lag probe saw in one phase: the author it
// published as, and each sample with when it was taken (from the phase's
// start); posts are the posts it published.
type lagRun struct {
	author    string
	followers int
	samples   []lagSample
	timeouts  int
	posts     int
}

type lagSample struct{ at, lag time.Duration }

// probeLag measures fan-out lag n times, spread over d: it picks the most
// followed of a few random accounts as the author, has a random user
// follow it (so that user is a follower, wherever it falls in the
// fan-out's id order), publishes as the author, and polls the follower's
// first page until the post shows. Both are active users (pop): a dormant
// follower's read would be a return, and a dormant one gets no pushes.
func probeLag(ctx context.Context, cl *clients, pop *population, cfg loadConfig, d time.Duration, n int) lagRun {
	var run lagRun
	if n <= 0 {
		return run
	}
	start := time.Now()
	r := rand.New(rand.NewPCG(cfg.Seed, 0x1a9))
	as := func(id int) graphql.Client { c, _ := cl.as(id); return c }
	author, followers := 0, -1
	for range 20 {
		id := pop.viewer(r)
		u, err := client.User(ctx, as(id), "u"+strconv.Itoa(id))
		if err == nil && u.User != nil && u.User.FollowerCount > followers {
			author, followers = id, u.User.FollowerCount
		}
	}
	if author == 0 {
		return run
	}
	run.author, run.followers = "u"+strconv.Itoa(author), followers
	gap := d / time.Duration(n+1)
	timeout := cfg.LagTimeout
	if timeout <= 0 {
		timeout = 30 * time.Second
	}
	pause := func() {
		select {
		case <-ctx.Done():
		case <-time.After(gap / 2):
		}
	}
	for i := 0; i < n; i++ {
		if pause(); ctx.Err() != nil {
			break
		}
		f := pop.viewer(r)
		if f == author {
			continue
		}
		lag, seen, published := lagSampleOnce(ctx, as(author), as(f), userNodeID(author), timeout)
		if published {
			run.posts++
		}
		switch {
		case seen:
			run.samples = append(run.samples, lagSample{at: time.Since(start), lag: lag})
		case ctx.Err() == nil && lag > 0: // a sample the run's end cut short is no verdict
			run.timeouts++
		}
		pause()
	}
	return run
}

// lagSampleOnce has follower follow the author, publishes as the author,
// and polls the follower's first page until the post shows (seen), or
// timeout passes (the time waited, not seen). A follow or a publish that
// fails is no sample (0, not seen); published says the post was.
func lagSampleOnce(ctx context.Context, author, follower graphql.Client, authorID string, timeout time.Duration) (lag time.Duration, seen, published bool) {
	if _, err := client.FollowUser(ctx, follower, authorID); err != nil {
		return 0, false, false
	}
	post, err := client.PublishPost(ctx, author, client.PublishPostInput{Text: "feedload fan-out probe"})
	if err != nil {
		return 0, false, false
	}
	at := time.Now()
	id := post.PublishPost.Post.Id
	five := 5
	for ctx.Err() == nil && time.Since(at) < timeout {
		page, err := client.FollowingFeed(ctx, follower, &five, nil, nil, nil)
		if err == nil {
			for _, e := range page.FollowingFeed.Edges {
				if e.Node.Id == id {
					return time.Since(at), true, true
				}
			}
		}
		// A poll, not a synchronisation: the next look at the page.
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(at), false, true
}
