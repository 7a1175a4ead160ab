package feedcore

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/feedd/feedd/feedcore/store"
)

// TestDormantReaderCostsNothingAndReturns: a reader unseen for
// DormantAfter loses its inboxes and is pushed nothing, by an ordinary
// author as by a big-V; its next read is every post, merged from the
// outboxes, and queues its return, which rebuilds the inbox and resumes
// the pushes.
func TestDormantReaderCostsNothingAndReturns(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{BigVThreshold: 1, InboxCap: 8, ActiveWindow: time.Hour, DormantAfter: 2 * time.Hour, Now: clk.now})
	ctx := context.Background()
	const reader, plain, big, fan = 10, 1, 2, 11
	mustUsers(t, s, reader, plain, big, fan)
	follow(t, s, fan, []store.ID{big}) // two followers: big is big-V
	follow(t, s, reader, []store.ID{plain, big})
	var all []store.ID
	post := func(author store.ID) {
		t.Helper()
		clk.advance(time.Second)
		all = append(all, publishN(t, s, author, 1)...)
	}
	for range 6 {
		post(plain)
		post(big)
	}
	if err := s.Touch(ctx, reader); err != nil {
		t.Fatal(err)
	}
	drain(t, s)
	clk.advance(3 * time.Hour)
	if _, err := s.Sweep(ctx, 100); err != nil {
		t.Fatal(err)
	}
	if st := s.Stats(); st.Slept != 1 {
		t.Fatalf("sweep put %d readers to sleep, want 1 (the reader)", st.Slept)
	}
	if n, err := s.Redis.Do(ctx, s.Redis.B().Exists().Key(s.Keys.Inbox(reader), s.Keys.ReplayInbox(reader)).Build()).AsInt64(); err != nil || n != 0 {
		t.Fatalf("a dormant reader keeps %d inboxes (err %v), want none", n, err)
	}
	before := s.Stats().InboxWrites
	post(plain) // only the dormant reader follows plain
	drain(t, s)
	if w := s.Stats().InboxWrites - before; w != 0 {
		t.Fatalf("a post of an author followed only by a dormant reader made %d inbox writes, want 0", w)
	}
	post(big)
	drain(t, s)
	want := newestFirst(all)
	if got := readAll(t, s, reader, 5); !slices.Equal(got, want) { // the return: merged
		t.Fatalf("returning reader's feed is %v, want %v", got, want)
	}
	drain(t, s) // its upgrade
	if st := s.Stats(); st.Woken != 1 {
		t.Fatalf("%d readers woken, want 1", st.Woken)
	}
	inbox, err := s.Newest(ctx, s.Keys.Inbox(reader), 100)
	if err != nil {
		t.Fatal(err)
	}
	if got := idsOfItems(inbox); !slices.Equal(got, want[:8]) {
		t.Fatalf("rebuilt inbox holds %v, want the newest 8 %v", got, want[:8])
	}
	before = s.Stats().InboxWrites
	post(plain)
	drain(t, s)
	if w := s.Stats().InboxWrites - before; w != 1 {
		t.Fatalf("a post after the return made %d inbox writes, want 1: pushes resume", w)
	}
	if got, want := readAll(t, s, reader, 3), newestFirst(all); !slices.Equal(got, want) {
		t.Fatalf("woken reader's feed is %v, want %v", got, want)
	}
}

// TestSleepDemotesAnActiveReader: Sleep (the load tool's dormant share)
// takes an active, complete reader out of its big-V followees' active sets
// as well as dropping its inboxes, so no push of any author reaches it, and
// its feed stays whole.
func TestSleepDemotesAnActiveReader(t *testing.T) {
	clk := clockAt(testEpoch)
	s := testService(t, Options{BigVThreshold: 1, InboxCap: 4, Now: clk.now})
	ctx := context.Background()
	const reader, plain, big, fan = 10, 1, 2, 11
	mustUsers(t, s, reader, plain, big, fan)
	follow(t, s, fan, []store.ID{big})
	follow(t, s, reader, []store.ID{plain, big})
	if err := s.Touch(ctx, reader); err != nil {
		t.Fatal(err)
	}
	all := publishN(t, s, big, 3)
	drain(t, s)
	if err := s.Sleep(ctx, reader); err != nil {
		t.Fatal(err)
	}
	before := s.Stats().InboxWrites
	all = append(all, publishN(t, s, big, 2)...)
	all = append(all, publishN(t, s, plain, 2)...)
	drain(t, s)
	if w := s.Stats().InboxWrites - before; w != 0 {
		t.Fatalf("posts after Sleep made %d inbox writes to the reader, want 0", w)
	}
	if got := readAll(t, s, reader, 2); !slices.Equal(got, newestFirst(all)) {
		t.Fatalf("slept reader's feed is %v, want %v", got, newestFirst(all))
	}
}
