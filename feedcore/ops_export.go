package feedcore

import (
	"context"
	"time"

	"github.com/redis/rueidis"
)

// ExportBatch is how many keys Export reads in one pipelined round trip
// when ExportSink.Batch is 0.
const ExportBatch = 256

// exportChunk is how many members of one set Export reads per call, so a
// post with a million likers is read in pieces.
const exportChunk = 1000

// ExportSink receives the records Export reads. Every callback is
// required. A callback's error stops the export and is returned.
type ExportSink struct {
	User   func(User) error
	Follow func(Edge) error
	// Relation: a block, mute (with its end) or hide; ended mutes are not
	// exported.
	Relation func(Relation) error
	Post     func(*Post) error
	Live     func(*LiveSession) error
	// Like: user likes post.
	Like func(post, user ID) error
	// Counts: a post's counters as stored.
	Counts func(post ID, c PostCounts) error
	// Deleted: a deleted account (its marker), first of all; nil skips them.
	Deleted func(DeletedAccount) error
	// Batch is how many keys are read per round trip; ExportBatch when 0.
	Batch int

	recent time.Time // posts since then are written again before their likes
}

// Export reads every record of the store, kind after kind, in an order an
// import can apply: users, follow edges, relations (blocks, mutes, hides:
// after the follows, which they may remove, and before the posts, whose
// fan-out they steer), posts, live sessions, likes, counters. Derived structures (inboxes, outboxes, active and big-V sets,
// replay timelines, snapshots, streams) are not records: an import
// rebuilds them. A deleted post is invisible everywhere, so neither it nor
// its likes and counters are exported.
//
// A post published while Export runs may be missed by the posts pass and
// met by the likes or counters pass: every post published since a little
// before the posts pass began (exportRecent) is written again before its
// likes and counters, so every like and counts line follows its post
// (import takes the repeat as the same post). Users are created by imports
// only, so a follow, post or session never names a user created since the
// users pass, unless an import runs during the export.
//
// It walks the keys with SCAN (every master of a cluster) and reads them
// in pipelined batches, so memory stays bounded whatever the store's size.
// It is not a point-in-time snapshot: a record written while it runs may
// or may not be in it, and a key SCAN meets twice is exported twice (an
// import applies it twice, harmlessly). Each record is read whole, in one
// command, so each is consistent.
func (s *Service) Export(ctx context.Context, sink ExportSink) (err error) {
	defer wrap(&err, "export")
	setDefault(&sink.Batch, ExportBatch)
	if sink.Deleted != nil {
		// First: an import records them (holding their handles) before
		// anything else.
		if err := s.DeletedAccounts(ctx, func(ds []DeletedAccount) error {
			for _, d := range ds {
				if err := sink.Deleted(d); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	phases := []struct {
		keyOf func(ID) string // the records' keys
		posts bool            // the posts pass: later passes write again what it may have missed
		read  func(context.Context, []ID, ExportSink) error
	}{
		{keyOf: s.k.user, read: s.exportUsers},
		{keyOf: s.k.following, read: s.exportFollows},
		{keyOf: s.k.blocks, read: s.exportRelations(RelationBlock)},
		{keyOf: s.k.mutes, read: s.exportRelations(RelationMute)},
		{keyOf: s.k.hides, read: s.exportRelations(RelationHide)},
		{keyOf: s.k.post, posts: true, read: s.exportPosts},
		{keyOf: s.k.live, read: s.exportLives},
		{keyOf: s.k.likers, read: s.exportLikes},
		{keyOf: s.k.postCounts, read: s.exportCounts},
	}
	for _, ph := range phases {
		if ph.posts {
			sink.recent = s.o.Now().Add(-exportRecent)
		}
		err := s.scanIDs(ctx, ph.keyOf, func(ids []ID) error {
			for len(ids) > 0 {
				n := min(len(ids), sink.Batch)
				if err := ph.read(ctx, ids[:n], sink); err != nil {
					return err
				}
				ids = ids[n:]
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) exportUsers(ctx context.Context, ids []ID, sink ExportSink) error {
	hgetall := func(id ID) rueidis.Completed { return s.c.B().Hgetall().Key(s.k.user(id)).Build() }
	for i, r := range s.doMulti(ctx, cmdsFor(ids, hgetall)...) {
		m, err := r.AsStrMap()
		if err != nil {
			return err
		}
		if m["h"] == "" {
			continue // deleted meanwhile, or not a profile
		}
		if err := sink.User(User{ID: ids[i], Handle: m["h"], DisplayName: m["n"], AvatarURL: m["a"]}); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) exportFollows(ctx context.Context, ids []ID, sink ExportSink) error {
	return s.exportMembers(ctx, ids, s.k.following, func(follower, followee ID) error {
		return sink.Follow(Edge{Follower: follower, Followee: followee})
	})
}

// exportMembers reads the sorted set key(id) of each id by index, in
// member (id) order, exportChunk members a call: the first chunk of every
// set in one round trip, the rest of a longer set after.
func (s *Service) exportMembers(ctx context.Context, ids []ID, key func(ID) string, fn func(owner, member ID) error) error {
	rangeCmd := func(id ID, from int64) rueidis.Completed {
		return s.c.B().Zrange().Key(key(id)).Min(itoa64(from)).Max(itoa64(from + exportChunk - 1)).Build()
	}
	firsts := cmdsFor(ids, func(id ID) rueidis.Completed { return rangeCmd(id, 0) })
	for i, r := range s.doMulti(ctx, firsts...) {
		for from := int64(0); ; {
			ms, err := r.AsStrSlice()
			if err != nil {
				return err
			}
			for _, m := range ms {
				if v, err := memberID(m); err == nil {
					if err := fn(ids[i], v); err != nil {
						return err
					}
				}
			}
			if len(ms) < exportChunk {
				break
			}
			from += exportChunk
			r = s.do(ctx, rangeCmd(ids[i], from))
		}
	}
	return nil
}

// exportable reports whether p is a post to export: it exists, is not
// deleted, and has an author (not a stray hash).
func exportable(p *Post) bool { return p != nil && !p.Deleted && p.Author != 0 }

func (s *Service) exportPosts(ctx context.Context, ids []ID, sink ExportSink) error {
	ps, err := s.Posts(ctx, ids)
	if err != nil {
		return err
	}
	for _, p := range ps {
		if !exportable(p) {
			continue
		}
		if err := sink.Post(p); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) exportLives(ctx context.Context, ids []ID, sink ExportSink) error {
	ls, err := s.LiveSessions(ctx, ids)
	if err != nil {
		return err
	}
	for _, l := range ls {
		if l == nil || l.Anchor == 0 || (l.ScheduledStartAt == nil && l.StartedAt == nil) {
			continue // gone meanwhile, or not a session
		}
		if err := sink.Live(l); err != nil {
			return err
		}
	}
	return nil
}

// exportRecent is how far back from the start of the posts pass a post's
// time must reach for Export to write it again before its likes and
// counters: the post may have been published after the pass went by
// (replicas' clocks may disagree by this much).
const exportRecent = 5 * time.Minute

// livePosts reads the posts ids, nil where missing or deleted, and writes
// again those published since the posts pass began (recent), so that no
// like or counts line comes without its post.
func (s *Service) livePosts(ctx context.Context, ids []ID, sink ExportSink) ([]*Post, error) {
	ps, err := s.Posts(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i, p := range ps {
		if !exportable(p) {
			ps[i] = nil
			continue
		}
		if !p.CreatedAt.Before(sink.recent) {
			if err := sink.Post(p); err != nil {
				return nil, err
			}
		}
	}
	return ps, nil
}

func (s *Service) exportLikes(ctx context.Context, ids []ID, sink ExportSink) error {
	ps, err := s.livePosts(ctx, ids, sink)
	if err != nil {
		return err
	}
	sscan := func(id ID, cursor uint64) rueidis.Completed {
		return s.c.B().Sscan().Key(s.k.likers(id)).Cursor(cursor).Count(exportChunk).Build()
	}
	var cmds []rueidis.Completed
	var posts []ID
	for i, id := range ids {
		if ps[i] != nil {
			cmds = append(cmds, sscan(id, 0))
			posts = append(posts, id)
		}
	}
	for i, r := range s.doMulti(ctx, cmds...) {
		for {
			e, err := r.AsScanEntry()
			if err != nil {
				return err
			}
			for _, m := range e.Elements {
				if v, err := memberID(m); err == nil {
					if err := sink.Like(posts[i], v); err != nil {
						return err
					}
				}
			}
			if e.Cursor == 0 {
				break
			}
			r = s.do(ctx, sscan(posts[i], e.Cursor))
		}
	}
	return nil
}

func (s *Service) exportCounts(ctx context.Context, ids []ID, sink ExportSink) error {
	ps, err := s.livePosts(ctx, ids, sink)
	if err != nil {
		return err
	}
	var cmds []rueidis.Completed
	var posts []ID
	for i, id := range ids {
		if ps[i] != nil {
			cmds = append(cmds, s.postCountsCmd(id))
			posts = append(posts, id)
		}
	}
	cs, err := parseCounts(s.doMulti(ctx, cmds...))
	if err != nil {
		return err
	}
	for i, c := range cs {
		if err := sink.Counts(posts[i], c); err != nil {
			return err
		}
	}
	return nil
}
