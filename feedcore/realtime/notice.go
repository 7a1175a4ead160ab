package realtime

import (
	"errors"
	"strconv"
	"strings"

	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/store"
)

// A notice on a channel is text: its kind's letter, the author (or
// anchor), the item (post or session) and, on a viewer channel, the
// readers of that bucket it is for, comma-separated, all in decimal:
// "p 12 34 5,6". It names whom to recount, never what they will see.

// message is one publish: a payload on a channel.
type message struct{ channel, payload string }

var kindLetters = map[core.NoticeKind]byte{
	core.NoticePost: 'p', core.NoticeRemoval: 'r', core.NoticeViews: 'v',
	core.NoticeLive: 'l', core.NoticeSuspension: 's', core.NoticeAnchors: 'a',
}

// encode spells n for readers (those of one bucket, or none).
func encode(n core.Notice, readers []store.ID) string {
	b := make([]byte, 0, 48+21*len(readers))
	b = append(b, kindLetters[n.Kind], ' ')
	b = strconv.AppendUint(b, n.Author, 10)
	b = append(b, ' ')
	b = strconv.AppendUint(b, n.Item, 10)
	for i, r := range readers {
		if i == 0 {
			b = append(b, ' ')
		} else {
			b = append(b, ',')
		}
		b = strconv.AppendUint(b, r, 10)
	}
	return string(b)
}

var errBadNotice = errors.New("realtime: unreadable notice")

// decode reads what encode spelt; a notice it cannot read is dropped by
// the caller (a replica of another version may send one).
func decode(payload string) (core.Notice, error) {
	f := strings.Fields(payload)
	if len(f) < 3 || len(f[0]) != 1 {
		return core.Notice{}, errBadNotice
	}
	var n core.Notice
	for k, l := range kindLetters {
		if l == f[0][0] {
			n.Kind = k
		}
	}
	var err1, err2 error
	n.Author, err1 = strconv.ParseUint(f[1], 10, 64)
	n.Item, err2 = strconv.ParseUint(f[2], 10, 64)
	if n.Kind == 0 || err1 != nil || err2 != nil || len(f) > 4 {
		return core.Notice{}, errBadNotice
	}
	if len(f) == 4 {
		rs := strings.Split(f[3], ",")
		n.Readers = make([]store.ID, len(rs))
		for i, r := range rs {
			id, err := strconv.ParseUint(r, 10, 64)
			if err != nil {
				return core.Notice{}, errBadNotice
			}
			n.Readers[i] = id
		}
	}
	return n, nil
}

// messages turns notices into publishes: one per viewer bucket a
// notice's readers fall in, and one on the author's, anchor's or
// moderation channel for a notice to readers merged on read, a live
// session's change or a suspension.
func messages(k store.Keys, ns []core.Notice) []message {
	var out []message
	for _, n := range ns {
		var byBucket [store.RealtimeBuckets][]store.ID
		for _, r := range n.Readers {
			b := store.RealtimeBucket(r)
			byBucket[b] = append(byBucket[b], r)
		}
		for b, rs := range byBucket {
			if len(rs) > 0 {
				out = append(out, message{k.ViewerChannel(b), encode(n, rs)})
			}
		}
		switch {
		case n.Kind == core.NoticeLive:
			out = append(out, message{k.AnchorChannel(store.RealtimeBucket(n.Author)), encode(n, nil)})
		case n.Kind == core.NoticeSuspension:
			out = append(out, message{k.ModerationChannel(), encode(n, nil)})
		case n.Merged:
			out = append(out, message{k.AuthorChannel(store.RealtimeBucket(n.Author)), encode(n, nil)})
		}
	}
	return out
}
