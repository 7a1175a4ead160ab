package feedcore

import (
	"context"
	"testing"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
)

func TestHandles(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	handleOwner := func(h string) store.ID {
		t.Helper()
		u, err := s.UserByHandle(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if u == nil {
			return 0
		}
		return u.ID
	}
	// A rename frees the old handle for someone else.
	for _, u := range []User{{ID: 1, Handle: "ann"}, {ID: 1, Handle: "anna"}, {ID: 2, Handle: "ann"}} {
		if err := s.PutUser(ctx, u); err != nil {
			t.Fatalf("put %+v: %v", u, err)
		}
	}
	if handleOwner("anna") != 1 || handleOwner("ann") != 2 {
		t.Fatalf("after the rename: anna -> %d, ann -> %d; want 1 and 2", handleOwner("anna"), handleOwner("ann"))
	}
	// A batch stopped by a clash stores nothing after it and keeps no
	// handle claimed for those users.
	if err := s.PutUser(ctx, User{ID: 9, Handle: "taken"}); err != nil {
		t.Fatal(err)
	}
	n, err := s.PutUsers(ctx, []User{{ID: 3, Handle: "early"}, {ID: 4, Handle: "taken"}, {ID: 5, Handle: "late"}})
	if n != 1 || store.CodeOf(err) != apierr.BadInput {
		t.Fatalf("batch with a clash: stored %d, err %v; want 1 and BAD_USER_INPUT", n, err)
	}
	if handleOwner("early") != 3 || handleOwner("taken") != 9 || handleOwner("late") != 0 {
		t.Fatalf("after the clash: early -> %d, taken -> %d, late -> %d", handleOwner("early"), handleOwner("taken"), handleOwner("late"))
	}
	if err := s.PutUser(ctx, User{ID: 6, Handle: "late"}); err != nil {
		t.Fatalf("the handle a stopped batch claimed is free again: %v", err)
	}
}
