package feedcore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
)

// TestRealtimeCountsMatchTheFeed runs random publishes, replies,
// reposts and their undoing, deletes, follows, unfollows, blocks, mutes,
// hides, keyword filters, suspensions and their undoing, by ordinary and big-V
// authors, while every user has a following feed subscription open.
// After each round of a few operations, once the workers drained and the follows settled,
// every subscription's last update must come to what a pull-to-refresh
// from its since cursor shows (the last/before page read, capped at
// 100): its count and its authors. The subscriptions were told by
// notices alone: nothing in the test pokes them.
func TestRealtimeCountsMatchTheFeed(t *testing.T) {
	forEachSeed(t, 3, 500, runRealtimeModel)
}

// The model's words: posts say some of them, filters match one.
var rtWords = []string{"alpha", "beta", "gamma", "delta"}

func runRealtimeModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 29))
	s := testService(t, Options{BigVThreshold: 3})
	ctx := context.Background()
	const users = 8
	ids := idRange(1, users)
	mustUsers(t, s, ids...)
	// A first follow graph, and a post each: a since to count from.
	for _, u := range ids {
		for _, f := range ids {
			if u != f && rng.IntN(3) == 0 {
				follow(t, s, u, []store.ID{f})
			}
		}
		if _, err := s.Publish(ctx, u, "hello "+rtWords[rng.IntN(len(rtWords))]); err != nil {
			t.Fatal(err)
		}
	}
	drain(t, s)
	s.WaitForFollows()
	startRealtime(t, s, rtOptions)
	subs := map[store.ID]*updates{}
	since := map[store.ID]string{}
	for _, u := range ids {
		since[u] = topCursor(t, s, u)
		subs[u] = &updates{ch: followingUpdates(t, s, u, since[u])}
	}
	var posts []*Post
	pick := func() store.ID { return ids[rng.IntN(len(ids))] }
	// Short rounds: a change whose notice went missing is not hidden by
	// the recount of a later one.
	for round := range 30 {
		for range 1 + rng.IntN(3) {
			op, err := rtModelOp(ctx, s, rng, pick, &posts)
			if err != nil && !refusal(err) {
				t.Fatalf("round %d, %s: %v", round, op, err)
			}
			t.Logf("round %d: %s (%v)", round, op, err)
		}
		drain(t, s)
		s.WaitForFollows()
		drain(t, s)
		for _, u := range ids {
			n, authors := newPostsOracle(t, s, u, since[u])
			subs[u].await(t, fmt.Sprintf("round %d: user %d's count %d authors %v", round, u, n, authors), func(up *updates) bool {
				return up.last.NewPostCount == n && slices.Equal(nonNil(up.last.NewPostAuthors), nonNil(authors))
			})
		}
	}
}

// rtModelOp does one random operation and says which.
func rtModelOp(ctx context.Context, s *Service, rng *rand.Rand, pick func() store.ID, posts *[]*Post) (string, error) {
	a, b := pick(), pick()
	word := rtWords[rng.IntN(len(rtWords))]
	switch k := rng.IntN(100); {
	case k < 30:
		p, err := s.Publish(ctx, a, "news "+word)
		if err == nil {
			*posts = append(*posts, p)
		}
		return fmt.Sprintf("publish %d by %d", postID(p), a), err
	case k < 36 && len(*posts) > 0:
		parent := (*posts)[rng.IntN(len(*posts))]
		p, err := s.PublishPost(ctx, a, NewPost{Text: "re " + word, ReplyTo: parent.ID})
		if err == nil {
			*posts = append(*posts, p)
		}
		return fmt.Sprintf("reply %d by %d to %d", postID(p), a, parent.ID), err
	case k < 44 && len(*posts) > 0:
		p := (*posts)[rng.IntN(len(*posts))]
		_, err := s.Repost(ctx, a, p.ID)
		return fmt.Sprintf("%d reposts %d", a, p.ID), err
	case k < 48 && len(*posts) > 0:
		p := (*posts)[rng.IntN(len(*posts))]
		_, err := s.UndoRepost(ctx, a, p.ID)
		return fmt.Sprintf("%d undoes its repost of %d", a, p.ID), err
	case k < 55 && len(*posts) > 0:
		i := rng.IntN(len(*posts))
		p := (*posts)[i]
		*posts = slices.Delete(*posts, i, i+1)
		return fmt.Sprintf("delete %d by %d", p.ID, p.Author), s.Delete(ctx, p.Author, p.ID)
	case k < 66:
		return fmt.Sprintf("%d follows %d", a, b), s.Follow(ctx, a, b)
	case k < 72:
		return fmt.Sprintf("%d unfollows %d", a, b), s.Unfollow(ctx, a, b)
	case k < 76:
		return fmt.Sprintf("%d blocks %d", a, b), s.Block(ctx, a, b)
	case k < 79:
		return fmt.Sprintf("%d unblocks %d", a, b), s.Unblock(ctx, a, b)
	case k < 84:
		return fmt.Sprintf("%d mutes %d", a, b), s.Mute(ctx, a, b, 0)
	case k < 87:
		return fmt.Sprintf("%d unmutes %d", a, b), s.Unmute(ctx, a, b)
	case k < 90:
		return fmt.Sprintf("%d hides from %d", a, b), s.HidePostsFrom(ctx, a, b)
	case k < 92:
		return fmt.Sprintf("%d unhides from %d", a, b), s.UnhidePostsFrom(ctx, a, b)
	case k < 95:
		_, err := s.AddKeywordFilter(ctx, KeywordFilter{User: a, Keyword: word, WholeWord: true})
		return fmt.Sprintf("%d filters %q", a, word), err
	case k < 97:
		_, err := s.Suspend(ctx, a, ModAction{Operator: "model", Reason: "test"})
		return fmt.Sprintf("suspend %d", a), err
	case k < 98:
		_, err := s.Unsuspend(ctx, a, ModAction{Operator: "model", Reason: "test"})
		return fmt.Sprintf("unsuspend %d", a), err
	default:
		fs, err := s.KeywordFilters(ctx, a)
		if err != nil || len(fs) == 0 {
			return "unfilter", err
		}
		f := fs[rng.IntN(len(fs))]
		return fmt.Sprintf("%d unfilters %q", a, f.Keyword), s.RemoveKeywordFilter(ctx, a, f.ID)
	}
}

// refusal reports an error the model's random operations expect now and
// then: following oneself or someone blocked, reposting one's own post...
func refusal(err error) bool {
	var e *apierr.Error
	return errors.As(err, &e) && e.Code != apierr.Internal && e.Code != apierr.Unavailable
}

func nonNil(ids []store.ID) []store.ID {
	if ids == nil {
		return []store.ID{}
	}
	return ids
}

func postID(p *Post) store.ID {
	if p == nil {
		return 0
	}
	return p.ID
}
