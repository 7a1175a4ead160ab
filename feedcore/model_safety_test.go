package feedcore

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// The model test's relations and account deletions (model_test.go runs
// them): the oracle's meaning of each, and the checks of what must hold at
// once, before any worker has run.

// blocked says whether a block stands between a and b, either way.
func (m *oracle) blocked(a, b store.ID) bool {
	return m.blocks[Edge{Follower: a, Followee: b}] || m.blocks[Edge{Follower: b, Followee: a}]
}

// hidden says whether author's posts are kept from viewer's feeds: a
// block either way, viewer's mute not yet ended, author's hide from viewer.
func (m *oracle) hidden(viewer, author store.ID) bool {
	return m.blocked(viewer, author) || m.mutes[Edge{Follower: viewer, Followee: author}] > m.now().UnixMilli() ||
		m.hides[Edge{Follower: author, Followee: viewer}]
}

// counts are u's follower and following counts by the oracle's edges.
func (m *oracle) counts(u store.ID) GraphCounts {
	var c GraphCounts
	for x, fs := range m.follows {
		if fs[u] {
			c.Followers++
		}
		if x == u {
			c.Following = len(fs)
		}
	}
	return c
}

// dropAccount is what deleting u's account does: its posts, follows both
// ways, likes and relations are gone.
func (m *oracle) dropAccount(u store.ID) {
	m.gone[u] = true
	m.follows[u] = map[store.ID]bool{}
	for _, fs := range m.follows {
		delete(fs, u)
	}
	for _, ls := range m.likes {
		delete(ls, u)
	}
	for _, p := range m.posts {
		p.Deleted = p.Deleted || p.Author == u
	}
	gone := func(e Edge) bool { return e.Follower == u || e.Followee == u }
	maps.DeleteFunc(m.blocks, func(e Edge, _ bool) bool { return gone(e) })
	maps.DeleteFunc(m.hides, func(e Edge, _ bool) bool { return gone(e) })
	maps.DeleteFunc(m.mutes, func(e Edge, _ int64) bool { return gone(e) })
}

// relate runs one relation operation between two random users, or an
// attempt across a block, or one naming a deleted account.
func (r *modelRun) relate() {
	ctx, s, m := context.Background(), r.s, r.m
	a, b := r.pair()
	e := Edge{Follower: a, Followee: b}
	switch op := r.rng.IntN(20); {
	case op < 4:
		r.must(s.Block(ctx, a, b))
		m.blocks[e] = true
		delete(m.follows[a], b)
		delete(m.follows[b], a)
		r.checkCounts(a, b)
		r.checkAtOnce(a, b)
	case op < 6: // no follow comes back
		r.must(s.Unblock(ctx, a, b))
		delete(m.blocks, e)
	case op < 10:
		r.mute(a, b)
		r.checkAtOnce(a)
	case op < 12:
		r.must(s.Unmute(ctx, a, b))
		delete(m.mutes, e)
	case op < 15:
		r.must(s.HidePostsFrom(ctx, a, b))
		m.hides[e] = true
		r.checkAtOnce(b)
	case op < 17:
		r.must(s.UnhidePostsFrom(ctx, a, b))
		delete(m.hides, e)
	case op < 19:
		r.acrossBlock()
	default:
		r.towardGone()
	}
}

// mute mutes b for a, a third of the time with no end, else for up to two
// hours (which the run's clock often passes).
func (r *modelRun) mute(a, b store.ID) {
	var d time.Duration
	if r.rng.IntN(3) > 0 {
		d = time.Duration(1+r.rng.IntN(120)) * time.Minute
	}
	r.must(r.s.Mute(context.Background(), a, b, d))
	until := core.RelationForever
	if d > 0 {
		until = r.clk.now().Add(d).UnixMilli()
	}
	r.m.mutes[Edge{Follower: a, Followee: b}] = until
}

// like likes a random post: FORBIDDEN across a block, NOT_FOUND when it
// is deleted (or its author is) or its author suspended, changing nothing
// either way.
func (r *modelRun) like() {
	if len(r.m.posts) == 0 {
		return
	}
	ps := r.sortedPosts()
	u, p := r.user(), ps[r.rng.IntN(len(ps))]
	_, _, err := r.s.Like(context.Background(), u, p.ID)
	switch {
	case r.m.blocked(u, p.Author): // checked first: a deleted post's author is known
		r.wantCode(err, apierr.Forbidden, "user %d likes post %d of %d across a block", u, p.ID, p.Author)
	case p.Deleted || r.m.suspended[p.Author]:
		r.wantCode(err, apierr.NotFound, "user %d likes deleted post %d or one of a suspended account", u, p.ID)
	case err != nil:
		r.t.Fatal(err)
	default:
		if r.m.likes[p.ID] == nil {
			r.m.likes[p.ID] = map[store.ID]bool{}
		}
		r.m.likes[p.ID][u] = true
	}
	r.checkLiked(u, p)
}

// acrossBlock has one side of a standing block follow the other or like
// its post: FORBIDDEN, and nothing changes.
func (r *modelRun) acrossBlock() {
	blocks := slices.SortedFunc(maps.Keys(r.m.blocks), cmpEdge)
	if len(blocks) == 0 {
		return
	}
	e := blocks[r.rng.IntN(len(blocks))]
	a, b := e.Follower, e.Followee
	if r.rng.IntN(2) == 0 {
		a, b = b, a
	}
	var theirs []*content.Post
	for _, p := range r.sortedPosts() {
		if p.Author == b && !p.Deleted {
			theirs = append(theirs, p)
		}
	}
	if len(theirs) == 0 || r.rng.IntN(2) == 0 {
		err := r.s.Follow(context.Background(), a, b)
		r.wantCode(err, apierr.Forbidden, "user %d follows %d across a block", a, b)
		r.checkCounts(a, b)
		return
	}
	p := theirs[r.rng.IntN(len(theirs))]
	_, _, err := r.s.Like(context.Background(), a, p.ID)
	r.wantCode(err, apierr.Forbidden, "user %d likes post %d of %d across a block", a, p.ID, b)
	r.checkLiked(a, p)
}

// towardGone names a deleted account: following it or liking its post is
// NOT_FOUND; its own request (with the charge every signed-in request
// carries) is UNAUTHENTICATED. Nothing changes.
func (r *modelRun) towardGone() {
	var gone []store.ID
	for u := store.ID(1); u <= modelUsers; u++ {
		if r.m.gone[u] {
			gone = append(gone, u)
		}
	}
	if len(gone) == 0 {
		return
	}
	ctx, g, a := context.Background(), gone[r.rng.IntN(len(gone))], r.user()
	r.wantCode(r.s.Follow(ctx, a, g), apierr.NotFound, "user %d follows deleted %d", a, g)
	r.wantCode(r.s.Block(ctx, a, g), apierr.NotFound, "user %d blocks deleted %d", a, g)
	ch := r.s.NewWriteCharge(Subject{Viewer: g}, 1, RateLimit{})
	r.wantCode(r.s.Follow(WithCharge(ctx, ch), g, a), apierr.Unauthenticated, "deleted %d follows %d", g, a)
	ch = r.s.NewWriteCharge(Subject{Viewer: g}, 1, RateLimit{})
	r.wantCode(r.s.Mute(WithCharge(ctx, ch), g, a, 0), apierr.Unauthenticated, "deleted %d mutes %d", g, a)
	r.checkCounts(a, g)
	r.checkRelations(a)
}

// deleteAccount deletes a random account (at most two a run, so the run
// keeps users to act): at once, its posts leave every feed.
func (r *modelRun) deleteAccount() {
	if len(r.m.gone) >= 2 {
		return
	}
	u := r.user()
	r.must(r.s.DeleteAccount(context.Background(), u, "u"+store.FormatID(u)))
	r.m.dropAccount(u)
	r.checkCounts(idRange(1, modelUsers)...)
	r.checkAtOnce(idRange(1, modelUsers)...)
}

// settle lets the workers finish: the mutes the clock has ended are
// settled (the worker's timer, run now rather than waited for), then the
// fan-out, journal and clean-up streams drain.
func (r *modelRun) settle() {
	ctx := context.Background()
	for sh := 0; sh < r.s.Opts.StreamShards; sh++ {
		for range 10 { // a batch of 64 a call; a run has at most 72 pairs
			if err := r.s.EndMutes(ctx, sh); err != nil {
				r.t.Fatal(err)
			}
		}
	}
	if r.held != nil && r.late.IntN(3) == 0 {
		r.held.runAll(r.t) // else the check meets follows still pending
	}
	if r.held != nil && r.held.len() > 0 {
		r.pendingChecks++
	}
	r.quiesce()
}

// lateFollows runs, one time in eight, one of the follows' settles still
// held, picked at random.
func (r *modelRun) lateFollows() {
	if r.held == nil {
		return // follows settle on their own
	}
	if n := r.held.len(); n > 0 && r.late.IntN(8) == 0 {
		r.held.run(r.t, r.late.IntN(n))
	}
}

// quiesce is drain with follows still held: it waits until the workers
// have nothing left to do, and the journal holds nothing but the entries
// of the held follows (a held settle's entry stays until the settle runs,
// or the journal's repair does it, RepairAfter on).
func (r *modelRun) quiesce() {
	r.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for {
		busy, err := r.s.StreamsLen(ctx, r.s.Keys.Events, r.s.Keys.Tasks, r.s.Keys.Cleanup)
		if err != nil {
			r.t.Fatal(err)
		}
		journal, err := r.s.StreamsLen(ctx, r.s.Keys.Journal)
		if err != nil {
			r.t.Fatal(err)
		}
		held := 0
		if r.held != nil {
			held = r.held.len()
		}
		if busy == 0 && journal <= int64(held) {
			return
		}
		select {
		case <-ctx.Done():
			r.t.Fatalf("not quiet after a minute: %d events, tasks and clean-ups, %d journal entries for %d held follows", busy, journal, held)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// checkAtOnce pages each viewer's feed now, before any clean-up: no post
// the oracle keeps from it may show. (Posts may still be missing: their
// fan-out may not have run.)
func (r *modelRun) checkAtOnce(viewers ...store.ID) {
	r.t.Helper()
	for _, v := range viewers {
		if r.m.gone[v] {
			continue
		}
		for _, id := range readAll(r.t, r.s, v, 1+r.rng.IntN(5)) {
			if !r.m.showsItem(v, id) {
				r.logRelations(v)
				r.logState(v)
				r.t.Fatalf("at once: viewer %d's feed shows item %d (%+v %+v), which the oracle keeps from it", v, id, r.m.posts[id], r.m.reposts[id])
			}
		}
	}
}

// checkCounts compares ids' follow counts with the oracle's edges.
func (r *modelRun) checkCounts(ids ...store.ID) {
	r.t.Helper()
	got, err := r.s.Counts(context.Background(), ids)
	if err != nil {
		r.t.Fatal(err)
	}
	for i, u := range ids {
		if want := r.m.counts(u); got[i] != want {
			r.t.Fatalf("user %d's counts %+v, want %+v", u, got[i], want)
		}
	}
}

// checkLiked compares u's like of p, and p's like count, with the oracle.
func (r *modelRun) checkLiked(u store.ID, p *content.Post) {
	r.t.Helper()
	if p.Deleted {
		return
	}
	liked, err := r.s.Liked(context.Background(), u, []store.ID{p.ID})
	if err != nil {
		r.t.Fatal(err)
	}
	if want := r.m.likes[p.ID][u]; liked[0] != want {
		r.t.Fatalf("user %d likes post %d: %v, want %v", u, p.ID, liked[0], want)
	}
	r.checkLikes(p)
}

// checkLikes compares the like counts of ps (every post not deleted when
// none is given) with the oracle's likers.
func (r *modelRun) checkLikes(ps ...*content.Post) {
	r.t.Helper()
	if len(ps) == 0 {
		ps = slices.DeleteFunc(r.sortedPosts(), func(p *content.Post) bool { return p.Deleted })
	}
	ids := make([]store.ID, len(ps))
	for i, p := range ps {
		ids[i] = p.ID
	}
	got, err := r.s.PostCounts(context.Background(), ids)
	if err != nil {
		r.t.Fatal(err)
	}
	for i, p := range ps {
		if want := len(r.m.likes[p.ID]); got[i].Likes != want {
			r.t.Fatalf("post %d of %d has %d likes, want %d", p.ID, p.Author, got[i].Likes, want)
		}
	}
}

// checkRelations compares how every other user relates to v with the
// oracle.
func (r *modelRun) checkRelations(v store.ID) {
	r.t.Helper()
	var others []store.ID
	for u := store.ID(1); u <= modelUsers; u++ {
		if u != v && !r.m.gone[u] {
			others = append(others, u)
		}
	}
	got, err := r.s.RelationFlags(context.Background(), v, others)
	if err != nil {
		r.t.Fatal(err)
	}
	for i, u := range others {
		if want := r.m.flags(v, u); got[i] != want {
			r.t.Fatalf("user %d's relation to %d: %+v, want %+v", v, u, got[i], want)
		}
	}
}

// flags is how u relates to viewer, by the oracle.
func (m *oracle) flags(viewer, u store.ID) RelationFlags {
	f := RelationFlags{Blocked: m.blocks[Edge{Follower: viewer, Followee: u}], BlocksViewer: m.blocks[Edge{Follower: u, Followee: viewer}],
		HidesFrom: m.hides[Edge{Follower: viewer, Followee: u}]}
	if until := m.mutes[Edge{Follower: viewer, Followee: u}]; until > m.now().UnixMilli() {
		f.Muted = true
		if until < core.RelationForever {
			f.MuteEnds = time.UnixMilli(until)
		}
	}
	return f
}

// logRelations logs the oracle's relations of v, for a failure: each
// other user's flags toward v, v's follow of it and its follow of v.
func (r *modelRun) logRelations(v store.ID) {
	m := r.m
	var lines []string
	for u := store.ID(1); u <= modelUsers; u++ {
		if f := m.flags(v, u); u != v && (f != RelationFlags{} || m.follows[v][u] || m.follows[u][v] || m.gone[u]) {
			lines = append(lines, fmt.Sprintf("%d: %+v follows %v/%v gone %v", u, f, m.follows[v][u], m.follows[u][v], m.gone[u]))
		}
	}
	r.t.Logf("now %d; viewer %d: %q", m.now().UnixMilli(), v, lines)
}

// logState logs v's relation sets and inbox, for a failure.
func (r *modelRun) logState(v store.ID) {
	ctx, s := context.Background(), r.s
	for _, key := range []string{s.Keys.HiddenAuthors(v), s.Keys.HideNotes(v), s.Keys.Following(v), s.Keys.Inbox(v)} {
		zs, err := s.Redis.Do(ctx, s.Redis.B().Zrange().Key(key).Min("0").Max("-1").Withscores().Build()).AsZScores()
		var ids []string
		for _, z := range zs {
			id, _ := store.MemberID(z.Member)
			ids = append(ids, fmt.Sprintf("%d@%.0f", id, z.Score))
		}
		r.t.Logf("%s: %v %v", key, ids, err)
	}
}

// sortedPosts are the oracle's posts by id.
func (r *modelRun) sortedPosts() []*content.Post {
	ps := slices.Collect(maps.Values(r.m.posts))
	slices.SortFunc(ps, func(a, b *content.Post) int { return cmp.Compare(a.ID, b.ID) })
	return ps
}

func (r *modelRun) must(err error) {
	r.t.Helper()
	if err != nil {
		r.t.Fatal(err)
	}
}

// wantCode fails unless err has code.
func (r *modelRun) wantCode(err error, code apierr.Code, format string, args ...any) {
	r.t.Helper()
	if store.CodeOf(err) != code {
		r.t.Fatalf("%s: %v, want %s", fmt.Sprintf(format, args...), err, code)
	}
}

func cmpEdge(a, b Edge) int {
	if c := cmp.Compare(a.Follower, b.Follower); c != 0 {
		return c
	}
	return cmp.Compare(a.Followee, b.Followee)
}
