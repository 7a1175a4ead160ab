package feedcore

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/realtime"
	"github.com/feedd/feedd/feedcore/store"
)

// A post by a followee is counted: the subscription from the top of an
// empty feed says nothing until the post, then 1 with its author; a
// second author's post makes 2, newest author first.
func TestRealtimeCountsNewPosts(t *testing.T) {
	s := testService(t, Options{})
	mustUsers(t, s, 1, 2, 3)
	follow(t, s, 1, []store.ID{2, 3})
	drain(t, s)
	startRealtime(t, s, rtOptions)
	u := &updates{ch: followingUpdates(t, s, 1, "")}
	if u.take(); u.n != 0 {
		t.Fatalf("an empty feed sent %+v", u.last)
	}
	if _, err := s.Publish(context.Background(), 2, "one"); err != nil {
		t.Fatal(err)
	}
	u.awaitCount(t, 1, []store.ID{2})
	if _, err := s.Publish(context.Background(), 3, "two"); err != nil {
		t.Fatal(err)
	}
	u.awaitCount(t, 2, []store.ID{3, 2})
}

// On subscribe from a cursor, the count stands at once; a deleted post
// arrives in deletedPostIds and leaves the count.
func TestRealtimeSinceAndDeletes(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	follow(t, s, 1, []store.ID{2})
	if _, err := s.Publish(ctx, 2, "seen"); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	since := topCursor(t, s, 1)
	var posts []store.ID
	for _, text := range []string{"a", "b"} {
		p, err := s.Publish(ctx, 2, text)
		if err != nil {
			t.Fatal(err)
		}
		posts = append(posts, p.ID)
	}
	drain(t, s)
	startRealtime(t, s, rtOptions)
	u := &updates{ch: followingUpdates(t, s, 1, since)}
	u.awaitCount(t, 2, []store.ID{2})
	if u.n != 1 {
		t.Fatalf("%d updates on subscribe, want 1", u.n)
	}
	if err := s.Delete(ctx, 2, posts[0]); err != nil {
		t.Fatal(err)
	}
	u.await(t, "the delete", func(u *updates) bool {
		return u.last.NewPostCount == 1 && slices.Contains(u.deleted, posts[0])
	})
}

// A since that is no following feed cursor of the viewer is
// INVALID_CURSOR; the subscription is not made.
func TestRealtimeBadCursor(t *testing.T) {
	s := testService(t, Options{})
	mustUsers(t, s, 1, 2)
	follow(t, s, 2, []store.ID{1})
	if _, err := s.Publish(context.Background(), 1, "x"); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	startRealtime(t, s, rtOptions)
	foreign := topCursor(t, s, 2) // viewer 2's cursor
	for _, since := range []string{"garbage", foreign} {
		_, err := s.FollowingFeedUpdates(context.Background(), 1, since)
		if CodeOf(err) != apierr.InvalidCursor {
			t.Errorf("since %q: %v (code %s), want INVALID_CURSOR", since, err, CodeOf(err))
		}
	}
	if n := s.RealtimeStats().Subscriptions; n != 0 {
		t.Errorf("%d subscriptions open after refusals", n)
	}
}

// Past MaxPerViewer, a subscription is RATE_LIMITED; closing one makes
// room.
func TestRealtimePerViewerLimit(t *testing.T) {
	s := testService(t, Options{})
	mustUsers(t, s, 1)
	o := rtOptions
	o.MaxPerViewer = 2
	startRealtime(t, s, o)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	first, err := s.FollowingFeedUpdates(ctx, 1, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.LiveFeedUpdates(context.Background(), 1); err != nil {
		t.Fatal(err)
	}
	_, err = s.FollowingFeedUpdates(context.Background(), 1, "")
	if !errors.Is(err, realtime.ErrTooManySubscriptions) || CodeOf(err) != apierr.RateLimited {
		t.Fatalf("third subscription: %v (code %s), want ErrTooManySubscriptions, RATE_LIMITED", err, CodeOf(err))
	}
	cancel()
	for range first { // closes once its context ended
	}
	waitFor(t, "the closed subscription to leave", func() bool { return s.RealtimeStats().Subscriptions == 1 })
	if _, err := s.FollowingFeedUpdates(context.Background(), 1, ""); err != nil {
		t.Fatalf("after one closed: %v", err)
	}
}
