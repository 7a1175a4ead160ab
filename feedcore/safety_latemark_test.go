package feedcore

import (
	"context"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/feedcore/timeline"
	"github.com/feedd/feedd/redisstore/storetest"
)

// TestLateMarkConfirmsTheMarker: a post stored late (an import, or the
// dispatcher materializing a logged publish) while its author's
// suspension is lifted between markSuspended's read of the marker and its
// write of the mark ends up unmarked, with no second pass to repair it;
// and one stored while a suspension lands there ends up marked.
func TestLateMarkConfirmsTheMarker(t *testing.T) {
	s := newService(t, storetest.New(t), Options{}) // no workers: the hook runs on this goroutine only
	mustUsers(t, s, 1)
	t.Cleanup(func() { timeline.TestHookAfterMarkerRead = func() {} })
	ctx, mod := context.Background(), ModAction{Operator: "test", Reason: "race"}
	for i, suspended := range []bool{true, false} {
		change := s.Suspend
		if suspended { // lifted in between
			change = s.Unsuspend
			if _, err := s.Suspend(ctx, 1, mod); err != nil {
				t.Fatal(err)
			}
		}
		once := false
		timeline.TestHookAfterMarkerRead = func() {
			if !once {
				once = true
				if _, err := change(ctx, 1, mod); err != nil {
					t.Error(err)
				}
			}
		}
		id := store.ID(5000 + i)
		if _, err := s.PutPosts(ctx, []*content.Post{{ID: id, Author: 1, Text: "late", CreatedAt: testEpoch.Add(time.Duration(i) * time.Second)}}); err != nil {
			t.Fatal(err)
		}
		timeline.TestHookAfterMarkerRead = func() {}
		ps, err := s.Posts(ctx, []store.ID{id})
		if err != nil {
			t.Fatal(err)
		}
		if want := !suspended; ps[0] == nil || ps[0].AuthorSuspended != want {
			t.Errorf("post stored as the suspension turned %v: %+v, want marked %v", want, ps[0], want)
		}
	}
}
