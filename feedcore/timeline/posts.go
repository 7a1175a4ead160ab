package timeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/core"
	"github.com/feedd/feedd/feedcore/ratelimit"
	"github.com/feedd/feedd/feedcore/store"
)

// postTTL bounds how long a post may live in the client-side cache (see
// read_hydrate.go: feeds read every post through it, and the hot, big-V ones
// stay); Redis invalidates it at once on delete.
const postTTL = 10 * time.Minute

// Publish publishes a post of text alone, without an idempotency key
// (see PublishPost).
func (s *Service) Publish(ctx context.Context, author store.ID, text string) (*content.Post, error) {
	return s.PublishPost(ctx, author, NewPost{Text: text})
}

// PublishOnce publishes a post of text alone with an idempotency key
// (see PublishPost).
func (s *Service) PublishOnce(ctx context.Context, author store.ID, text, key string) (*content.Post, error) {
	return s.PublishPost(ctx, author, NewPost{Text: text, IdempotencyKey: key})
}

// NewPost is what a publish asks for.
type NewPost struct {
	Text           string
	Media          []content.Media
	ContentWarning string
	IdempotencyKey string
	// ReplyTo, when set, makes the post a reply to that post: it must be
	// a live post whose author and the replier do not block one another.
	ReplyTo store.ID
}

// idempotencyTTL is how long a publish's idempotency key is remembered.
const idempotencyTTL = 24 * time.Hour

// MaxIdempotencyKey bounds a client's idempotency key, in bytes.
const MaxIdempotencyKey = 128

// PublishPost stores a new post by author, puts it in the author's outbox
// and own inbox (read-your-writes), and queues its fan-out. The post must
// have text or media (checkNewPost has the rules); with ReplyTo it is a
// reply. With a non-empty IdempotencyKey, a retry by the same author with
// the same key within idempotencyTTL returns the post the first attempt
// made and creates nothing, whatever became of that attempt.
//
// The publish event is the commit: it is appended, with the post's
// content (text, media, content warning, the post it replies to) and the
// idempotency record, in one script on the author's stream shard. Once
// it is there the post reaches every target even if this request dies: the
// dispatcher materializes the post (hash, outbox, own inbox, its parent's
// replies) before fanning it out, as this request does right away. If the
// append fails, nothing was
// written anywhere.
//
// Round trips: the log script, which also spends the author's pending rate
// charge (the allowance lives on the same shard), then the
// materialization: 2. A reply reads its parent first with the replier's
// blocks: one more. The check that the author exists is served from
// this process's memory of existing users (usersExist); the first publish
// of an author this process has never seen adds one round trip.
func (s *Service) PublishPost(ctx context.Context, author store.ID, in NewPost) (_ *content.Post, err error) {
	defer store.Wrap(&err, "publish")
	if in, err = s.checkNewPost(in); err != nil {
		return nil, err
	}
	if err := s.UsersExist(ctx, author); err != nil {
		return nil, err
	}
	var parentAuthor store.ID
	if in.ReplyTo != 0 {
		if parentAuthor, err = s.replyable(ctx, author, in.ReplyTo); err != nil {
			return nil, err
		}
	}
	p, err := s.LogPublish(ctx, author, in, parentAuthor)
	if err != nil {
		return nil, err
	}
	if _, err := s.MaterializePosts(ctx, []*content.Post{p}); err != nil {
		return nil, fmt.Errorf("post %d queued, a worker finishes it: %w", p.ID, err)
	}
	return p, nil
}

// checkNewPost applies the content rules to what a publish asks for: the
// media under the service's URL policy, the text (which may be blank when
// there is media: content.CheckPostText), the content warning and the
// idempotency key.
func (s *Service) checkNewPost(in NewPost) (NewPost, error) {
	var err error
	if in.Media, err = content.CheckMedia(in.Media, s.Media); err != nil {
		return in, err
	}
	if in.Text, err = content.CheckPostText(in.Text, len(in.Media) > 0, s.Opts.MaxTextLen); err != nil {
		return in, err
	}
	if in.ContentWarning, err = content.CheckContentWarning(in.ContentWarning); err != nil {
		return in, err
	}
	if len(in.IdempotencyKey) > MaxIdempotencyKey {
		return in, apierr.Errorf(apierr.BadInput, "idempotencyKey has %d bytes; at most %d are allowed", len(in.IdempotencyKey), MaxIdempotencyKey)
	}
	return in, nil
}

// LogPublish appends a new post's publish event and returns the post: the
// new one, or the one an earlier attempt with the same idempotency key made.
// The author's pending rate charge, if ctx carries one not yet spent, is
// spent by the same script: refused, nothing is written and the error is
// RATE_LIMITED.
func (s *Service) LogPublish(ctx context.Context, author store.ID, in NewPost, parentAuthor store.ID) (*content.Post, error) {
	key := in.IdempotencyKey
	link := core.Event{Parent: in.ReplyTo, ParentAuthor: parentAuthor}
	shard := s.ShardOf(author)
	keys := []string{s.Keys.Events(shard), s.Keys.Clock(shard)}
	if key != "" {
		sum := sha256.Sum256([]byte(key))
		keys = append(keys, s.Keys.Idempotency(shard, author, hex.EncodeToString(sum[:16])))
	}
	ch := ratelimit.ChargeOf(ctx)
	chargeKeys, charge, rides := ch.SpendIn(author)
	if rides {
		// The script spends it; the client must not send it again.
		keys, ctx = append(keys, chargeKeys...), ratelimit.WithoutCharge(ctx)
	}
	enc := content.Encoded{Text: in.Text, Media: content.EncodeMedia(in.Media), CW: in.ContentWarning}
	args := append(core.LogArgs("alloc", s.NowMS(), withLink(enc.Record(), link), int(idempotencyTTL.Seconds()), key != "", charge),
		enc.EventFields("t", core.EvPublish, "u", store.FormatID(author))...)
	args = append(args, link.LinkFields()...)
	arr, err := s.Commit(ctx, core.LogScript, keys, args, core.LogScript.Cmd(s.Redis.B(), keys, args)).ToArray()
	if err == nil && len(arr) < 3 {
		err = fmt.Errorf("reply of %d values", len(arr))
	}
	if rides {
		var v ratelimit.Verdict
		if err == nil {
			status, _ := arr[0].AsInt64()
			wait, _ := arr[1].AsInt64()
			left, _ := arr[len(arr)-1].AsInt64()
			v = ratelimit.VerdictFrom(status != -1, wait, left, ch.Cost)
			v.Gone, v.Suspended = status == -2, status == -3
		}
		if refused := ch.SettleWith(v, err); refused != nil {
			return nil, refused
		}
	}
	if err != nil {
		return nil, fmt.Errorf("queue publish: %w", err)
	}
	var ms, count string
	var bad error
	if fresh, _ := arr[0].AsInt64(); fresh == 1 && len(arr) >= 4 {
		ms, _ = arr[1].ToString()
		count, _ = arr[2].ToString()
	} else if rec, err := arr[1].ToString(); err == nil {
		// The record is "ms count content", as logScript stored it.
		parts := strings.SplitN(rec, " ", 3)
		if len(parts) == 3 {
			ms, count = parts[0], parts[1]
			var rest string
			rest, link = cutLink(parts[2])
			enc, bad = content.ParseRecord(rest)
		}
	}
	ts, err1 := core.ParseInt(ms)
	n, err2 := strconv.ParseUint(count, 10, 64)
	if err1 != nil || err2 != nil || bad != nil || n >= 1<<core.ClockBits {
		return nil, fmt.Errorf("queue publish: unreadable reply %v", arr)
	}
	p, err := enc.Post(core.ComposeID(ts, n, shard), author, ts)
	if p != nil {
		p.ReplyTo, p.ReplyToAuthor = link.Parent, link.ParentAuthor
	}
	return p, err
}

// linkSep separates a publish's content from the post it replies to in
// its idempotency record: a control character, which no text holds
// (content.CheckText) and JSON escapes.
const linkSep = "\x02"

// withLink is the idempotency record of a publish of content (record)
// that replies to link's parent: so a retry returns (and materializes)
// the post the first attempt made.
func withLink(record string, link core.Event) string {
	if link.Parent == 0 {
		return record
	}
	return record + linkSep + store.FormatID(link.Parent) + " " + store.FormatID(link.ParentAuthor)
}

// cutLink reads what withLink wrote.
func cutLink(rec string) (string, core.Event) {
	record, l, ok := strings.Cut(rec, linkSep)
	if !ok {
		return record, core.Event{}
	}
	var link core.Event
	if a, b, ok := strings.Cut(l, " "); ok {
		link.Parent, _ = strconv.ParseUint(a, 10, 64)
		link.ParentAuthor, _ = strconv.ParseUint(b, 10, 64)
	}
	return record, link
}

// PutPost stores a post with a given id and time (import, demo) and runs
// the same write path as Publish.
func (s *Service) PutPost(ctx context.Context, p *content.Post) error {
	_, err := s.PutPosts(ctx, []*content.Post{p})
	return err
}

// PutPosts stores posts in order, in a few round trips for the batch. It
// stops at the first invalid post (bad id, unknown author) and returns how
// many were stored before it. Like Publish, each post's event is logged
// first and materialized after, so a batch cut short by a failure is
// finished by the workers for every post logged.
func (s *Service) PutPosts(ctx context.Context, ps []*content.Post) (_ int, err error) {
	defer store.Wrap(&err, "store posts")
	var stop error
	for i, p := range ps {
		if p.ID == 0 || p.Author == 0 {
			ps, stop = ps[:i], apierr.Errorf(apierr.BadInput, "post id and author must be positive numbers")
			break
		}
	}
	authors := make([]store.ID, len(ps))
	for i, p := range ps {
		authors[i] = p.Author
	}
	if n, err := s.Existing(ctx, authors); err != nil {
		return 0, err
	} else if n < len(ps) {
		ps, stop = ps[:n], apierr.Errorf(apierr.NotFound, "no user with id %d", authors[n])
	}
	if n, err := s.fillParentAuthors(ctx, ps); store.CodeOf(err) == apierr.NotFound {
		ps, stop = ps[:n], err
	} else if err != nil {
		return 0, err
	}
	cmds := make([]rueidis.Completed, len(ps))
	for i, p := range ps {
		shard := s.ShardOf(p.Author)
		e := core.Event{Type: core.EvPublish, User: p.Author, Item: store.Item{TS: p.CreatedAt.UnixMilli(), ID: p.ID}, Encoded: content.Encode(p),
			Parent: p.ReplyTo, ParentAuthor: p.ReplyToAuthor}
		cmds[i] = core.LogScript.Cmd(s.Redis.B(), []string{s.Keys.Events(shard), s.Keys.Clock(shard)},
			append(core.LogArgs("given", 0, "", 0, false, nil), e.Fields()...))
	}
	if err := store.FirstErr(s.DoMulti(ctx, cmds...)); err != nil {
		return 0, fmt.Errorf("queue posts: %w", err)
	}
	if _, err := s.MaterializePosts(ctx, ps); err != nil {
		return 0, fmt.Errorf("posts queued, workers finish them: %w", err)
	}
	if err := s.MarkSuspendedPosts(ctx, ps); err != nil {
		return 0, fmt.Errorf("posts stored: %w", err)
	}
	return len(ps), stop
}

// PostCreate stores the post (or repost record) KEYS[1], its fields and
// values ARGV, unless it exists: "new", "exists" or "deleted". A
// tombstone is final: a late publish event cannot revive it.
var PostCreate = store.NewScript(false, `
if redis.call('HGET', KEYS[1], 'd') == '1' then return 'deleted' end
if redis.call('EXISTS', KEYS[1]) == 1 then return 'exists' end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 'new'
`)

// PostHash is the fields and values postCreate stores for p: author,
// time, content (text, media, content warning, each when set), and the
// post it replies to or reposts, if any.
func PostHash(p *content.Post) []string {
	fv := content.Encode(p).EventFields("a", store.FormatID(p.Author), "t", store.ScoreArg(p.CreatedAt.UnixMilli()))
	return append(fv, linksOf(p).LinkFields()...)
}

// linksOf is an event carrying only p's links (parent, original).
func linksOf(p *content.Post) core.Event {
	return core.Event{Parent: p.ReplyTo, ParentAuthor: p.ReplyToAuthor, Orig: p.RepostOf, OrigAuthor: p.RepostOfAuthor}
}

// MaterializePosts makes logged posts visible: the post hash (created
// once), the author's outbox and own inbox. Idempotent; the publishing
// request and the dispatcher both run it. It reports, per post, whether it
// is live (false: deleted meanwhile, and kept out of the author's
// timelines). Readers skip index entries whose post hash does not exist
// yet, so the order of these writes does not matter.
func (s *Service) MaterializePosts(ctx context.Context, ps []*content.Post) ([]bool, error) {
	cmds := make([]rueidis.Completed, 0, 4*len(ps))
	created := make([]int, len(ps)) // where each post's postCreate is
	for i, p := range ps {
		it := store.Item{TS: p.CreatedAt.UnixMilli(), ID: p.ID}
		created[i] = len(cmds)
		cmds = append(cmds, PostCreate.Cmd(s.Redis.B(), []string{s.Keys.Post(p.ID)}, PostHash(p)))
		if p.ReplyTo != 0 {
			cmds = append(cmds, s.ReplyAddCmd(p))
		}
		cmds = append(cmds, s.Redis.B().Zadd().Key(s.Keys.Outbox(p.Author)).ScoreMember().ScoreMember(float64(it.TS), store.Member(it.ID)).Build())
		cmds = s.AppendPush(cmds, s.PostsTL(), p.Author, it, true)
	}
	rs := s.DoMulti(ctx, cmds...)
	if err := store.FirstErr(rs); err != nil {
		return nil, err
	}
	live := make([]bool, len(ps))
	var undo []*content.Post
	for i, p := range ps {
		state, _ := rs[created[i]].ToString()
		if live[i] = state != "deleted"; !live[i] {
			undo = append(undo, p)
		}
	}
	if len(undo) > 0 {
		if err := s.UnindexPosts(ctx, undo); err != nil {
			return nil, err
		}
	}
	return live, nil
}

// Delete tombstones viewer's post, removes it from the author's timelines
// and queues the removal fan-out. Reads skip tombstones, so the post is gone
// from every feed at once. Deleting a post already deleted by its author
// succeeds (a retry), and finishes whatever the first attempt left undone.
//
// As with Publish, the delete event is the commit: logged first, then
// applied here and again by the dispatcher, so a delete whose request died
// after logging still completes.
func (s *Service) Delete(ctx context.Context, viewer, postID store.ID) (err error) {
	defer store.Wrap(&err, "delete post %d", postID)
	ps, err := s.Posts(ctx, []store.ID{postID})
	if err != nil {
		return err
	}
	p := ps[0]
	if p == nil || p.IsRepost() { // a repost is taken back with UndoRepost
		return apierr.Errorf(apierr.NotFound, "no post with id %d", postID)
	}
	if p.Author != viewer {
		if p.Deleted {
			return apierr.Errorf(apierr.NotFound, "no post with id %d", postID)
		}
		return apierr.Errorf(apierr.Forbidden, "only the author may delete a post")
	}
	e := core.Event{Type: core.EvDelete, User: p.Author, Item: store.Item{TS: p.CreatedAt.UnixMilli(), ID: p.ID},
		Parent: p.ReplyTo, ParentAuthor: p.ReplyToAuthor}
	if err := s.Commit(ctx, nil, nil, nil, s.EmitCmd(e)).Error(); err != nil {
		return fmt.Errorf("queue the delete: %w", err)
	}
	if err := s.Tombstone(ctx, p); err != nil {
		return fmt.Errorf("queued, a worker finishes it: %w", err)
	}
	return nil
}

// Tombstone marks p deleted and takes it out of its author's timelines,
// in one pipeline: readers skip a tombstoned post wherever it is still
// indexed, so the order of these writes does not matter. Idempotent; the
// deleting request and the dispatcher both run it.
func (s *Service) Tombstone(ctx context.Context, p *content.Post) error {
	cmds := append(s.UnindexCmds([]*content.Post{p}),
		s.Redis.B().Hset().Key(s.Keys.Post(p.ID)).FieldValue().FieldValue("d", "1").Build())
	if p.ReplyTo != 0 {
		cmds = append(cmds, s.ReplyDropCmd(p))
	}
	return store.FirstErr(s.DoMulti(ctx, cmds...))
}

// UnindexPosts removes posts from their authors' outboxes and own inboxes.
func (s *Service) UnindexPosts(ctx context.Context, ps []*content.Post) error {
	return store.FirstErr(s.DoMulti(ctx, s.UnindexCmds(ps)...))
}

func (s *Service) UnindexCmds(ps []*content.Post) []rueidis.Completed {
	cmds := make([]rueidis.Completed, 0, 2*len(ps)+1)
	for _, p := range ps {
		cmds = append(cmds, s.Redis.B().Zrem().Key(s.Keys.Outbox(p.Author)).Member(store.Member(p.ID)).Build(),
			s.InboxRemoveCmd(s.PostsTL(), p.Author, p.ID))
	}
	return cmds
}

// Posts returns posts by id in order, nil where none exists; tombstones are
// returned with Deleted set. One pipelined round trip.
// Bulk readers that must not fill the client-side cache (the importer)
// use it; feeds use CachedPosts.
func (s *Service) Posts(ctx context.Context, ids []store.ID) (_ []*content.Post, err error) {
	defer store.Wrap(&err, "read posts")
	hgetall := func(id store.ID) rueidis.Completed { return s.Redis.B().Hgetall().Key(s.Keys.Post(id)).Build() }
	return parsePosts(ids, s.DoMulti(ctx, store.CmdsFor(ids, hgetall)...))
}

// parsePosts reads one post hash per id.
func parsePosts(ids []store.ID, rs []rueidis.RedisResult) ([]*content.Post, error) {
	out := make([]*content.Post, len(ids))
	for i, r := range rs {
		p, err := parsePost(ids[i], r)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

func parsePost(id store.ID, r rueidis.RedisResult) (*content.Post, error) {
	m, err := r.AsStrMap()
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	var f PostFields
	for i, name := range cachedPostFields {
		f[i] = m[name]
	}
	p, err := PostFromFields(id, f)
	if err != nil {
		return nil, err
	}
	if ms, err := core.ParseInt(m[FieldTakenDown]); err == nil {
		p.TakenDown, p.TakedownReason = time.UnixMilli(ms).UTC(), m[FieldTakedownReason]
	}
	return p, nil
}

// PostFields are the fields of a post hash in cachedPostFields order.
type PostFields [11]string

// PostFromFields is the post a post hash's fields describe, whether read whole
// (parsePost) or by field (CachedPosts).
func PostFromFields(id store.ID, f PostFields) (*content.Post, error) {
	a, _ := store.ParseID(f[0])
	ms, _ := core.ParseInt(f[1])
	media, err := content.DecodeMedia(f[4])
	if err != nil {
		return nil, fmt.Errorf("post %d: %w", id, err)
	}
	p := &content.Post{ID: id, Author: a, Text: f[2], CreatedAt: time.UnixMilli(ms).UTC(), Deleted: f[3] == "1",
		Media: media, ContentWarning: f[5], AuthorSuspended: f[6] == "1"}
	setLinks(p, f[7], f[8], f[9], f[10])
	return p, nil
}

// setLinks sets p's links from its hash's fields r, ra, o, oa ("" where
// unset): the parent it replies to and its author, the original a record
// reposts and its author.
func setLinks(p *content.Post, r, ra, o, oa string) {
	dst := [...]*store.ID{&p.ReplyTo, &p.ReplyToAuthor, &p.RepostOf, &p.RepostOfAuthor}
	for i, v := range [...]string{r, ra, o, oa} {
		if v != "" {
			*dst[i], _ = strconv.ParseUint(v, 10, 64)
		}
	}
}
