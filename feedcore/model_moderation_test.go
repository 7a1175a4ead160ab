package feedcore

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
)

// The model test's moderation (model_test.go's harness): takedowns and
// suspensions among the other operations. For the oracle a post taken down
// is deleted, and a suspended account's posts are in no feed (its own
// included) until it is unsuspended; its follows, likes and relations
// stay, and whatever it does outside a request (the store's own calls,
// which carry no charge: an import) goes on, hidden.

// TestModerationMatchesModel runs random publishes, deletes, follows,
// unfollows, likes, relations, reads, time passing and threshold moves
// with takedowns, suspensions and unsuspensions (and their repeats, which
// change nothing). Right after each takedown and suspension no feed may
// show what it hides; after each drain every feed, paged both ways, must
// equal the oracle's.
func TestModerationMatchesModel(t *testing.T) {
	forEachSeed(t, 4, 1000, runModerationModel)
}

// modRun is a model run with what the oracle needs of moderation beside
// the model: the posts taken down.
type modRun struct {
	*modelRun
	takenDown map[store.ID]bool
}

func runModerationModel(t *testing.T, seed uint64) {
	mr, bigV := newModelRun(t, seed)
	r := &modRun{modelRun: mr, takenDown: map[store.ID]bool{}}
	ctx := context.Background()
	for step := 0; step < 250; step++ {
		switch op := r.rng.IntN(100); {
		case op < 30:
			r.publish()
		case op < 34:
			r.deletePost()
		case op < 46:
			r.follow()
		case op < 51:
			r.unfollow()
		case op < 55:
			r.must(r.s.Touch(ctx, r.user()))
		case op < 57:
			r.quiesce()
			r.clk.advance(time.Duration(r.rng.IntN(90)) * time.Minute)
			if _, err := r.s.Sweep(ctx, 100); err != nil {
				t.Fatal(err)
			}
		case op < 59:
			bigV.Store(int64(1 + r.rng.IntN(5)))
		case op < 62:
			r.like()
		case op < 72:
			r.relate()
		case op < 81:
			r.takedown()
		case op < 89:
			r.suspend()
		case op < 96:
			r.unsuspend()
		default:
			r.asSuspended()
		}
		r.lateFollows()
		if step%25 == 24 {
			r.settle()
			r.checkAll()
		}
	}
}

// takedown takes a random post down: a live one leaves every feed at
// once; one taken down already changes nothing; one its author deleted is
// refused.
func (r *modRun) takedown() {
	ps := r.sortedPosts()
	if len(ps) == 0 {
		return
	}
	p := ps[r.rng.IntN(len(ps))]
	out, err := r.s.Takedown(context.Background(), p.ID, ModAction{Operator: "model", Reason: "test"})
	switch {
	case r.takenDown[p.ID]:
		if err != nil || out.Changed {
			r.t.Fatalf("takedown of %d again: %+v, %v; want no change", p.ID, out, err)
		}
	case p.Deleted:
		r.wantCode(err, apierr.BadInput, "takedown of post %d its author deleted", p.ID)
	default:
		r.must(err)
		if !out.Changed {
			r.t.Fatalf("takedown of post %d changed nothing", p.ID)
		}
		p.Deleted, r.takenDown[p.ID] = true, true
		r.checkAtOnce(idRange(1, modelUsers)...)
	}
}

// suspend suspends a random account: its posts leave every feed at once;
// an account suspended already is left as it is.
func (r *modRun) suspend() {
	u := r.user()
	out, err := r.s.Suspend(context.Background(), u, ModAction{Operator: "model", Reason: "test"})
	r.must(err)
	if out.Changed == r.m.suspended[u] {
		r.t.Fatalf("suspend %d (suspended: %v): changed %v", u, r.m.suspended[u], out.Changed)
	}
	r.m.suspended[u] = true
	r.checkAtOnce(idRange(1, modelUsers)...)
}

// unsuspend lifts a random account's suspension (none to lift: nothing
// changes). Its posts are back at once; checkAll sees them.
func (r *modRun) unsuspend() {
	u := r.user()
	if ss := slices.Sorted(maps.Keys(r.m.suspended)); len(ss) > 0 && r.rng.IntN(4) > 0 {
		u = ss[r.rng.IntN(len(ss))]
	}
	out, err := r.s.Unsuspend(context.Background(), u, ModAction{Operator: "model", Reason: "test"})
	r.must(err)
	if out.Changed != r.m.suspended[u] {
		r.t.Fatalf("unsuspend %d (suspended: %v): changed %v", u, r.m.suspended[u], out.Changed)
	}
	delete(r.m.suspended, u)
	r.checkAtOnce(idRange(1, modelUsers)...)
}

// asSuspended has a suspended account's requests (carrying the charge
// every signed-in request carries) follow and publish: FORBIDDEN, and
// nothing changes.
func (r *modRun) asSuspended() {
	ss := slices.Sorted(maps.Keys(r.m.suspended))
	if len(ss) == 0 {
		return
	}
	ctx, u, other := context.Background(), ss[r.rng.IntN(len(ss))], r.user()
	for other == u {
		other = r.user()
	}
	before := outboxIDs(r.t, r.s, u)
	ch := r.s.NewWriteCharge(Subject{Viewer: u}, 1, RateLimit{})
	r.wantCode(r.s.Follow(WithCharge(ctx, ch), u, other), apierr.Forbidden, "suspended %d follows %d", u, other)
	ch = r.s.NewWriteCharge(Subject{Viewer: u}, 1, RateLimit{Rate: 100, Burst: 100})
	r.s.Known.Add(u)
	_, err := r.s.Publish(WithCharge(ctx, ch), u, "refused")
	r.wantCode(err, apierr.Forbidden, "suspended %d publishes", u)
	if after := outboxIDs(r.t, r.s, u); !slices.Equal(after, before) {
		r.t.Fatalf("a refused publish of suspended %d changed its outbox: %v, was %v", u, after, before)
	}
	r.checkCounts(u, other)
}
