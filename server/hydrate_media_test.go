package server

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/redisstore"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/roundtrip"
)

// hydratedMediaPage is hydratedPage with every post's media and content
// warning.
var hydratedMediaPage = strings.NewReplacer("query HydratedPage", "query HydratedMediaPage",
	"viewerHasLiked", "viewerHasLiked contentWarning media { url kind width height altText thumbnailUrl durationMs sensitive }").Replace(hydratedPage)

type mediaResult struct {
	FollowingFeed struct {
		Edges []struct {
			Node struct {
				ContentWarning *string              `json:"contentWarning"`
				Media          []client.MediaFields `json:"media"`
			}
		}
	} `json:"followingFeed"`
}

// withMedia gives every third post of a feedFixture 1 to 4 items (four
// full-size photos with alt text; a video with its poster; a GIF), with
// URLs of a realistic length, and every fifth a content warning.
func withMedia(k int, p *feedcore.Post) {
	if k%5 == 0 {
		p.ContentWarning = "spoilers for episode " + fmt.Sprint(k)
	}
	if k%3 != 0 {
		return
	}
	url := func(i int, ext string) string {
		return fmt.Sprintf("https://media.example-cdn.com/u/%d/p/%d/%d-2d5f0c6a1e0d3b4c.%s", p.Author, p.ID, i, ext)
	}
	switch k / 3 % 3 {
	case 0:
		for i := range 1 + k%4 {
			p.Media = append(p.Media, feedcore.Media{URL: url(i, "jpg"), Kind: feedcore.MediaImage, Width: 1080, Height: 1350,
				AltText: "A photo from the trip, number " + fmt.Sprint(i), Sensitive: i == 3})
		}
	case 1:
		p.Media = []feedcore.Media{{URL: url(0, "mp4"), Kind: feedcore.MediaVideo, Width: 1920, Height: 1080, DurationMs: 15_000,
			ThumbnailURL: url(0, "jpg")}}
	default:
		p.Media = []feedcore.Media{{URL: url(0, "gif"), Kind: feedcore.MediaGIF, Width: 480, Height: 270, DurationMs: 2_400}}
	}
}

// checkMedia compares a page's media and content warnings with the
// fixture's posts want (keys into f.posts).
func (f *feedFixture) checkMedia(t *testing.T, got mediaResult, want []int) {
	t.Helper()
	edges := got.FollowingFeed.Edges
	if len(edges) != len(want) {
		t.Fatalf("%d edges, want %d", len(edges), len(want))
	}
	opt := func(n int) *int {
		if n == 0 {
			return nil
		}
		return &n
	}
	str := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for i, k := range want {
		p := f.posts[k]
		items := make([]client.MediaFields, len(p.Media))
		for j, m := range p.Media {
			items[j] = client.MediaFields{Url: m.URL, Kind: client.MediaKind(m.Kind), Width: opt(m.Width), Height: opt(m.Height), AltText: str(m.AltText),
				ThumbnailUrl: str(m.ThumbnailURL), DurationMs: opt(m.DurationMs), Sensitive: m.Sensitive}
		}
		n := edges[i].Node
		if !reflect.DeepEqual(n.Media, items) || !reflect.DeepEqual(n.ContentWarning, str(p.ContentWarning)) {
			t.Fatalf("edge %d (post k=%d): media %+v, warning %v; want %+v, %q", i, k, n.Media, n.ContentWarning, items, p.ContentWarning)
		}
	}
}

// countingClient is replicaClient whose connections count the reply bytes
// they read.
func countingClient(tb testing.TB, st *storetest.Store) (rueidis.Client, *atomic.Int64) {
	tb.Helper()
	n := &atomic.Int64{}
	dial := storetest.CountingDial(n)
	if st.Real {
		s, err := redisstore.Open(context.Background(), redisstore.Options{URL: os.Getenv(storetest.Env), ClientName: "feedd-test-counted", Dial: dial})
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(s.Close)
		return s.Client, n
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{st.Embedded.Addr()}, DisableCache: true, ForceSingleClient: true,
		DialCtxFn: func(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
			return dial(ctx, addr, d)
		}})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Close)
	return roundtrip.Wrap(c), n
}

// pageCost is what one hydrated page cost on a replica.
type pageCost struct{ trips, bytes int64 }

// TestHydratedMediaPageRoundTrips: media cost a hydrated followingFeed page
// no round trip: with every third post carrying up to four items and a
// content warning on every fifth, a page still costs 3 round trips cold
// and, where client-side caching works (a real Redis), 2 warm, with the
// default rate limit on; and a warm page reads no more reply bytes than
// the same page without media (the media sit in the client-side cache
// with the rest of the post), for a reader of many authors and for a fan
// of one big-V. The figures are logged for each page:
//
//	FEED_TEST_REDIS=redis://127.0.0.1:6379 go test ./server -run TestHydratedMediaPageRoundTrips -v
func TestHydratedMediaPageRoundTrips(t *testing.T) {
	plain, rich := newFeedFixture(t), newFeedFixture(t, withMedia)
	for _, c := range []struct {
		viewer feedcore.ID
		n      int
	}{{reader, 1}, {reader, 20}, {reader, 100}, {fan, 20}} {
		viewer, n := c.viewer, c.n
		t.Run(fmt.Sprintf("viewer=%d/first=%d", viewer, n), func(t *testing.T) {
			want := rich.want(viewer)[:n]
			measure := func(f *feedFixture, query, op string) (cold, warm pageCost) {
				t.Helper()
				limit := DefaultRateLimit
				limit.Rate = 1
				c, read := countingClient(t, f.st)
				e := newEnvWith(t, c, f.st.Prefix, APIConfig{RateLimit: limit})
				vars := map[string]any{"first": n}
				page := func() pageCost {
					t.Helper()
					trips, bytes := e.tripsSoFar(op), read.Load()
					res := e.do(viewer, query, vars)
					got := pageCost{e.tripsSoFar(op) - trips, read.Load() - bytes}
					var h hydratedResult
					res.as(t, &h)
					f.check(t, viewer, h, want)
					if query == hydratedMediaPage {
						var m mediaResult
						res.as(t, &m)
						f.checkMedia(t, m, want)
					}
					return got
				}
				return page(), page()
			}
			plainCold, plainWarm := measure(plain, hydratedPage, "HydratedPage")
			richCold, richWarm := measure(rich, hydratedMediaPage, "HydratedMediaPage")
			media := 0
			for _, k := range want {
				media += len(rich.posts[k].Media)
			}
			t.Logf("viewer %d, page of %d posts, %d media items: round trips cold %d, warm %d (without media: %d, %d); "+
				"reply bytes cold %d, warm %d (without media: %d, %d)",
				viewer, n, media, richCold.trips, richWarm.trips, plainCold.trips, plainWarm.trips,
				richCold.bytes, richWarm.bytes, plainCold.bytes, plainWarm.bytes)
			if richCold.trips != 3 || richCold.trips != plainCold.trips {
				t.Errorf("cold page with media cost %d round trips (without: %d), want 3", richCold.trips, plainCold.trips)
			}
			if !rich.st.Real {
				return // no client-side cache: warm is cold
			}
			if richWarm.trips != 2 {
				t.Errorf("warm page with media cost %d round trips, want 2", richWarm.trips)
			}
			if richWarm.bytes > plainWarm.bytes+plainWarm.bytes/20+64 {
				t.Errorf("warm page with media read %d reply bytes, without %d: the media should come from the client-side cache", richWarm.bytes, plainWarm.bytes)
			}
			if media > 0 && richCold.bytes <= plainCold.bytes {
				t.Errorf("cold page with media read %d reply bytes, without %d: the media were not read", richCold.bytes, plainCold.bytes)
			}
		})
	}
}
