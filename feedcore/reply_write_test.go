package feedcore

import (
	"context"
	"testing"

	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestReplyRetry: a reply published with an idempotency key and retried,
// after a first attempt that died once its event was logged, is the same
// reply: the retry materializes it with its parent, which its parent's
// replies and comments count once.
func TestReplyRetry(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	parent, err := s.Publish(ctx, 1, "parent")
	if err != nil {
		t.Fatal(err)
	}
	in := NewPost{Text: "the answer", IdempotencyKey: "k1", ReplyTo: parent.ID}
	logged, err := s.LogPublish(ctx, 2, in, 1) // the first attempt dies here
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		p, err := s.PublishPost(ctx, 2, NewPost{Text: "the answer, again", IdempotencyKey: "k1"})
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != logged.ID || p.Text != "the answer" || p.ReplyTo != parent.ID || p.ReplyToAuthor != 1 {
			t.Fatalf("retry returned %+v, want reply %d to %d", p, logged.ID, parent.ID)
		}
	}
	ps, err := s.Posts(ctx, []store.ID{logged.ID})
	if err != nil || ps[0] == nil || ps[0].ReplyTo != parent.ID {
		t.Fatalf("stored reply %+v, %v", ps[0], err)
	}
	cs, err := s.PostCounts(ctx, []store.ID{parent.ID})
	if err != nil || cs[0].Comments != 1 {
		t.Fatalf("parent counts %+v, %v; want 1 comment", cs, err)
	}
}
