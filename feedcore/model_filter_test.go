package feedcore

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/keyword"
	"github.com/feedd/feedd/feedcore/keyword/keywordtest"
	"github.com/feedd/feedd/feedcore/safety"
	"github.com/feedd/feedd/feedcore/store"
)

// The model test's keyword filters: the oracle's meaning of a filter
// (keywordtest.Match on the text; an end compared with the clock) and a
// run that adds and removes filters, some with ends the clock passes,
// among the other operations.

// modelFilter is a keyword filter as the oracle keeps it.
type modelFilter struct {
	keyword   string
	wholeWord bool
	until     int64 // ms; 0: no end
}

// filtered says whether one of viewer's filters in force keeps p from its
// feed: never the viewer's own posts.
func (m *oracle) filtered(viewer store.ID, p *content.Post) bool {
	if p.Author == viewer {
		return false
	}
	now := m.now().UnixMilli()
	for _, f := range m.filters[viewer] {
		if (f.until == 0 || now < f.until) && keywordtest.Match(f.keyword, f.wholeWord, p.Text) {
			return true
		}
	}
	return false
}

// filterWords are what the run's posts are made of: the keywords'
// spellings that normalize alike (fullwidth, decomposed, a ligature,
// capitals), words that hold a keyword inside, and the scripts written
// without spaces, a Korean noun with its particle.
var filterWords = []string{"cat", "Cat", "ＣＡＴ", "cats", "concat", "café", "cafe\u0301", "CAFÉ", "cafes",
	"ﬁsh", "fish", "FISH", "fishing", "東京", "東京タワー", "ネコ", "사과를", "사과", "แมวดำ", "news", "#ad", "ad",
	"spoiler!", "the"}

// filterKeywords are the keywords the run filters, in several spellings.
var filterKeywords = []string{"cat", "CAT", "café", "CAFE\u0301", "fish", "ﬁsh", "東京", "ネコ", "사과", "แมว",
	"#ad", "ad", "spoiler", "con", "the news"}

// TestFeedMatchesModelWithFilters runs the model test's operations (but
// likes) with keyword filters added, updated and removed among them, a
// third with an end the run's clock passes; posts are made of words that
// match them, or nearly. Right after each filter change the viewer's feed
// must already follow it; after each drain every feed, paged at several
// sizes both ways, and every viewer's list of filters must match the
// oracle.
func TestFeedMatchesModelWithFilters(t *testing.T) {
	forEachSeed(t, 4, 0, runFilterModel)
}

func runFilterModel(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 19))
	clk := clockAt(testEpoch)
	var bigV atomic.Int64
	bigV.Store(int64(2 + rng.IntN(3)))
	held, late := lateSettles(seed)
	s := testService(t, Options{InboxCap: 4 + rng.IntN(8), ActiveWindow: time.Hour, Now: clk.now,
		BigVThresholdFunc: func() int { return int(bigV.Load()) }, SettleFollow: held.hold})
	r := &modelRun{t: t, s: s, m: newOracle(clk.now), clk: clk, rng: rng, held: held, late: late}
	for u := store.ID(1); u <= modelUsers; u++ {
		mustUsers(t, s, u)
		r.m.follows[u] = map[store.ID]bool{}
	}
	filtered := 0 // posts the checks saw a filter keep out: the run must test something
	defer func() {
		if filtered == 0 && !t.Failed() {
			t.Error("no check saw a post filtered")
		}
	}()
	for step := 0; step < 250; step++ {
		switch op := rng.IntN(100); {
		case op < 30:
			r.publishWords()
		case op < 34:
			r.deletePost()
		case op < 48:
			r.follow()
		case op < 53:
			r.unfollow()
		case op < 58:
			r.touch()
		case op < 62:
			r.timePasses()
		case op < 64:
			bigV.Store(int64(1 + rng.IntN(4)))
		case op < 72:
			r.relate()
		case op < 86:
			r.addFilter()
		case op < 93:
			r.removeFilter()
		case op < 94:
			r.deleteAccount()
		default:
			clk.advance(time.Duration(rng.IntN(3)) * time.Second)
		}
		r.lateFollows()
		if step%25 == 24 {
			r.settle()
			r.checkAll()
			for v := store.ID(1); v <= modelUsers; v++ {
				r.checkFilters(v)
				for _, p := range r.m.posts {
					if r.m.filtered(v, p) && !p.Deleted && r.m.follows[v][p.Author] {
						filtered++
					}
				}
			}
		}
	}
}

// publishWords publishes a post of one to four filterWords, joined in
// ways that do and do not leave word boundaries.
func (r *modelRun) publishWords() {
	seps := []string{" ", ", ", "", "-", "。"}
	var b strings.Builder
	for i := range 1 + r.rng.IntN(4) {
		if i > 0 {
			b.WriteString(seps[r.rng.IntN(len(seps))])
		}
		b.WriteString(filterWords[r.rng.IntN(len(filterWords))])
	}
	now := r.clk.now()
	p := &content.Post{ID: store.ID(1000 + len(r.m.posts)), Author: r.user(), Text: b.String(),
		CreatedAt: now.Add(-time.Duration(r.rng.IntN(5)) * time.Second)}
	if r.rng.IntN(4) == 0 {
		p.CreatedAt = now.Add(-time.Duration(r.rng.IntN(3000)) * time.Second) // below horizons
	}
	r.must(r.s.PutPost(context.Background(), p))
	r.m.posts[p.ID] = p
}

// addFilter adds a random keyword filter for a random viewer (one that
// normalizes as one it has updates that one), a third with an end within
// two hours; at once, its feed leaves the matching posts out.
func (r *modelRun) addFilter() {
	v := r.user()
	kw := filterKeywords[r.rng.IntN(len(filterKeywords))]
	f := modelFilter{keyword: kw, wholeWord: r.rng.IntN(3) > 0}
	var expires *time.Time
	if r.rng.IntN(3) == 0 {
		at := r.clk.now().Add(time.Duration(1+r.rng.IntN(120)) * time.Minute)
		expires, f.until = &at, at.UnixMilli()
	}
	got, err := r.s.AddKeywordFilter(context.Background(), KeywordFilter{User: v, Keyword: kw, WholeWord: f.wholeWord, ExpiresAt: expires})
	r.must(err)
	if got.ID != safety.KeywordFilterID(v, keyword.Normalize(kw)) {
		r.t.Fatalf("user %d's filter %q has id %d", v, kw, got.ID)
	}
	if r.m.filters[v] == nil {
		r.m.filters[v] = map[string]modelFilter{}
	}
	r.m.filters[v][keyword.Normalize(kw)] = f
	r.checkAtOnce(v)
}

// removeFilter removes one of a random viewer's filters: NOT_FOUND once
// it has ended, or when it is another viewer's.
func (r *modelRun) removeFilter() {
	v := r.user()
	words := slices.Sorted(maps.Keys(r.m.filters[v]))
	if len(words) == 0 {
		return
	}
	word := words[r.rng.IntN(len(words))]
	f, id := r.m.filters[v][word], safety.KeywordFilterID(v, word)
	if other := r.user(); other != v {
		r.wantCode(r.s.RemoveKeywordFilter(context.Background(), other, id), apierr.NotFound, "user %d removes user %d's filter", other, v)
	}
	err := r.s.RemoveKeywordFilter(context.Background(), v, id)
	if f.until != 0 && f.until <= r.clk.now().UnixMilli() {
		r.wantCode(err, apierr.NotFound, "user %d removes its filter %q, ended", v, f.keyword)
	} else {
		r.must(err)
	}
	delete(r.m.filters[v], word)
	r.checkAtOnce(v)
}

// checkFilters compares v's filters in force with the oracle's.
func (r *modelRun) checkFilters(v store.ID) {
	r.t.Helper()
	if r.m.gone[v] {
		return
	}
	got, err := r.s.KeywordFilters(context.Background(), v)
	r.must(err)
	var want []store.ID
	now := r.clk.now().UnixMilli()
	for word, f := range r.m.filters[v] {
		if f.until == 0 || now < f.until {
			want = append(want, safety.KeywordFilterID(v, word))
		}
	}
	ids := make([]store.ID, len(got))
	for i, f := range got {
		ids[i] = f.ID
		if mf := r.m.filters[v][keyword.Normalize(f.Keyword)]; f.WholeWord != mf.wholeWord || f.Keyword != mf.keyword {
			r.t.Fatalf("user %d's filter %+v, want %+v", v, f, mf)
		}
	}
	slices.Sort(ids)
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		r.t.Fatalf("user %d's filters %v, want %v", v, ids, want)
	}
}
