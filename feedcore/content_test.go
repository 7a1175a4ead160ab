package feedcore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/store"
	"github.com/feedd/feedd/redisstore/storetest"
)

func TestCheckText(t *testing.T) {
	for _, tc := range []struct{ name, in, want, err string }{
		{"plain", "hello", "hello", ""},
		{"trimmed", "  hi\n", "hi", ""},
		{"newline and tab inside", "a\n\tb", "a\n\tb", ""},
		{"emoji with ZWJ", "👩\u200d💻", "👩\u200d💻", ""},
		{"zero width inside visible", "a\u200bb", "a\u200bb", ""},
		{"NUL", "a\x00b", "", "control characters"},
		{"escape", "a\x1b[31mb", "", "U+001B at character 2"},
		{"carriage return", "a\r\nb", "", "control characters"},
		{"DEL", "a\x7f", "", "control characters"},
		{"C1 control", "a\u0085b", "", "control characters"},
		{"invalid UTF-8", "caf\xe9", "", "valid UTF-8"},
		{"empty", "", "", "visible"},
		{"spaces", " \t\n ", "", "visible"},
		{"zero width only", "\u200b\u200c\u200d\u2060\ufeff", "", "visible"},
		{"zero width and spaces", " \u200b \u3000 \u00a0", "", "visible"},
		{"Hangul filler", "\u3164\u3164", "", "visible"},
		{"direction marks", "\u200e\u200f\u202e", "", "visible"},
		{"too long", strings.Repeat("é", 11), "", "11 characters; at most 10"},
		{"long before trimming", strings.Repeat(" ", 20) + "ok", "ok", ""},
	} {
		got, err := CheckText("text", tc.in, 10)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%s: CheckText(%q) = %q, %v; want %q", tc.name, tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err) || store.CodeOf(err) != apierr.BadInput):
			t.Errorf("%s: CheckText(%q) err = %v, want BAD_USER_INPUT mentioning %q", tc.name, tc.in, err, tc.err)
		}
	}
}

// TestContentRulesChangeNothing: a refused publish or schedule stores
// nothing.
func TestContentRulesChangeNothing(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s := newService(t, storetest.New(t), Options{Now: func() time.Time { return now }})
	ctx := context.Background()
	mustUsers(t, s, 1)
	for _, text := range []string{"\x00", "\u200b", "a\x07"} {
		if _, err := s.Publish(ctx, 1, text); store.CodeOf(err) != apierr.BadInput {
			t.Errorf("Publish(%q) err = %v", text, err)
		}
	}
	page, err := s.FollowingFeed(ctx, FeedRequest{Viewer: 1, First: 10})
	if err != nil || len(page.Edges) != 0 {
		t.Fatalf("feed after refused publishes: %+v, %v", page, err)
	}
	for _, tc := range []struct {
		at   time.Time
		want string
	}{
		{now.Add(-ScheduleGrace - time.Second), "in the past"},
		{time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC), "in the past"},
		{now.Add(ScheduleHorizon + time.Second), "a year ahead"},
		{time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC), "a year ahead"},
	} {
		if _, err := s.ScheduleLive(ctx, 1, "t", tc.at); store.CodeOf(err) != apierr.BadInput || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ScheduleLive(%v) err = %v, want %q", tc.at, err, tc.want)
		}
	}
	if _, err := s.ScheduleLive(ctx, 1, "\u200b", now.Add(time.Hour)); store.CodeOf(err) != apierr.BadInput {
		t.Errorf("zero-width title: err = %v", err)
	}
	live, err := s.LiveFeed(ctx, LiveRequest{Viewer: 1, First: 10})
	if err != nil || len(live.Edges) != 0 {
		t.Fatalf("live feed after refused schedules: %+v, %v", live, err)
	}
	// The edges of the window are in.
	for _, at := range []time.Time{now.Add(-ScheduleGrace), now.Add(ScheduleHorizon)} {
		if _, err := s.ScheduleLive(ctx, 1, "edge", at); err != nil {
			t.Errorf("ScheduleLive(%v): %v", at, err)
		}
	}
}

// TestLikeAtMaxCount: a like on a post whose counter is at MaxCount is
// refused whole (not recorded, counter unchanged); an unlike still works.
func TestLikeAtMaxCount(t *testing.T) {
	s := newService(t, storetest.New(t), Options{})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3)
	p, err := s.Publish(ctx, 1, "popular")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Like(ctx, 3, p.ID); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCounts(ctx, p.ID, PostCounts{Likes: MaxCount}); err != nil {
		t.Fatal(err)
	}
	if err := s.SetCounts(ctx, p.ID, PostCounts{Likes: MaxCount + 1}); store.CodeOf(err) != apierr.BadInput {
		t.Fatalf("SetCounts over MaxCount: %v", err)
	}
	if _, _, err := s.Like(ctx, 2, p.ID); store.CodeOf(err) != apierr.BadInput {
		t.Fatalf("like at the max: err = %v", err)
	}
	liked, err := s.Liked(ctx, 2, []store.ID{p.ID})
	if err != nil || liked[0] {
		t.Fatalf("a refused like was recorded: %v, %v", liked, err)
	}
	cs, err := s.PostCounts(ctx, []store.ID{p.ID})
	if err != nil || cs[0].Likes != MaxCount {
		t.Fatalf("counts %+v, %v", cs, err)
	}
	// An existing liker liking again is a no-op, not a refusal.
	if _, c, err := s.Like(ctx, 3, p.ID); err != nil || c.Likes != MaxCount {
		t.Fatalf("repeat like at the max: %+v, %v", c, err)
	}
	if _, c, err := s.Unlike(ctx, 3, p.ID); err != nil || c.Likes != MaxCount-1 {
		t.Fatalf("unlike at the max: %+v, %v", c, err)
	}
	if _, c, err := s.Like(ctx, 2, p.ID); err != nil || c.Likes != MaxCount {
		t.Fatalf("like below the max: %+v, %v", c, err)
	}
}
