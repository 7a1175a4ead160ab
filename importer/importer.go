// Package importer loads a JSON Lines file of users, follows, posts, live
// sessions and post counters into feedd, one object a line, applied in
// order as if the events happened, so inboxes, outboxes and counts end up as
// live traffic would leave them:
//
//	{"type":"user","id":"111","handle":"ann","displayName":"Ann","avatarUrl":"..."}
//	{"type":"follow","follower":"111","followee":"200","createdAt":"2023-07-01T08:00:00Z"}
//	{"type":"post","id":"32850","author":"200","text":"...","createdAt":"2023-07-11T15:32:02Z"}
//	{"type":"post","id":"32851","author":"111","text":"...","createdAt":"...","replyTo":"32850"}
//	{"type":"repost","id":"40001","user":"111","post":"32850","createdAt":"2023-07-11T16:00:00Z"}
//	{"type":"live","id":"9","anchor":"200","title":"...","scheduledStartAt":"...","startedAt":"...","endedAt":"..."}
//	{"type":"like","user":"111","post":"32850"}
//	{"type":"favorite","user":"111","post":"32850","createdAt":"2023-07-12T09:00:00Z"}
//	{"type":"counts","post":"32850","likes":3,"comments":1,"reposts":0,"favorites":2}
//	{"type":"block","user":"111","target":"200","createdAt":"2024-01-02T03:04:05Z"}
//	{"type":"mute","user":"111","target":"300","createdAt":"...","until":"2030-01-01T00:00:00Z"}
//	{"type":"hide","user":"200","target":"111"}
//
// A block, mute or hide line records that user set it against target, as
// the mutations do (createdAt, optional, is when; a mute's optional until
// is its end, and an ended one is skipped). A block removes the follows
// between the two, so it comes after them, and before the posts, whose
// fan-out it steers.
//
//	{"type":"deleted","id":"111","handle":"ann","deletedAt":"2026-11-24T10:00:00Z"}
//
// A post line with replyTo is a reply to that post, as publishPost with
// replyTo makes it: it counts in the parent's comments. The parent must be
// in the store (an earlier line, or an earlier import) unless the line
// also gives replyToAuthor, the parent's author (an export writes it, so a
// reply may come before its parent, and a reply to a deleted post keeps
// whom it answered). A repost line records that user reposted post at
// createdAt, under the repost's own id, as the repost mutation does: post
// must be in the store, live; a second repost of one post by one user
// under another id is refused.
//
// A deleted line records a deleted account, as deleteAccount leaves it:
// whatever the store holds of it is removed, its requests are refused and
// its handle is held until deletedAt plus the hold (feedcore.Options.HandleHold).
//
//	{"type":"keywordFilter","user":"111","keyword":"spoiler","wholeWord":true,"expiresAt":"2030-01-01T00:00:00Z","createdAt":"..."}
//
// A keywordFilter line records a keyword filter of user, as
// addKeywordFilter does (the user must come first): wholeWord defaults to
// true, no expiresAt is no end, createdAt defaults to the import's time;
// one already expired is skipped.
//
//	{"type":"suspended","id":"200","reason":"spam","operator":"alice","createdAt":"2026-11-25T10:00:00Z"}
//	{"type":"takedown","id":"32851","author":"200","text":"...","createdAt":"2023-07-11T15:32:02Z","deletedAt":"2026-11-25T10:00:00Z","reason":"spam"}
//	{"type":"report","id":"1764064800000-0","user":"111","subject":"post:32850","reason":"SPAM","comment":"...","resolvedAt":"..."}
//	{"type":"audit","id":"1764064900000-0","createdAt":"...","operator":"alice","action":"takedown","subject":"post:32851","reason":"spam"}
//
// Moderation lines (feedd moderate, the report mutation): a suspended
// account (before its posts and sessions, which are then marked as they
// are stored), a post taken down (its tombstone; a post the store holds
// is taken down), a report under its id (open, or resolved at
// resolvedAt) and an audit entry under its id. Reports and audit entries
// keep their ids, so they must be newer than the store's own.
//
// A follow line's createdAt (optional) is when the follow was made, which
// orders follower lists; without it the import's order stands in (each
// such line a millisecond after the last, see applier.timeOf).
//
// A like line records that a user likes a post, as the like mutation does:
// the post's likers set and its likes counter move together, once however
// often the line is applied. A favorite line does the same for a user's
// favorite (bookmark) of a post, at its createdAt (optional, as for
// follows). A counts line sets the counters as given: a base that live
// activity (and the like and favorite lines after it) adds to, and that
// `feedd rebuild` recomputes the likes and favorites counters on top of.
// An export writes its likes and favorites first and its counts after:
// the import ends with exactly the exported counters.
//
// Blank lines are skipped. Ids are positive decimals, as strings or JSON
// numbers. Times are RFC 3339, kept in UTC at millisecond precision. A field
// the line's type does not have is an error, so typos are caught; so is a
// field given twice.
//
// Consecutive lines of one type are applied together through feedcore's
// bulk calls, a batch at a time, in file order. A bad line
// stops the import with a *LineError naming it: every line before it is
// applied, it and every line after it are not.
package importer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
)

const (
	// MaxLineBytes is the longest line accepted, 1 MiB.
	MaxLineBytes = 1 << 20
	// DefaultBatchSize is how many consecutive lines of one type are applied
	// in one bulk call when Options.BatchSize is 0.
	DefaultBatchSize = 2000
)

// Stats counts what an import applied.
type Stats struct {
	Users   int // user lines applied
	Follows int // follow lines applied
	Posts   int // post lines applied
	Reposts int // repost lines applied
	Lives   int // live lines passed to Options.Live
	Counts  int // counts lines passed to Options.Counts
	Likes   int // like lines applied
	// Favorites is favorite lines applied.
	Favorites int
	// Relations is block, mute and hide lines applied.
	Relations int
	Deleted   int // deleted lines applied (accounts recorded as deleted)
	// KeywordFilters is keywordFilter lines applied (expired ones skipped).
	KeywordFilters int
	// Moderation is suspended, takedown, report and audit lines applied.
	Moderation int
	// Skipped is live and counts lines validated but not applied because
	// their hook is nil.
	Skipped int
	// Lines is how many lines were read and applied, blank ones included:
	// all of them after a successful import, those before the bad line
	// after a *LineError.
	Lines int
}

// LineError is a line that could not be applied: malformed, or refused by
// feedd (an unknown user, a self-follow, a taken handle...). Err is the
// cause; a refusal by feedcore is a *apierr.Error.
type LineError struct {
	Line int    // 1-based line number
	Type string // the line's type, when it got that far
	Err  error
}

func (e *LineError) Error() string {
	if e.Type == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: %s: %v", e.Line, e.Type, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Options chooses how live and counts lines are applied (Load uses
// PutLive and PutCounts), and the batch size.
type Options struct {
	// Live applies a validated live line. Nil: live lines are validated and
	// counted in Stats.Skipped.
	Live func(ctx context.Context, l LiveLine) error
	// Counts applies a validated counts line. Nil: counts lines are
	// validated and counted in Stats.Skipped.
	Counts func(ctx context.Context, c CountsLine) error
	// BatchSize is the most lines applied in one bulk call. Default 2000.
	BatchSize int
	// Progress, when set, is called after each batch with the totals so
	// far (Lines: the last line applied).
	Progress func(Stats)
}

// Load reads JSON Lines from r and applies them to svc in order, every
// line type included (see PutLive and PutCounts).
func Load(ctx context.Context, svc *feedcore.Service, r io.Reader) (Stats, error) {
	return LoadWith(ctx, svc, r, Defaults(svc))
}

// Defaults are the options Load uses: every line type applied to svc.
func Defaults(svc *feedcore.Service) Options {
	return Options{Live: PutLive(svc), Counts: PutCounts(svc)}
}

// PutCounts is the Counts hook that sets a post's counters in svc. The
// post must exist (an earlier line or an earlier import).
func PutCounts(svc *feedcore.Service) func(context.Context, CountsLine) error {
	return func(ctx context.Context, c CountsLine) error {
		return svc.SetCounts(ctx, c.Post, feedcore.PostCounts{
			Likes: int(c.Likes), Comments: int(c.Comments), Reposts: int(c.Reposts), Favorites: int(c.Favorites)})
	}
}

// PutLive is the Live hook that stores sessions in svc, in the state their
// times give them (a replay is fanned out like a post).
func PutLive(svc *feedcore.Service) func(context.Context, LiveLine) error {
	return func(ctx context.Context, l LiveLine) error {
		at := func(t time.Time) *time.Time {
			if t.IsZero() {
				return nil
			}
			return &t
		}
		return svc.PutLive(ctx, &feedcore.LiveSession{ID: l.ID, Anchor: l.Anchor, Title: l.Title,
			ScheduledStartAt: at(l.ScheduledStartAt), StartedAt: at(l.StartedAt), EndedAt: at(l.EndedAt), CoverURL: l.CoverURL})
	}
}

// LoadWith is Load with hooks for the line types feedcore does not handle.
func LoadWith(ctx context.Context, svc *feedcore.Service, r io.Reader, o Options) (Stats, error) {
	if o.BatchSize <= 0 {
		o.BatchSize = DefaultBatchSize
	}
	// Parsing costs about 1% of applying (a million follows: 0.25 s of
	// 17 s), so a parse-ahead goroutine measurably gains nothing; batches
	// are parsed and applied in turn.
	p := newParser(r, o.BatchSize, svc.Options().MaxTextLen)
	a := &applier{svc: svc, o: o}
	var err error
	for b := p.next(); b != nil; b = p.next() {
		if err = a.apply(ctx, b); err != nil {
			break
		}
		if o.Progress != nil {
			st := a.st
			st.Lines = a.last
			o.Progress(st)
		}
		p.recycle(b)
	}
	if err == nil {
		err = p.err
	}
	a.st.Lines = a.last
	var le *LineError
	switch {
	case err == nil:
		a.st.Lines = p.line
	case errors.As(err, &le):
		a.st.Lines = le.Line - 1
	}
	return a.st, err
}

// batch is consecutive lines of one type. Batches are recycled.
type batch struct {
	kind   kind
	lines  []int // line number of each element
	users  []feedcore.User
	edges  []timedEdge
	posts  []feedcore.Post
	ptrs   []*feedcore.Post
	ids    []feedcore.ID
	lives  []LiveLine
	counts []CountsLine
	likes  []feedcore.PostLike
	rels   []feedcore.Relation
	gone   []feedcore.DeletedAccount
	favs   []feedcore.Favorite
	// plain and at are edges split for feedcore (FollowManyAt).
	plain []feedcore.Edge
	at    []time.Time
	kfs   []feedcore.KeywordFilter
	mods  []modLine
	// reposts are repost lines, as records (feedcore.PutReposts).
	reposts []feedcore.Post
}

// modLine is a moderation line: a suspension, a takedown, a report or an
// audit entry, applied one by one.
type modLine struct {
	suspension feedcore.Suspension
	takedown   feedcore.Post
	report     feedcore.Report
	audit      feedcore.AuditEntry
}

func (b *batch) reset() {
	b.kind = kindNone
	b.lines = b.lines[:0]
	clear(b.users) // drop strings for the collector
	b.users = b.users[:0]
	b.edges = b.edges[:0]
	clear(b.posts)
	b.posts = b.posts[:0]
	b.lives = b.lives[:0]
	b.counts = b.counts[:0]
	b.likes = b.likes[:0]
	b.rels = b.rels[:0]
	b.gone = b.gone[:0]
	clear(b.kfs)
	b.kfs = b.kfs[:0]
	clear(b.mods)
	b.mods = b.mods[:0]
	b.favs = b.favs[:0]
	b.reposts = b.reposts[:0]
}

var bom = []byte("\xef\xbb\xbf")

var errTooLong = fmt.Errorf("line is longer than %d bytes (1 MiB)", MaxLineBytes)

// parser turns lines into batches.
type parser struct {
	sc      *bufio.Scanner
	size    int
	maxText int
	line    int // lines read so far
	obj     object
	cur     *batch
	free    []*batch
	done    bool
	// err is why parsing stopped: nil at the end of r.
	err error
	// handles and postAt find conflicts inside the current batch while it
	// is parsed, before feedcore could half-apply them (see append).
	handles map[string]feedcore.ID
	postAt  map[feedcore.ID]int
	// reposted finds a user's second repost of a post under another id
	// inside the current batch (feedcore finds those of earlier batches).
	reposted map[feedcore.Edge]feedcore.ID
}

func newParser(r io.Reader, size, maxText int) *parser {
	sc := bufio.NewScanner(r)
	// Room for a 1 MiB line and its CR LF; longer lines are caught either
	// by the scanner or by the length check after it.
	sc.Buffer(make([]byte, 64<<10), MaxLineBytes+3)
	return &parser{sc: sc, size: size, maxText: maxText,
		handles: map[string]feedcore.ID{}, postAt: map[feedcore.ID]int{}, reposted: map[feedcore.Edge]feedcore.ID{}}
}

func (p *parser) get() *batch {
	clear(p.handles)
	clear(p.postAt)
	clear(p.reposted)
	if n := len(p.free); n > 0 {
		b := p.free[n-1]
		p.free = p.free[:n-1]
		b.reset()
		return b
	}
	return &batch{}
}

// recycle takes back a batch returned by next once it has been applied.
func (p *parser) recycle(b *batch) { p.free = append(p.free, b) }

// next returns the next batch, or nil when there are no more; p.err then
// says why.
func (p *parser) next() *batch {
	for !p.done {
		if !p.sc.Scan() {
			p.done = true
			if err := p.sc.Err(); errors.Is(err, bufio.ErrTooLong) {
				p.err = &LineError{Line: p.line + 1, Err: errTooLong}
			} else if err != nil {
				p.err = fmt.Errorf("importer: reading line %d: %w", p.line+1, err)
			}
			break
		}
		p.line++
		b := p.sc.Bytes()
		if p.line == 1 {
			b = bytes.TrimPrefix(b, bom)
		}
		if len(b) > MaxLineBytes {
			p.fail(kindNone, errTooLong)
			break
		}
		if blank(b) {
			continue
		}
		if out := p.add(b); out != nil {
			return out
		}
	}
	if p.cur != nil && len(p.cur.lines) > 0 {
		out := p.cur
		p.cur = nil
		return out
	}
	return nil
}

func (p *parser) fail(k kind, err error) {
	p.done = true
	p.err = &LineError{Line: p.line, Type: k.String(), Err: err}
}

// add parses line into the current batch. It returns the previous batch
// when this line cannot join it: another type, or full.
func (p *parser) add(line []byte) *batch {
	err := p.obj.parse(line)
	k := kindNone
	if err == nil {
		k, err = p.obj.kindOf()
	}
	if err != nil {
		p.fail(k, err)
		return nil
	}
	var out *batch
	if p.cur != nil && (p.cur.kind != k || len(p.cur.lines) >= p.size) {
		out, p.cur = p.cur, nil
	}
	if p.cur == nil {
		p.cur = p.get()
		p.cur.kind = k
	}
	if err := p.append(k, p.cur); err != nil {
		p.fail(k, err)
	}
	return out
}

// append adds the parsed line, of type k, to b, or says why it is bad.
func (p *parser) append(k kind, b *batch) error {
	var err error
	switch k {
	case kindUser:
		u, err := p.obj.user()
		if err != nil {
			return err
		}
		// PutUsers claims every handle of a batch before it knows whether
		// one is taken, so a clash inside a batch would leave later handles
		// claimed. Clashes with earlier batches it still finds itself.
		if prev, ok := p.handles[u.Handle]; ok && prev != u.ID {
			return &apierr.Error{Code: apierr.BadInput, Message: fmt.Sprintf("handle %q is taken by another user", u.Handle)}
		}
		p.handles[u.Handle] = u.ID
		b.users = append(b.users, u)
	case kindFollow:
		err = appendParsed(&b.edges, p.obj.follow)
	case kindPost:
		ps, err := p.obj.post(p.maxText)
		if err != nil {
			return err
		}
		if i, ok := p.postAt[ps.ID]; ok {
			if err := samePost(&b.posts[i], &ps); err != nil {
				return err
			}
		} else {
			p.postAt[ps.ID] = len(b.posts)
		}
		b.posts = append(b.posts, ps)
	case kindLive:
		err = appendParsed(&b.lives, p.obj.live)
	case kindCounts:
		err = appendParsed(&b.counts, p.obj.counts)
	case kindLike:
		err = appendParsed(&b.likes, p.obj.like)
	case kindBlock, kindMute, kindHide:
		err = appendParsed(&b.rels, func() (feedcore.Relation, error) { return p.obj.relation(k) })
	case kindDeleted:
		err = appendParsed(&b.gone, p.obj.deleted)
	case kindKeywordFilter:
		err = appendParsed(&b.kfs, p.obj.keywordFilter)
	case kindSuspended:
		err = appendParsed(&b.mods, func() (m modLine, err error) { m.suspension, err = p.obj.suspended(); return m, err })
	case kindTakedown:
		err = appendParsed(&b.mods, func() (m modLine, err error) { m.takedown, err = p.obj.takedown(p.maxText); return m, err })
	case kindReport:
		err = appendParsed(&b.mods, func() (m modLine, err error) { m.report, err = p.obj.report(); return m, err })
	case kindAudit:
		err = appendParsed(&b.mods, func() (m modLine, err error) { m.audit, err = p.obj.audit(); return m, err })
	case kindFavorite:
		err = appendParsed(&b.favs, p.obj.favorite)
	case kindRepost:
		r, err := p.obj.repost()
		if err != nil {
			return err
		}
		pair := feedcore.Edge{Follower: r.Author, Followee: r.RepostOf}
		if prev, ok := p.reposted[pair]; ok && prev != r.ID {
			return &apierr.Error{Code: apierr.BadInput, Message: fmt.Sprintf("repost %d: user %d reposts post %d already, as repost %d", r.ID, r.Author, r.RepostOf, prev)}
		}
		p.reposted[pair] = r.ID
		b.reposts = append(b.reposts, r)
	}
	if err != nil {
		return err
	}
	b.lines = append(b.lines, p.line)
	return nil
}

// appendParsed appends to list the value parse reads from the line, or
// returns why the line is bad.
func appendParsed[T any](list *[]T, parse func() (T, error)) error {
	v, err := parse()
	if err == nil {
		*list = append(*list, v)
	}
	return err
}

// samePost allows a post line to repeat one already stored, so a file can
// be loaded again; a different post under a used id is refused.
func samePost(old, p *feedcore.Post) error {
	switch {
	case old.Deleted:
		return &apierr.Error{Code: apierr.BadInput, Message: fmt.Sprintf("post %d was deleted; its id cannot be used again", p.ID)}
	case old.IsRepost():
		return &apierr.Error{Code: apierr.BadInput, Message: fmt.Sprintf("id %d is a repost's; a post cannot use it", p.ID)}
	case old.Author != p.Author || !old.CreatedAt.Equal(p.CreatedAt) || old.Text != p.Text ||
		!slices.Equal(old.Media, p.Media) || old.ContentWarning != p.ContentWarning || old.ReplyTo != p.ReplyTo:
		return &apierr.Error{Code: apierr.BadInput, Message: fmt.Sprintf("post %d already exists with another author, time, text, media, content warning or parent", p.ID)}
	}
	return nil
}

// applier applies batches in order.
type applier struct {
	svc  *feedcore.Service
	o    Options
	st   Stats
	last int // last line of the last batch applied in full
	// synthetic is the last time given to a follow or favorite line
	// without createdAt (timeOf).
	synthetic time.Time
}

// timeOf is the time of a follow or favorite line: its createdAt, or,
// without one, the import's order standing in: the service's clock, one
// millisecond after the last line so timed at least, so that later lines
// are newer. (A file of many such lines runs ahead of the clock by a
// millisecond a line beyond one a millisecond.)
func (a *applier) timeOf(given time.Time) time.Time {
	if !given.IsZero() {
		return given
	}
	t := a.svc.Options().Now().UTC().Truncate(time.Millisecond)
	if !t.After(a.synthetic) {
		t = a.synthetic.Add(time.Millisecond)
	}
	a.synthetic = t
	return t
}

func (a *applier) apply(ctx context.Context, b *batch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var n int
	var err error
	switch b.kind {
	case kindUser:
		n, err = a.svc.PutUsers(ctx, b.users)
		a.st.Users += n
	case kindFollow:
		b.plain, b.at = b.plain[:0], b.at[:0]
		for _, e := range b.edges {
			b.plain, b.at = append(b.plain, e.Edge), append(b.at, a.timeOf(e.at))
		}
		n, err = a.svc.FollowManyAt(ctx, b.plain, b.at)
		a.st.Follows += n
	case kindFavorite:
		for i := range b.favs {
			b.favs[i].At = a.timeOf(b.favs[i].At)
		}
		n, err = a.svc.PutFavorites(ctx, b.favs)
		a.st.Favorites += n
	case kindPost:
		n, err = a.putPosts(ctx, b)
		a.st.Posts += n
	case kindRepost:
		b.ptrs = b.ptrs[:0]
		for i := range b.reposts {
			b.ptrs = append(b.ptrs, &b.reposts[i])
		}
		n, err = a.svc.PutReposts(ctx, b.ptrs)
		a.st.Reposts += n
	case kindLive:
		if err := hookEach(ctx, b, b.lives, a.o.Live, &a.st.Lives, &a.st.Skipped); err != nil {
			return err
		}
		n = len(b.lives)
	case kindLike:
		n, err = a.svc.LikeMany(ctx, b.likes)
		a.st.Likes += n
	case kindBlock, kindMute, kindHide:
		n, err = a.svc.PutRelations(ctx, b.rels)
		a.st.Relations += n
	case kindDeleted:
		for _, d := range b.gone {
			if err = a.svc.PutDeletedAccount(ctx, d); err != nil {
				break
			}
			n++
		}
		a.st.Deleted += n
	case kindKeywordFilter:
		n, err = a.svc.PutKeywordFilters(ctx, b.kfs)
		a.st.KeywordFilters += n
	case kindCounts:
		if err := hookEach(ctx, b, b.counts, a.o.Counts, &a.st.Counts, &a.st.Skipped); err != nil {
			return err
		}
		n = len(b.counts)
	case kindSuspended, kindTakedown, kindReport, kindAudit:
		put := a.putModeration(b.kind)
		for i := range b.mods {
			if err = put(ctx, &b.mods[i]); err != nil {
				break
			}
			n++
		}
		a.st.Moderation += n
	}
	if err == nil && n < len(b.lines) {
		err = fmt.Errorf("feedcore applied %d of %d lines without saying why", n, len(b.lines))
	}
	if err != nil {
		var fe *apierr.Error
		if errors.As(err, &fe) && n < len(b.lines) {
			return &LineError{Line: b.lines[n], Type: b.kind.String(), Err: err}
		}
		if n > 0 {
			a.last = b.lines[n-1]
		}
		return fmt.Errorf("importer: applying %s lines %d to %d: %w", b.kind, b.lines[0], b.lines[len(b.lines)-1], err)
	}
	a.last = b.lines[len(b.lines)-1]
	return nil
}

// putModeration is how a moderation line of kind k is applied.
func (a *applier) putModeration(k kind) func(context.Context, *modLine) error {
	switch k {
	case kindSuspended:
		return func(ctx context.Context, m *modLine) error { return a.svc.PutSuspension(ctx, m.suspension) }
	case kindTakedown:
		return func(ctx context.Context, m *modLine) error { return a.svc.PutTakedown(ctx, &m.takedown) }
	case kindReport:
		return func(ctx context.Context, m *modLine) error { return a.svc.PutReport(ctx, m.report) }
	}
	return func(ctx context.Context, m *modLine) error { return a.svc.PutAudit(ctx, m.audit) }
}

// hookEach passes the batch's items, in line order, to hook (an
// Options hook), counting each in applied; with no hook each is counted in
// skipped. A refused item stops it with a *LineError naming its line.
func hookEach[T any](ctx context.Context, b *batch, items []T, hook func(context.Context, T) error, applied, skipped *int) error {
	for i, item := range items {
		if hook == nil {
			*skipped++
		} else if err := hook(ctx, item); err != nil {
			return &LineError{Line: b.lines[i], Type: b.kind.String(), Err: err}
		} else {
			*applied++
		}
	}
	return nil
}

// putPosts stores a batch of posts, first refusing any whose id is taken
// by a different post, which PutPosts would overwrite half-way (the old
// author's timelines would keep it).
func (a *applier) putPosts(ctx context.Context, b *batch) (int, error) {
	b.ids = b.ids[:0]
	for i := range b.posts {
		b.ids = append(b.ids, b.posts[i].ID)
	}
	stored, err := a.svc.Posts(ctx, b.ids)
	if err != nil {
		return 0, err
	}
	k, stop := len(b.posts), error(nil)
	for i, old := range stored {
		if old != nil {
			if stop = samePost(old, &b.posts[i]); stop != nil {
				k = i
				break
			}
		}
	}
	b.ptrs = b.ptrs[:0]
	for i := range b.posts[:k] {
		b.ptrs = append(b.ptrs, &b.posts[i])
	}
	n, err := a.svc.PutPosts(ctx, b.ptrs)
	if err == nil {
		err = stop
	}
	return n, err
}
