package e2e

import (
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/Khan/genqlient/graphql"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
)

// schedule creates a session of c's viewer starting in `in` and returns it.
func schedule(t *testing.T, c graphql.Client, title string, in time.Duration) client.LiveSessionFields {
	t.Helper()
	at := time.Now().Add(in)
	s := must(client.ScheduleLive(t.Context(), c, client.ScheduleLiveInput{Title: title, ScheduledStartAt: at}))(t).ScheduleLive.Session
	if s.State != client.LiveStatePreview || s.Title != title || s.ScheduledStartAt == nil ||
		!s.ScheduledStartAt.Equal(at.Truncate(time.Millisecond)) || s.StartedAt != nil || s.EndedAt != nil {
		t.Fatalf("scheduleLive(%s at %v) = %+v", title, at, s)
	}
	return s.LiveSessionFields
}

// laterStart reports whether a goes first among LIVE sessions: it started
// later, or at the same millisecond with a higher id.
func laterStart(a, b client.LiveSessionFields) bool {
	if !a.StartedAt.Equal(*b.StartedAt) {
		return a.StartedAt.After(*b.StartedAt)
	}
	ia, _ := strconv.ParseUint(a.DatabaseId, 10, 64)
	ib, _ := strconv.ParseUint(b.DatabaseId, 10, 64)
	return ia > ib
}

// liveEdge is what a live feed page says of one session.
type liveEdge struct {
	title      string
	edge, node client.LiveState
}

// readLive pages c's live feed to the end, n at a time. first, when not
// nil, runs after the first page (to change things between pages).
func readLive(t *testing.T, c graphql.Client, n int, first func()) []liveEdge {
	t.Helper()
	var (
		got   []liveEdge
		after *string
		seen  = map[string]bool{}
	)
	for range 1000 {
		page := must(client.LiveFeed(t.Context(), c, &n, after))(t).LiveFeed
		if len(page.Edges) > n {
			t.Fatalf("asked for %d sessions, got %d", n, len(page.Edges))
		}
		for _, e := range page.Edges {
			if seen[e.Node.Id] {
				t.Fatalf("page size %d: session %s (%s) repeated", n, e.Node.Title, e.Node.Id)
			}
			seen[e.Node.Id] = true
			got = append(got, liveEdge{e.Node.Title, e.State, e.Node.State})
		}
		if !page.PageInfo.HasNextPage {
			return got
		}
		if page.PageInfo.EndCursor == nil {
			t.Fatal("hasNextPage without endCursor")
		}
		after = page.PageInfo.EndCursor
		if first != nil {
			first()
			first = nil
		}
	}
	t.Fatal("the live feed never ended")
	return nil
}

// TestLiveFeed is the happy path of the live tab: anchors schedule, start
// and end sessions; a follower's feed lists what is live, then what is
// scheduled (soonest first), then replays, and a paging session keeps its
// snapshot while sessions change state underneath it.
func TestLiveFeed(t *testing.T) {
	e := newEnv(t, feedcore.Options{})
	e.users("ann", "bob", "cat", "dan")
	e.workers()
	ann, bob, cat, dan := e.as(1), e.as(2), e.as(3), e.as(4)
	ctx := t.Context()
	for _, u := range []string{"2", "3"} { // database ids work as user ids too
		must(client.FollowUser(ctx, ann, u))(t)
	}

	schedule(t, bob, "bob later", 2*time.Hour)
	soon := schedule(t, bob, "bob soon", time.Hour)
	onAir := schedule(t, cat, "cat on air", -time.Minute)
	started := must(client.StartLive(ctx, cat, onAir.Id))(t).StartLive.Session
	if started.State != client.LiveStateLive || started.StartedAt == nil || started.EndedAt != nil {
		t.Fatalf("startLive = %+v", started)
	}
	replay := schedule(t, bob, "bob replay", -time.Minute)
	must(client.StartLive(ctx, bob, replay.Id))(t)
	ended := must(client.EndLive(ctx, bob, replay.Id))(t).EndLive.Session
	if ended.State != client.LiveStateReplay || ended.StartedAt == nil || ended.EndedAt == nil {
		t.Fatalf("endLive = %+v", ended)
	}
	cancelled := schedule(t, bob, "bob cancelled", 3*time.Hour)
	if c := must(client.EndLive(ctx, bob, cancelled.Id))(t).EndLive.Session; c.State != client.LiveStateReplay || c.StartedAt != nil {
		t.Fatalf("ending a scheduled session: %+v, want cancelled (REPLAY, never started)", c)
	}
	stranger := schedule(t, dan, "dan, not followed", time.Minute)
	must(client.StartLive(ctx, dan, stranger.Id))(t)
	e.drain()

	const (
		live    = client.LiveStateLive
		preview = client.LiveStatePreview
		rep     = client.LiveStateReplay
	)
	want := []liveEdge{
		{"cat on air", live, live},
		{"bob soon", preview, preview},
		{"bob later", preview, preview},
		{"bob replay", rep, rep},
	}
	for _, n := range []int{1, 2, 3, 100} {
		if got := readLive(t, ann, n, nil); !slices.Equal(got, want) {
			t.Fatalf("page size %d: live feed %+v, want %+v", n, got, want)
		}
	}

	// node(id) refetches a session.
	switch n := must(client.Node(ctx, ann, soon.Id))(t).Node.(type) {
	case *client.NodeNodeLiveSession:
		if n.Title != "bob soon" || n.Anchor.Handle != "bob" || n.State != preview {
			t.Errorf("node(soon) = %+v", n)
		}
	default:
		t.Errorf("node(soon) is %T, want a LiveSession", n)
	}

	// bob goes live early while ann scrolls: her paging session keeps the
	// snapshot's order and edge state; the node shows the session is live.
	var soonLive client.LiveSessionFields
	got := readLive(t, ann, 1, func() {
		soonLive = must(client.StartLive(ctx, bob, soon.Id))(t).StartLive.Session.LiveSessionFields
	})
	want[1].node = live
	if !slices.Equal(got, want) {
		t.Fatalf("paging while a session starts: %+v, want %+v", got, want)
	}
	// A new paging session sees both live, the most recent start first
	// (ties on the millisecond: the higher id first).
	catsLive, bobsLive := want[0], liveEdge{"bob soon", live, live}
	want = []liveEdge{catsLive, bobsLive, want[2], want[3]}
	if laterStart(soonLive, started.LiveSessionFields) {
		want[0], want[1] = bobsLive, catsLive
	}
	if got := readLive(t, ann, 2, nil); !slices.Equal(got, want) {
		t.Fatalf("after bob started: %+v, want %+v", got, want)
	}
}
