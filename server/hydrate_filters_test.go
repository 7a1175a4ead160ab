package server

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/feedd/feedd/feedcore"
)

// TestHydratedPageWithKeywordFilters: a reader with the most keyword
// filters (none matching its posts) pays the same round trips for a
// hydrated page as TestHydratedPageRoundTrips allows, on a replica that
// has never seen them: 3 cold (the first reads the filters with the
// page's first read), 2 warm where client-side caching works.
func TestHydratedPageWithKeywordFilters(t *testing.T) {
	f := newFeedFixture(t)
	ctx := context.Background()
	svc, err := feedcore.New(ctx, f.st.Client, feedcore.Options{Prefix: f.st.Prefix})
	if err != nil {
		t.Fatal(err)
	}
	for i := range feedcore.MaxKeywordFilters {
		kw := fmt.Sprintf("%03d %s", i, strings.Repeat("z", feedcore.MaxKeywordLen-4))
		if _, err := svc.AddKeywordFilter(ctx, feedcore.KeywordFilter{User: reader, Keyword: kw, WholeWord: true}); err != nil {
			t.Fatal(err)
		}
	}
	e := replicaWith(t, f.st, APIConfig{})
	vars := map[string]any{"first": 20}
	want := f.want(reader)[:20]
	for _, c := range []struct {
		what string
		most int
	}{{"cold", 3}, {"warm", 2}} {
		before := e.tripsSoFar("HydratedPage")
		var got hydratedResult
		e.do(reader, hydratedPage, vars).as(t, &got)
		trips := e.tripsSince("HydratedPage", before)
		f.check(t, reader, got, want)
		t.Logf("%s page with %d filters: %d round trips", c.what, feedcore.MaxKeywordFilters, trips)
		if (f.st.Real || c.what == "cold") && trips > c.most {
			t.Errorf("%s page with %d filters: %d round trips, want at most %d", c.what, feedcore.MaxKeywordFilters, trips, c.most)
		}
	}
}
