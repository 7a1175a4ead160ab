package importgen_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/feedd/feedd/importer/importgen"
)

// The load tool's shape: heavy-tailed follows, big-V accounts with many
// followers, posts over days before End in time order, live sessions of
// every state.
func TestNetworkShape(t *testing.T) {
	end := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	spec := importgen.Spec{Users: 2000, FollowsPerUser: 10, BigV: 3, BigVFollowers: 0.5,
		Posts: 3000, Days: 7, End: end, Lives: 200, Seed: 7}
	var buf bytes.Buffer
	c, err := importgen.Write(&buf, spec)
	if err != nil {
		t.Fatal(err)
	}
	followers := map[string]int{}
	following := map[string]int{}
	states := map[string]int{}
	var last time.Time
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var l map[string]string
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		switch l["type"] {
		case "follow":
			followers[l["followee"]]++
			following[l["follower"]]++
		case "post":
			at, err := time.Parse(time.RFC3339Nano, l["createdAt"])
			if err != nil {
				t.Fatal(err)
			}
			if at.Before(end.Add(-7*24*time.Hour-time.Minute)) || at.After(end) {
				t.Fatalf("post at %v, outside the 7 days before %v", at, end)
			}
			if at.Before(last.Add(-time.Hour)) {
				t.Fatalf("post at %v long before its predecessor at %v", at, last)
			}
			last = at
		case "live":
			switch {
			case l["endedAt"] != "":
				states["replay"]++
			case l["startedAt"] != "":
				states["live"]++
			default:
				states["preview"]++
			}
		}
	}
	if c.Users != 2000 || c.Posts != 3000 || c.Lives != 200 {
		t.Errorf("counts %+v", c)
	}
	if mean := float64(c.Follows) / 2000; mean < 8 || mean > 13+1.5 {
		t.Errorf("%.1f follows a user, want about 10 plus the big-V share", mean)
	}
	big := 0
	for _, n := range followers {
		if n >= 900 {
			big++
		}
	}
	if big < 3 {
		t.Errorf("%d accounts with 900+ followers, want the 3 big-V", big)
	}
	most := 0
	for _, n := range following {
		most = max(most, n)
	}
	if most < 40 {
		t.Errorf("the busiest follower follows %d, want a heavy tail", most)
	}
	if states["live"] == 0 || states["preview"] == 0 || states["replay"] == 0 {
		t.Errorf("live states %v, want all three", states)
	}
}
