package importer

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/content"
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
	kindKeywordFilter
	kindSuspended
	kindTakedown
	kindReport
	kindAudit
	kindFavorite
	kindRepost
	numKinds
)

var kindNames = [...]string{kindNone: "", kindUser: "user", kindFollow: "follow", kindPost: "post", kindLive: "live", kindCounts: "counts", kindLike: "like",
	kindBlock: "block", kindMute: "mute", kindHide: "hide", kindDeleted: "deleted", kindKeywordFilter: "keywordFilter",
	kindSuspended: "suspended", kindTakedown: "takedown", kindReport: "report", kindAudit: "audit", kindFavorite: "favorite",
	kindRepost: "repost"}

func (k kind) String() string { return kindNames[k] }

// allowed is the fields each line type may have.
var allowed = [...]uint64{
	kindUser:   mask(fType, fID, fHandle, fDisplayName, fAvatarURL),
	kindFollow: mask(fType, fFollower, fFollowee, fCreatedAt),
	// A reply names the post it answers (replyTo) and, when that post is
	// not in the store (deleted since, or later in the file), its author.
	kindPost:   mask(fType, fID, fAuthor, fText, fCreatedAt, fMedia, fContentWarning, fReplyTo, fReplyToAuthor),
	kindLive:   mask(fType, fID, fAnchor, fTitle, fScheduledStartAt, fStartedAt, fEndedAt, fCoverURL),
	kindCounts: mask(fType, fPost, fLikes, fComments, fReposts, fFavorites),
	kindLike:   mask(fType, fUser, fPost),
	kindBlock:  mask(fType, fUser, fTarget, fCreatedAt),
	kindMute:   mask(fType, fUser, fTarget, fCreatedAt, fUntil),
	kindHide:   mask(fType, fUser, fTarget, fCreatedAt),
	// A deleted account: its id, handle (held for --handle-hold after
	// deletedAt) and when it was deleted.
	kindDeleted: mask(fType, fID, fHandle, fDeletedAt),
	// A keyword filter of user: wholeWord defaults to true, expiresAt to
	// none, createdAt to the import's time.
	kindKeywordFilter: mask(fType, fUser, fKeyword, fWholeWord, fExpiresAt, fCreatedAt),
	// Moderation (feedd moderate, the report mutation): a suspended
	// account; a post taken down, with its post line's fields, when
	// (deletedAt) and why; a report, by its id; an audit entry, by its id.
	kindSuspended: mask(fType, fID, fReason, fOperator, fCreatedAt),
	kindTakedown:  mask(fType, fID, fAuthor, fText, fCreatedAt, fDeletedAt, fReason),
	kindReport:    mask(fType, fID, fUser, fSubject, fReason, fComment, fResolvedAt),
	kindAudit:     mask(fType, fID, fCreatedAt, fOperator, fAction, fSubject, fReason),
	// A favorite: user favorites post, at createdAt (optional).
	kindFavorite: mask(fType, fUser, fPost, fCreatedAt),
	// A repost: its id, who reposted which post, and when.
	kindRepost: mask(fType, fID, fUser, fPost, fCreatedAt),
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
	CoverURL         string
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
		return kindNone, fmt.Errorf("unknown type %q: want %s or %s", name, strings.Join(kindNames[kindUser:numKinds-1], ", "), kindNames[numKinds-1])
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

// timedEdge is a follow line: the edge and when it was made (zero: not
// given, the import's order stands in).
type timedEdge struct {
	feedcore.Edge
	at time.Time
}

func (o *object) follow() (timedEdge, error) {
	follower, followee, err := o.idPair(fFollower, fFollowee)
	if err != nil {
		return timedEdge{}, err
	}
	at, err := o.time(fCreatedAt)
	e := timedEdge{Edge: feedcore.Edge{Follower: follower, Followee: followee}}
	if at != nil {
		e.at = *at
	}
	return e, err
}

// favorite reads a favorite line: user favorites post, at createdAt
// (zero when not given: the import's order stands in).
func (o *object) favorite() (feedcore.Favorite, error) {
	user, post, err := o.idPair(fUser, fPost)
	if err != nil {
		return feedcore.Favorite{}, err
	}
	f := feedcore.Favorite{User: user, Post: post}
	at, err := o.time(fCreatedAt)
	if at != nil {
		f.At = *at
	}
	return f, err
}

func (o *object) post(maxText int) (feedcore.Post, error) {
	var p feedcore.Post
	var err error
	if p.ID, p.Author, err = o.idPair(fID, fAuthor); err != nil {
		return p, err
	}
	if p.Media, err = o.media(); err != nil {
		return p, err
	}
	if s, _, err := o.str(fText); err != nil {
		return p, err
	} else if len(p.Media) == 0 || strings.TrimSpace(s) != "" {
		if p.Text, err = o.text(fText, maxText, "a post needs text or media"); err != nil {
			return p, err
		}
	}
	cw, _, err := o.str(fContentWarning)
	if err != nil {
		return p, err
	}
	if p.ContentWarning, err = content.CheckContentWarning(cw); err != nil {
		return p, err
	}
	var at *time.Time
	if at, err = o.time(fCreatedAt); err != nil {
		return p, err
	} else if at == nil {
		return p, errors.New(`missing field "createdAt"`)
	}
	p.CreatedAt = *at
	if o.has(fReplyTo) {
		if p.ReplyTo, err = o.id(fReplyTo); err != nil {
			return p, err
		}
	}
	if o.has(fReplyToAuthor) {
		if p.ReplyTo == 0 {
			return p, errors.New(`replyToAuthor without replyTo`)
		}
		if p.ReplyToAuthor, err = o.id(fReplyToAuthor); err != nil {
			return p, err
		}
	}
	return p, nil
}

// repost reads a repost line: user reposted post at createdAt, as the
// repost id.
func (o *object) repost() (feedcore.Post, error) {
	var r feedcore.Post
	var err error
	if r.ID, err = o.id(fID); err != nil {
		return r, err
	}
	if r.Author, r.RepostOf, err = o.idPair(fUser, fPost); err != nil {
		return r, err
	}
	at, err := o.time(fCreatedAt)
	if err != nil {
		return r, err
	}
	if at == nil {
		return r, errors.New(`missing field "createdAt"`)
	}
	r.CreatedAt = *at
	return r, nil
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
	cover, _, err := o.str(fCoverURL)
	if err != nil {
		return l, err
	}
	if l.CoverURL, err = content.CheckCoverURL(cover, content.ImportURLs); err != nil {
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

func (o *object) suspended() (feedcore.Suspension, error) {
	var sp feedcore.Suspension
	var err error
	if sp.User, err = o.id(fID); err != nil {
		return sp, err
	}
	if sp.Reason, sp.Operator, err = o.modText(); err != nil {
		return sp, err
	}
	if at, err := o.time(fCreatedAt); err != nil {
		return sp, err
	} else if at != nil {
		sp.At = *at
	}
	return sp, nil
}

// modText reads a moderation line's optional reason and operator, as
// limited as an operator's (feedcore.MaxModReason, MaxModOperator).
func (o *object) modText() (reason, operator string, err error) {
	if reason, err = o.optionalText(fReason, feedcore.MaxModReason); err != nil {
		return "", "", err
	}
	operator, err = o.optionalText(fOperator, feedcore.MaxModOperator)
	return reason, operator, err
}

// optionalText returns text field f under the content rules, or "" when
// it is absent or blank.
func (o *object) optionalText(f field, maxLen int) (string, error) {
	s, _, err := o.str(f)
	if err != nil || strings.TrimSpace(s) == "" {
		return "", err
	}
	return content.CheckText(f.String(), s, maxLen)
}

// takedown reads a takedown line: the post as its post line has it (its
// text optional: a deleted account's posts keep none), when it was taken
// down (deletedAt) and why.
func (o *object) takedown(maxText int) (feedcore.Post, error) {
	var p feedcore.Post
	var err error
	if p.ID, p.Author, err = o.idPair(fID, fAuthor); err != nil {
		return p, err
	}
	if p.Text, err = o.optionalText(fText, maxText); err != nil {
		return p, err
	}
	if p.TakedownReason, err = o.optionalText(fReason, feedcore.MaxModReason); err != nil {
		return p, err
	}
	for f, dst := range map[field]*time.Time{fCreatedAt: &p.CreatedAt, fDeletedAt: &p.TakenDown} {
		at, err := o.time(f)
		if err != nil {
			return p, err
		}
		if at == nil {
			return p, fmt.Errorf("missing field %q", f)
		}
		*dst = *at
	}
	p.Deleted = true
	return p, nil
}

// entryID returns field f, required, as a report or audit entry id.
func (o *object) entryID(f field) (string, error) {
	s, ok, err := o.str(f)
	switch {
	case err != nil:
		return "", err
	case !ok:
		return "", fmt.Errorf("missing field %q", f)
	case !feedcore.ValidEntryID(s):
		return "", fmt.Errorf("%s %q is not an entry id like 1764064800000-0", f, s)
	}
	return s, nil
}

func (o *object) report() (feedcore.Report, error) {
	var r feedcore.Report
	var err error
	if r.ID, err = o.entryID(fID); err != nil {
		return r, err
	}
	if r.Reporter, err = o.id(fUser); err != nil {
		return r, err
	}
	subject, _, err := o.str(fSubject)
	if err != nil {
		return r, err
	}
	if r.Subject, err = feedcore.ParseTarget(subject); err != nil {
		return r, err
	}
	if r.Reason, _, err = o.str(fReason); err != nil {
		return r, err
	}
	if r.Comment, err = o.optionalText(fComment, feedcore.MaxReportComment); err != nil {
		return r, err
	}
	if at, err := o.time(fResolvedAt); err != nil {
		return r, err
	} else if at != nil {
		r.Resolved = *at
	}
	return r, nil
}

func (o *object) audit() (feedcore.AuditEntry, error) {
	var e feedcore.AuditEntry
	var err error
	if e.ID, err = o.entryID(fID); err != nil {
		return e, err
	}
	if e.Reason, e.Operator, err = o.modText(); err != nil {
		return e, err
	}
	if e.Action, _, err = o.str(fAction); err != nil {
		return e, err
	}
	if e.Subject, _, err = o.str(fSubject); err != nil {
		return e, err
	}
	at, err := o.time(fCreatedAt)
	if err != nil {
		return e, err
	}
	if at == nil {
		return e, errors.New(`missing field "createdAt"`)
	}
	e.At = *at
	return e, nil
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

// keywordFilter reads a keywordFilter line. The keyword's rules are
// feedcore's (AddKeywordFilter's), checked when the line is applied.
func (o *object) keywordFilter() (feedcore.KeywordFilter, error) {
	var f feedcore.KeywordFilter
	var err error
	if f.User, err = o.id(fUser); err != nil {
		return f, err
	}
	var ok bool
	if f.Keyword, ok, err = o.str(fKeyword); err != nil {
		return f, err
	} else if !ok {
		return f, errors.New(`missing field "keyword"`)
	}
	if f.WholeWord, err = o.flag(fWholeWord, true); err != nil {
		return f, err
	}
	if f.ExpiresAt, err = o.time(fExpiresAt); err != nil {
		return f, err
	}
	if at, err := o.time(fCreatedAt); err != nil {
		return f, err
	} else if at != nil {
		f.CreatedAt = *at
	}
	return f, nil
}

// text returns required text field f as Publish takes it: blank is
// missing (need says what the line needs), then content.CheckText's
// content rules, surrounding space dropped.
func (o *object) text(f field, maxLen int, need string) (string, error) {
	s, _, err := o.str(f)
	if err != nil {
		return "", err
	}
	if strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("missing field %q: %s", f, need)
	}
	return content.CheckText(f.String(), s, maxLen)
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
