package importer

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/feedd/feedd/feedcore"
)

// kind is a line's type.
type kind uint8

const (
	kindNone kind = iota
	kindUser
	kindFollow
	kindPost
	kindLive
	kindCounts
	kindLike
	kindBlock
	kindMute
	kindHide
	kindDeleted
	numKinds
)

var kindNames = [...]string{kindNone: "", kindUser: "user", kindFollow: "follow", kindPost: "post", kindLive: "live", kindCounts: "counts", kindLike: "like",
	kindBlock: "block", kindMute: "mute", kindHide: "hide", kindDeleted: "deleted"}

func (k kind) String() string { return kindNames[k] }

// allowed is the fields each line type may have.
var allowed = [...]uint32{
	kindUser:   mask(fType, fID, fHandle, fDisplayName, fAvatarURL),
	kindFollow: mask(fType, fFollower, fFollowee),
	kindPost:   mask(fType, fID, fAuthor, fText, fCreatedAt),
	kindLive:   mask(fType, fID, fAnchor, fTitle, fScheduledStartAt, fStartedAt, fEndedAt),
	kindCounts: mask(fType, fPost, fLikes, fComments, fReposts, fFavorites),
	kindLike:   mask(fType, fUser, fPost),
	kindBlock:  mask(fType, fUser, fTarget, fCreatedAt),
	kindMute:   mask(fType, fUser, fTarget, fCreatedAt, fUntil),
	kindHide:   mask(fType, fUser, fTarget, fCreatedAt),
	// A deleted account: its id, handle (held for --handle-hold after
	// deletedAt) and when it was deleted.
	kindDeleted: mask(fType, fID, fHandle, fDeletedAt),
}

// LiveState is the state a live line describes, from which times it sets.
type LiveState string

const (
	// LivePreview: scheduled, not started (scheduledStartAt only).
	LivePreview LiveState = "PREVIEW"
	// LiveLive: started, not ended (startedAt, maybe scheduledStartAt).
	LiveLive LiveState = "LIVE"
	// LiveReplay: started and ended (startedAt and endedAt).
	LiveReplay LiveState = "REPLAY"
	// LiveCancelled: a preview called off before it started
	// (scheduledStartAt and endedAt, no startedAt).
	LiveCancelled LiveState = "CANCELLED"
)

// LiveLine is a validated live line. Times are UTC at millisecond
// precision; a zero time was not given.
type LiveLine struct {
	ID, Anchor       feedcore.ID
	Title            string
	ScheduledStartAt time.Time
	StartedAt        time.Time
	EndedAt          time.Time
	State            LiveState
}

// CountsLine is a validated counts line: a post's interaction counters.
// Counters the line leaves out are 0.
type CountsLine struct {
	Post                                feedcore.ID
	Likes, Comments, Reposts, Favorites int64
}

// kindOf reads the type field of a parsed line and checks its fields.
func (o *object) kindOf() (kind, error) {
	if !o.has(fType) {
		if o.unknown != "" {
			return kindNone, fmt.Errorf("unknown field %q", o.unknown)
		}
		return kindNone, errors.New(`missing field "type"`)
	}
	v := &o.vals[fType]
	name := v.raw // no copy in the usual case
	if v.kind != kString || v.esc || v.high {
		s, _, err := o.str(fType)
		if err != nil {
			return kindNone, err
		}
		name = []byte(s)
	}
	k := kindNone
	for i := kindUser; i < numKinds; i++ {
		if string(name) == kindNames[i] {
			k = i
		}
	}
	if k == kindNone {
		return kindNone, fmt.Errorf("unknown type %q: want user, follow, post, live, counts, like, block, mute, hide or deleted", name)
	}
	if o.unknown != "" {
		return k, fmt.Errorf("unknown field %q", o.unknown)
	}
	if extra := o.set &^ allowed[k]; extra != 0 {
		for f := range numFields {
			if extra&(1<<f) != 0 {
				return k, fmt.Errorf("unknown field %q: a %s line has no %s", f, k, f)
			}
		}
	}
	return k, nil
}

func (o *object) user() (feedcore.User, error) {
	var u feedcore.User
	var err error
	if u.ID, err = o.id(fID); err != nil {
		return u, err
	}
	var ok bool
	if u.Handle, ok, err = o.str(fHandle); err != nil {
		return u, err
	} else if !ok {
		return u, errors.New(`missing field "handle"`)
	}
	if u.DisplayName, _, err = o.str(fDisplayName); err != nil {
		return u, err
	}
	if u.AvatarURL, _, err = o.str(fAvatarURL); err != nil {
		return u, err
	}
	return u, nil
}

func (o *object) follow() (feedcore.Edge, error) {
	follower, followee, err := o.idPair(fFollower, fFollowee)
	return feedcore.Edge{Follower: follower, Followee: followee}, err
}

func (o *object) post(maxText int) (feedcore.Post, error) {
	var p feedcore.Post
	var err error
	if p.ID, p.Author, err = o.idPair(fID, fAuthor); err != nil {
		return p, err
	}
	if p.Text, err = o.text(fText, maxText, "a post needs text"); err != nil {
		return p, err
	}
	var at *time.Time
	if at, err = o.time(fCreatedAt); err != nil {
		return p, err
	} else if at == nil {
		return p, errors.New(`missing field "createdAt"`)
	}
	p.CreatedAt = *at
	return p, nil
}

func (o *object) live() (LiveLine, error) {
	var l LiveLine
	var err error
	if l.ID, l.Anchor, err = o.idPair(fID, fAnchor); err != nil {
		return l, err
	}
	if l.Title, err = o.text(fTitle, feedcore.MaxTitleLen, "a live needs a title"); err != nil {
		return l, err
	}
	var times [3]*time.Time
	for i, f := range [3]field{fScheduledStartAt, fStartedAt, fEndedAt} {
		if times[i], err = o.time(f); err != nil {
			return l, err
		}
	}
	sched, started, ended := times[0], times[1], times[2]
	switch {
	case started != nil && ended != nil:
		if ended.Before(*started) {
			return l, fmt.Errorf("endedAt %s is before startedAt %s", ended.Format(time.RFC3339Nano), started.Format(time.RFC3339Nano))
		}
		l.State = LiveReplay
	case started != nil:
		l.State = LiveLive
	case ended != nil && sched != nil:
		l.State = LiveCancelled
	case ended != nil:
		return l, errors.New("endedAt requires startedAt (or, for a cancelled preview, scheduledStartAt)")
	case sched != nil:
		l.State = LivePreview
	default:
		return l, errors.New("a live needs scheduledStartAt (a preview) or startedAt (live or ended)")
	}
	for i, t := range []*time.Time{&l.ScheduledStartAt, &l.StartedAt, &l.EndedAt} {
		if times[i] != nil {
			*t = *times[i]
		}
	}
	return l, nil
}

func (o *object) counts() (CountsLine, error) {
	var c CountsLine
	var err error
	if c.Post, err = o.id(fPost); err != nil {
		return c, err
	}
	fs := [...]field{fLikes, fComments, fReposts, fFavorites}
	for i, dst := range [...]*int64{&c.Likes, &c.Comments, &c.Reposts, &c.Favorites} {
		if *dst, err = o.count(fs[i]); err != nil {
			return c, err
		}
	}
	return c, nil
}

func (o *object) deleted() (feedcore.DeletedAccount, error) {
	var d feedcore.DeletedAccount
	var err error
	if d.User, err = o.id(fID); err != nil {
		return d, err
	}
	if d.Handle, _, err = o.str(fHandle); err != nil {
		return d, err
	}
	at, err := o.time(fDeletedAt)
	if err != nil {
		return d, err
	}
	if at == nil {
		return d, errors.New(`missing field "deletedAt"`)
	}
	d.DeletedAt = *at
	return d, nil
}

func (o *object) like() (feedcore.PostLike, error) {
	user, post, err := o.idPair(fUser, fPost)
	return feedcore.PostLike{User: user, Post: post}, err
}

// relation reads a block, mute or hide line: user sets it against
// target, at createdAt (optional: the import's time), a mute until its
// optional end.
func (o *object) relation(k kind) (feedcore.Relation, error) {
	r := feedcore.Relation{Kind: feedcore.RelationKind(k.String())}
	var err error
	if r.User, r.Target, err = o.idPair(fUser, fTarget); err != nil {
		return r, err
	}
	for f, dst := range map[field]*time.Time{fCreatedAt: &r.CreatedAt, fUntil: &r.Until} {
		if at, err := o.time(f); err != nil {
			return r, err
		} else if at != nil {
			*dst = *at
		}
	}
	return r, nil
}

// text returns required text field f as Publish takes it: blank is
// missing (need says what the line needs), then feedcore.CheckText's
// content rules, surrounding space dropped.
func (o *object) text(f field, maxLen int, need string) (string, error) {
	s, _, err := o.str(f)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("missing field %q: %s", f, need)
	}
	return feedcore.CheckText(f.String(), s, maxLen)
}

// idPair returns the ids of required fields a and b: the two ends of a
// follow or a like.
func (o *object) idPair(a, b field) (feedcore.ID, feedcore.ID, error) {
	x, err := o.id(a)
	if err != nil {
		return 0, 0, err
	}
	y, err := o.id(b)
	return x, y, err
}

// time returns optional field f as an RFC 3339 time in UTC, truncated to
// milliseconds; nil when absent.
func (o *object) time(f field) (*time.Time, error) {
	s, ok, err := o.str(f)
	if err != nil || !ok {
		return nil, err
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, fmt.Errorf("%s %q is not an RFC 3339 time like 2023-07-11T15:32:02Z", f, s)
	}
	if t.Before(time.Unix(0, 0)) {
		return nil, fmt.Errorf("%s %q is before 1970", f, s)
	}
	t = t.UTC().Truncate(time.Millisecond)
	return &t, nil
}
