package importer

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/feedd/feedd/feedcore"
)

// The example lines with media, a content warning and a cover of
// docs/import-format.md (once the README's) load as they say, and a second
// load of them changes nothing.
func TestImportFormatMediaLines(t *testing.T) {
	readme, err := os.ReadFile("../docs/import-format.md")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(readme), "\n") {
		if strings.HasPrefix(l, `{"type":`) && (strings.Contains(l, `"media":`) || strings.Contains(l, `"coverUrl":`)) {
			lines = append(lines, l)
		}
	}
	if len(lines) != 3 {
		t.Fatalf("found %d example lines with media or a cover in docs/import-format.md, want 3", len(lines))
	}
	svc := newService(t)
	ctx := context.Background()
	file := `{"type":"user","id":"200","handle":"bea"}` + "\n" + strings.Join(lines, "\n") + "\n"
	for range 2 {
		if _, err := Load(ctx, svc, strings.NewReader(file)); err != nil {
			t.Fatal(err)
		}
	}
	ps, err := svc.Posts(ctx, []feedcore.ID{32851, 32852})
	if err != nil {
		t.Fatal(err)
	}
	want := []feedcore.Media{
		{URL: "https://cdn.example.com/a.jpg", Kind: feedcore.MediaImage, Width: 1080, Height: 1350, AltText: "The valley from the ridge"},
		{URL: "https://cdn.example.com/b.jpg", Kind: feedcore.MediaImage, Sensitive: true},
	}
	if p := ps[0]; p == nil || p.Text != "two views" || p.ContentWarning != "heights" || !reflect.DeepEqual(p.Media, want) {
		t.Errorf("post 32851: %+v", p)
	}
	if p := ps[1]; p == nil || p.Text != "" || len(p.Media) != 1 || p.Media[0].Kind != feedcore.MediaVideo || p.Media[0].DurationMs != 15000 {
		t.Errorf("post 32852: %+v", p)
	}
	ls, err := svc.LiveSessions(ctx, []feedcore.ID{10})
	if err != nil || ls[0] == nil || ls[0].CoverURL != "https://cdn.example.com/c.jpg" {
		t.Errorf("live 10: %+v, %v", ls[0], err)
	}
}
