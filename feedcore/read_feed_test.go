package feedcore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
)

func TestFeedBasics(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	if err := s.Follow(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	// 2 and 3 publish; ties on ts included.
	var want []store.ID
	for i := 0; i < 10; i++ {
		p := &content.Post{ID: store.ID(100 + i), Author: 2, Text: "x", CreatedAt: base.Add(time.Duration(i/3) * time.Second)}
		if err := s.PutPost(ctx, p); err != nil {
			t.Fatal(err)
		}
		want = append(want, p.ID)
		if err := s.PutPost(ctx, &content.Post{ID: store.ID(200 + i), Author: 3, Text: "y", CreatedAt: base}); err != nil {
			t.Fatal(err)
		}
	}
	own, err := s.Publish(ctx, 1, "hello")
	if err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	want = append(want, own.ID)
	slices.Reverse(want) // newest first: own post, then 109..100 by (ts, id) desc
	want = append([]store.ID{own.ID}, want[1:]...)
	for _, n := range []int{1, 2, 3, 7, 20} {
		got := readAll(t, s, 1, n)
		if !slices.Equal(got, want) {
			t.Fatalf("page size %d: got %v want %v", n, got, want)
		}
	}
}

// TestFeedPagesAcrossManyTies: more posts share one millisecond than a
// plain seek reads past its cursor (timeline's seekSlack), in the inbox
// and, at a small inbox cap, in the outboxes below its horizon; pages of
// every size, toward older and toward newer posts, still show every post
// once, in feed order (newer first, then larger id first).
func TestFeedPagesAcrossManyTies(t *testing.T) {
	for _, inboxCap := range []int{800, 24} {
		s := testService(t, Options{InboxCap: inboxCap})
		ctx := context.Background()
		mustUsers(t, s, 1, 2, 3, 4)
		for _, a := range []store.ID{2, 3, 4} {
			if err := s.Follow(ctx, 1, a); err != nil {
				t.Fatal(err)
			}
		}
		base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
		var want []store.ID
		for i := range 90 {
			p := &content.Post{ID: store.ID(1000 + i), Author: store.ID(2 + i%3), Text: "tie", CreatedAt: base}
			if i >= 80 { // a few older ones after the ties
				p.CreatedAt = base.Add(-time.Duration(i) * time.Second)
			}
			if err := s.PutPost(ctx, p); err != nil {
				t.Fatal(err)
			}
			want = append(want, p.ID)
		}
		drain(t, s)
		slices.Reverse(want[:80]) // the ties: larger id first
		for _, n := range []int{1, 3, 20, 100} {
			if got := readAll(t, s, 1, n); !slices.Equal(got, want) {
				t.Fatalf("cap %d, forward pages of %d: got %v want %v", inboxCap, n, got, want)
			}
			if got := readAllBackward(t, s, 1, n); !slices.Equal(got, want) {
				t.Fatalf("cap %d, backward pages of %d: got %v want %v", inboxCap, n, got, want)
			}
		}
	}
}
