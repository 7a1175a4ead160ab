package feedcore

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/redis/rueidis"
)

// postTTL bounds how long a post may live in the client-side cache (see
// hydrate.go: feeds read every post through it, and the hot, big-V ones
// stay); Redis invalidates it at once on delete.
const postTTL = 10 * time.Minute

// Publish stores a new post by author, puts it in the author's outbox and
// own inbox (read-your-writes), and queues its fan-out. It returns once the
// fan-out event is durable in Redis.
func (s *Service) Publish(ctx context.Context, author ID, text string) (*Post, error) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, errorf(CodeBadInput, "text must not be empty")
	}
	if n := utf8.RuneCountInString(text); n > s.o.MaxTextLen {
		return nil, errorf(CodeBadInput, "text has %d characters; at most %d are allowed", n, s.o.MaxTextLen)
	}
	if !utf8.ValidString(text) {
		return nil, errorf(CodeBadInput, "text must be valid UTF-8")
	}
	now := s.o.Now()
	id, err := s.newID(ctx, now)
	if err != nil {
		return nil, err
	}
	p := &Post{ID: id, Author: author, Text: text, CreatedAt: now.Truncate(time.Millisecond)}
	if err := s.PutPost(ctx, p); err != nil {
		return nil, err
	}
	return p, nil
}

// newID returns a new time-ordered id for a post or live session:
// milliseconds, then 16 bits of a counter shared by every replica.
func (s *Service) newID(ctx context.Context, now time.Time) (ID, error) {
	seq, err := s.do(ctx, s.c.B().Incr().Key(s.k.seq()).Build()).AsInt64()
	if err != nil {
		return 0, err
	}
	return ID(now.UnixMilli())<<16 | ID(seq&0xffff), nil
}

// PutPost stores a post with a given id and time (import, demo) and runs
// the same write path as Publish.
func (s *Service) PutPost(ctx context.Context, p *Post) error {
	_, err := s.PutPosts(ctx, []*Post{p})
	return err
}

// PutPosts stores posts in order, in a few round trips for the batch. It
// stops at the first invalid post (bad id, unknown author) and returns how
// many were stored before it.
func (s *Service) PutPosts(ctx context.Context, ps []*Post) (int, error) {
	var stop error
	for i, p := range ps {
		if p.ID == 0 || p.Author == 0 {
			ps, stop = ps[:i], errorf(CodeBadInput, "post id and author must be positive numbers")
			break
		}
	}
	authors := make([]ID, len(ps))
	for i, p := range ps {
		authors[i] = p.Author
	}
	if n, err := s.existing(ctx, authors); err != nil {
		return 0, err
	} else if n < len(ps) {
		ps, stop = ps[:n], errorf(CodeNotFound, "no user with id %d", authors[n])
	}
	// Posts are stored before any index names them, so a reader never finds
	// an entry without its post.
	cmds := make([]rueidis.Completed, len(ps))
	for i, p := range ps {
		cmds[i] = s.c.B().Hset().Key(s.k.post(p.ID)).FieldValue().
			FieldValue("a", FormatID(p.Author)).FieldValue("t", scoreArg(p.CreatedAt.UnixMilli())).FieldValue("x", p.Text).Build()
	}
	if err := firstErr(s.doMulti(ctx, cmds...)); err != nil {
		return 0, err
	}
	cmds = cmds[:0]
	for _, p := range ps {
		it := Item{TS: p.CreatedAt.UnixMilli(), ID: p.ID}
		cmds = append(cmds, s.c.B().Zadd().Key(s.k.outbox(p.Author)).ScoreMember().ScoreMember(float64(it.TS), member(it.ID)).Build())
		cmds = s.appendPush(cmds, s.postsTL(), p.Author, it, true)
	}
	if err := firstErr(s.doMulti(ctx, cmds...)); err != nil {
		return 0, err
	}
	// Once the events are in the stream the fan-out is durable.
	cmds = cmds[:0]
	for _, p := range ps {
		cmds = append(cmds, s.emitCmd(event{Type: evPublish, User: p.Author, Item: Item{TS: p.CreatedAt.UnixMilli(), ID: p.ID}}))
	}
	if err := firstErr(s.doMulti(ctx, cmds...)); err != nil {
		return 0, err
	}
	return len(ps), stop
}

// Delete tombstones viewer's post, removes it from the author's timelines
// and queues the removal fan-out. Reads skip tombstones, so the post is gone
// from every feed at once.
func (s *Service) Delete(ctx context.Context, viewer, postID ID) error {
	ps, err := s.Posts(ctx, []ID{postID})
	if err != nil {
		return err
	}
	p := ps[0]
	if p == nil || p.Deleted {
		return errorf(CodeNotFound, "no post with id %d", postID)
	}
	if p.Author != viewer {
		return errorf(CodeForbidden, "only the author may delete a post")
	}
	it := Item{TS: p.CreatedAt.UnixMilli(), ID: p.ID}
	if err := s.do(ctx, s.c.B().Hset().Key(s.k.post(p.ID)).FieldValue().FieldValue("d", "1").Build()).Error(); err != nil {
		return err
	}
	rs := s.doMulti(ctx,
		s.c.B().Zrem().Key(s.k.outbox(p.Author)).Member(member(p.ID)).Build(),
		s.inboxRemoveCmd(s.postsTL(), p.Author, p.ID))
	if err := firstErr(rs); err != nil {
		return err
	}
	return s.emit(ctx, event{Type: evDelete, User: p.Author, Item: it})
}

// Posts returns posts by id in order, nil where none exists; tombstones are
// returned with Deleted set. One pipelined round trip.
// Bulk readers that must not fill the client-side cache (the importer)
// use it; feeds use CachedPosts.
func (s *Service) Posts(ctx context.Context, ids []ID) ([]*Post, error) {
	cmds := make([]rueidis.Completed, len(ids))
	for i, id := range ids {
		cmds[i] = s.c.B().Hgetall().Key(s.k.post(id)).Build()
	}
	return parsePosts(ids, s.doMulti(ctx, cmds...))
}

// parsePosts reads one post hash per id.
func parsePosts(ids []ID, rs []rueidis.RedisResult) ([]*Post, error) {
	out := make([]*Post, len(ids))
	for i, r := range rs {
		p, err := parsePost(ids[i], r)
		if err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

func parsePost(id ID, r rueidis.RedisResult) (*Post, error) {
	m, err := r.AsStrMap()
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	author, _ := ParseID(m["a"])
	ts, _ := parseInt(m["t"])
	return &Post{ID: id, Author: author, Text: m["x"], CreatedAt: time.UnixMilli(ts).UTC(), Deleted: m["d"] == "1"}, nil
}
