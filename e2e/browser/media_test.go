package browser

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestDemoMediaOverHTTP: the demo's first page, as GraphiQL's example
// query asks for it, shows posts with media whose every URL (and
// thumbnail) is served by the same feedd, with its type: the demo needs no
// network.
func TestDemoMediaOverHTTP(t *testing.T) {
	f := startFeedd(t, true)
	var got struct {
		Data struct {
			FollowingFeed struct {
				Edges []struct {
					Node struct {
						ContentWarning *string `json:"contentWarning"`
						Media          []struct {
							Kind         string  `json:"kind"`
							URL          string  `json:"url"`
							ThumbnailURL *string `json:"thumbnailUrl"`
						} `json:"media"`
					} `json:"node"`
				} `json:"edges"`
			} `json:"followingFeed"`
		} `json:"data"`
	}
	body := f.query(t, f.viewer, `{ followingFeed(first: 10) { edges { node { contentWarning media { kind url thumbnailUrl } } } } }`)
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{"IMAGE": "image/png", "GIF": "image/gif", "VIDEO": "video/mp4"}
	kinds, warnings := map[string]int{}, 0
	for _, e := range got.Data.FollowingFeed.Edges {
		if e.Node.ContentWarning != nil {
			warnings++
		}
		for _, m := range e.Node.Media {
			kinds[m.Kind]++
			urls := map[string]string{m.URL: types[m.Kind]}
			if m.ThumbnailURL != nil {
				urls[*m.ThumbnailURL] = "image/png"
			}
			for u, typ := range urls {
				if !strings.HasPrefix(u, f.srv.URL+"/demo/media/") {
					t.Errorf("%s is not served by this feedd (%s)", u, f.srv.URL)
					continue
				}
				res, data := get(t, f.srv.Client(), u)
				if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != typ || len(data) == 0 {
					t.Errorf("GET %s: %d, %q, %d bytes; want 200, %s", u, res.StatusCode, res.Header.Get("Content-Type"), len(data), typ)
				}
			}
		}
	}
	if kinds["IMAGE"] < 4 || kinds["GIF"] == 0 || kinds["VIDEO"] == 0 || warnings == 0 {
		t.Errorf("the demo's first page shows %v and %d content warnings; want pictures, a GIF, a video and a warning", kinds, warnings)
	}
}
