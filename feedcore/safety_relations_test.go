package feedcore

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
)

// zscores reads a sorted set of the test's as member id -> score.
func zscores(tb testing.TB, s *Service, key string) map[ID]int64 {
	tb.Helper()
	items, err := parseEntries(s.do(context.Background(), s.c.B().Zrange().Key(key).Min("0").Max("-1").Withscores().Build()))
	if err != nil {
		tb.Fatal(err)
	}
	out := map[ID]int64{}
	for _, it := range items {
		out[it.ID] = it.TS
	}
	return out
}

// Bad input: oneself, a negative duration, an unknown user; the limit,
// which a repeat at the limit passes.
func TestRelationInput(t *testing.T) {
	s := testService(t, Options{MaxRelations: 2})
	ctx := context.Background()
	mustUsers(t, s, 1, 2, 3, 4)
	wantCode(t, "block oneself", s.Block(ctx, 1, 1), apierr.BadInput)
	wantCode(t, "mute oneself", s.Mute(ctx, 1, 1, 0), apierr.BadInput)
	wantCode(t, "hide from oneself", s.HidePostsFrom(ctx, 1, 1), apierr.BadInput)
	wantCode(t, "negative mute", s.Mute(ctx, 1, 2, -time.Second), apierr.BadInput)
	wantCode(t, "block a stranger", s.Block(ctx, 1, 99), apierr.NotFound)
	if err := s.Block(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	if err := s.Mute(ctx, 1, 3, time.Hour); err != nil {
		t.Fatal(err)
	}
	err := s.HidePostsFrom(ctx, 1, 4)
	wantCode(t, "past the limit", err, apierr.BadInput)
	if !strings.Contains(err.Error(), "--max-blocks") {
		t.Errorf("limit error %q does not name --max-blocks", err)
	}
	for _, again := range []func() error{
		func() error { return s.Block(ctx, 1, 2) },
		func() error { return s.Mute(ctx, 1, 3, 2*time.Hour) },
	} {
		if err := again(); err != nil {
			t.Fatalf("repeat at the limit: %v", err)
		}
	}
	if got := zscores(t, s, s.k.hides(1)); len(got) != 0 {
		t.Fatalf("refused hide recorded: %v", got)
	}
	if err := s.Unmute(ctx, 1, 3); err != nil {
		t.Fatal(err)
	}
	if err := s.HidePostsFrom(ctx, 1, 4); err != nil {
		t.Fatalf("hide after an unmute made room: %v", err)
	}
}

// The records and the sets derived from them, in both users' slots, for
// each control; repeating a mutation changes nothing, and undoing it
// leaves nothing behind.
func TestRelationSets(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{Now: clk.now})
	ctx := context.Background()
	mustUsers(t, s, 1, 2)
	now := clk.now().UnixMilli()
	check := func(what string, want map[string]map[ID]int64) {
		t.Helper()
		for name, key := range map[string]string{
			"bk:1": s.k.blocks(1), "bb:2": s.k.blockedBy(2), "hx:1": s.k.hiddenAuthors(1), "hx:2": s.k.hiddenAuthors(2),
			"nx:1": s.k.noPush(1), "nx:2": s.k.noPush(2), "hd:1": s.k.hides(1), "mu:1": s.k.mutes(1), "mue:1": s.k.muteEnds(1),
			"bb:1": s.k.blockedBy(1), "bk:2": s.k.blocks(2),
		} {
			got := zscores(t, s, key)
			w := want[name]
			if len(got) != len(w) {
				t.Fatalf("%s: %s = %v, want %v", what, name, got, w)
			}
			for id, sc := range w {
				if got[id] != sc {
					t.Fatalf("%s: %s = %v, want %v", what, name, got, w)
				}
			}
		}
	}
	for range 2 { // the second time changes nothing
		if err := s.Block(ctx, 1, 2); err != nil {
			t.Fatal(err)
		}
		check("block", map[string]map[ID]int64{"bk:1": {2: now}, "bb:2": {1: now},
			"hx:1": {2: relationForever}, "hx:2": {1: relationForever}, "nx:1": {2: relationForever}, "nx:2": {1: relationForever}})
	}
	if err := s.Unblock(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	check("unblock", nil)
	end := now + time.Hour.Milliseconds()
	for range 2 {
		if err := s.Mute(ctx, 1, 2, time.Hour); err != nil {
			t.Fatal(err)
		}
		check("mute", map[string]map[ID]int64{"mu:1": {2: now}, "mue:1": {2: end}, "hx:1": {2: end}, "nx:2": {1: end}})
	}
	if err := s.Unmute(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	check("unmute", nil)
	for range 2 {
		if err := s.HidePostsFrom(ctx, 1, 2); err != nil {
			t.Fatal(err)
		}
		check("hide", map[string]map[ID]int64{"hd:1": {2: now}, "hx:2": {1: relationForever}, "nx:1": {2: relationForever}})
	}
	if err := s.UnhidePostsFrom(ctx, 1, 2); err != nil {
		t.Fatal(err)
	}
	check("unhide", nil)
}
