package feedcore

import (
	"context"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// liveUpdates subscribes viewer to its live feed's updates until the test
// ends.
func liveUpdates(tb testing.TB, s *Service, viewer store.ID) <-chan LiveUpdate {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	ch, err := s.LiveFeedUpdates(ctx, viewer)
	if err != nil {
		tb.Fatal(err)
	}
	return ch
}

// nextLive waits for the next live update, failing the test after
// rtDeadline or when the channel closes.
func nextLive(tb testing.TB, ch <-chan LiveUpdate) LiveUpdate {
	tb.Helper()
	select {
	case u, ok := <-ch:
		if !ok {
			tb.Fatal("the live subscription closed")
		}
		return u
	case <-time.After(rtDeadline):
		tb.Fatal("timed out waiting for a live update")
	}
	return LiveUpdate{}
}

// sameBucket is an id other than id in id's realtime bucket: its notices
// travel on the same channel, in order.
func sameBucket(id, from store.ID) store.ID {
	for c := from; ; c++ {
		if c != id && store.RealtimeBucket(c) == store.RealtimeBucket(id) {
			return c
		}
	}
}

// A followed anchor's session reaches a follower when scheduled, started
// and ended; a follower who muted the anchor, and one the anchor blocked,
// get none of it. Each of those two also follows a second anchor of the
// same bucket, whose session, told on the same channel after the
// first's, reaches them: by then the first anchor's notices have been
// judged, in order.
func TestRealtimeLiveUpdates(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	const anchor, fan, muter, blocked = 2, 10, 11, 12
	other := sameBucket(anchor, 100)
	mustUsers(t, s, anchor, other, fan, muter, blocked)
	follow(t, s, fan, []store.ID{anchor})
	follow(t, s, muter, []store.ID{anchor, other})
	follow(t, s, blocked, []store.ID{anchor, other})
	if err := s.Mute(ctx, muter, anchor, 0); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	startRealtime(t, s, rtOptions)
	fanCh, muterCh, blockedCh := liveUpdates(t, s, fan), liveUpdates(t, s, muter), liveUpdates(t, s, blocked)
	if err := s.Block(ctx, anchor, blocked); err != nil { // drops the follow; the subscription stops following the anchor
		t.Fatal(err)
	}
	l, err := s.ScheduleLive(ctx, anchor, "soon", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []core.LiveState{core.StatePreview, core.StateLive, core.StateReplay} {
		switch want {
		case core.StateLive:
			_, err = s.StartLive(ctx, anchor, l.ID)
		case core.StateReplay:
			_, err = s.EndLive(ctx, anchor, l.ID)
		}
		if err != nil {
			t.Fatal(err)
		}
		if u := nextLive(t, fanCh); u.Session.ID != l.ID || u.State != want {
			t.Fatalf("the follower got session %d %s, want %d %s", u.Session.ID, u.State, l.ID, want)
		}
	}
	o, err := s.ScheduleLive(ctx, other, "other", time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	for name, ch := range map[string]<-chan LiveUpdate{"the muter": muterCh, "the blocked follower": blockedCh} {
		if u := nextLive(t, ch); u.Session.ID != o.ID || u.State != core.StatePreview {
			t.Errorf("%s got session %d %s first, want only the other anchor's %d PREVIEW", name, u.Session.ID, u.State, o.ID)
		}
	}
}

// A subscriber that lets Options.LiveQueue updates wait is dropped: its
// channel closes after what the queue held, and the drop is counted.
func TestRealtimeLiveSlowSubscriberDropped(t *testing.T) {
	s := testService(t, Options{})
	ctx := context.Background()
	const anchor, fan = 2, 10
	mustUsers(t, s, anchor, fan)
	follow(t, s, fan, []store.ID{anchor})
	drain(t, s)
	o := rtOptions
	o.LiveQueue = 2
	startRealtime(t, s, o)
	ch := liveUpdates(t, s, fan)
	for i := range 5 {
		if _, err := s.ScheduleLive(ctx, anchor, "s", time.Now().Add(time.Duration(i+1)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the slow subscriber's drop", func() bool { return s.RealtimeStats().SlowDropped == 1 })
	n := 0
	for range ch {
		n++
	}
	if n > o.LiveQueue {
		t.Fatalf("%d updates before the channel closed, want at most %d", n, o.LiveQueue)
	}
	if st := s.RealtimeStats(); st.NoticesDropped < 1 || st.Subscriptions != 0 {
		t.Fatalf("stats after the drop: %+v", st)
	}
}
