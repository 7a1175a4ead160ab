package demo

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
	"time"

	"github.com/feedd/feedd/feedcore"
)

// The demo's media are small files drawn by internal/mediagen and
// embedded in the binary; feedd serves them from its own listener (see
// MediaHandler), so a demo shows pictures and a video with no network.
// Regenerate them with:
//
//go:generate go run ./internal/mediagen media
//go:embed media
var mediaFiles embed.FS

// MediaHandler serves the demo's media files by name (lake.png,
// waves.mp4, ...), to be mounted where the mediaBase given to Load
// points. Video players get range requests; directories are not listed.
func MediaHandler() http.Handler {
	sub, err := fs.Sub(mediaFiles, "media")
	if err != nil { // "media" is embedded above: cannot happen
		panic(err)
	}
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := r.URL.Path; p == "" || strings.HasSuffix(p, "/") {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Cache-Control", "public, max-age=86400")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		files.ServeHTTP(w, r)
	})
}

// showcase are the demo's posts with media and content warnings, by the
// most-followed creators and newer than every generated post, so they
// open the feeds of most demo viewers: four pictures of a trip, a GIF,
// a video with its poster, a picture marked sensitive behind a content
// warning, one of media alone, and a text behind a content warning. URLs
// are mediaBase (where MediaHandler is served) and a file name.
func showcase(people []person, now time.Time, mediaBase string) []*feedcore.Post {
	byRank := map[int]feedcore.ID{}
	for _, p := range people {
		byRank[p.rank] = p.ID
	}
	url := func(name string) string { return mediaBase + name }
	photo := func(name, alt string) feedcore.Media {
		return feedcore.Media{URL: url(name), Kind: feedcore.MediaImage, Width: 320, Height: 240, AltText: alt}
	}
	posts := []*feedcore.Post{
		{Author: byRank[2], Text: "A weekend away, in four pictures. Which one is your favourite?", Media: []feedcore.Media{
			photo("lake.png", "Mountains over a lake at dawn, the sky in orange and pink bands"),
			photo("forest.png", "A row of pine trees under a blue sky"),
			photo("city.png", "City towers at night, their windows lit, a crescent moon above"),
			photo("beach.png", "A red parasol and a pink towel on a sandy beach"),
		}},
		{Author: byRank[0], Text: "Me, waiting for the build to finish.", Media: []feedcore.Media{
			{URL: url("spinner.gif"), Kind: feedcore.MediaGIF, Width: 120, Height: 120, DurationMs: 1200, AltText: "A loading spinner going round and round"},
		}},
		{Author: byRank[2], Text: "Two seconds of the coast this morning.", Media: []feedcore.Media{
			{URL: url("waves.mp4"), Kind: feedcore.MediaVideo, Width: 160, Height: 120, DurationMs: 2000,
				ThumbnailURL: url("waves-poster.png"), AltText: "Waves rolling under a bright sun"},
		}},
		{Author: byRank[4], Text: "Look who moved into the studio, right behind the speakers.", ContentWarning: "spiders", Media: []feedcore.Media{
			{URL: url("spider.png"), Kind: feedcore.MediaImage, Width: 320, Height: 240, AltText: "A large black spider with red eyes", Sensitive: true},
		}},
		{Author: byRank[3], Media: []feedcore.Media{photo("city.png", "The skyline from the arena's roof")}},
		{Author: byRank[1], Text: "That finale! The soufflé collapses in the last minute and nobody says a word.", ContentWarning: "spoilers for the finale"},
	}
	for i, p := range posts {
		at := now.Truncate(time.Millisecond).Add(-time.Duration(10*(i+1)) * time.Second)
		// Time-ordered ids like the generated posts', above their indices.
		p.ID, p.CreatedAt = feedcore.ID(at.UnixMilli())<<16|feedcore.ID(0xf000+i), at
	}
	return posts
}

// covers are the live sessions' cover pictures, in turn.
var covers = []string{"city.png", "lake.png", "beach.png", "forest.png"}
