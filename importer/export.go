package importer

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/feedd/feedd/feedcore"
)

// ExportStats counts what an export wrote.
type ExportStats struct {
	Users, Follows, Posts, Lives, Likes, Counts, Deleted int
	// Relations is block, mute and hide lines.
	Relations int
	// Lines is every line written.
	Lines int
}

// ExportOptions tunes Export.
type ExportOptions struct {
	// Batch is how many keys are read per round trip (feedcore.ExportBatch
	// when 0).
	Batch int
	// Progress, when set, is called every ProgressEvery lines with the
	// totals so far.
	Progress      func(ExportStats)
	ProgressEvery int
}

type userLine struct {
	Type        string `json:"type"`
	ID          string `json:"id"`
	Handle      string `json:"handle"`
	DisplayName string `json:"displayName,omitempty"`
	AvatarURL   string `json:"avatarUrl,omitempty"`
}

type followLine struct {
	Type     string `json:"type"`
	Follower string `json:"follower"`
	Followee string `json:"followee"`
}

type relationLine struct {
	Type      string `json:"type"`
	User      string `json:"user"`
	Target    string `json:"target"`
	CreatedAt string `json:"createdAt"`
	Until     string `json:"until,omitempty"`
}

type postLine struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Author    string `json:"author"`
	Text      string `json:"text"`
	CreatedAt string `json:"createdAt"`
}

type liveLine struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	Anchor           string `json:"anchor"`
	Title            string `json:"title"`
	ScheduledStartAt string `json:"scheduledStartAt,omitempty"`
	StartedAt        string `json:"startedAt,omitempty"`
	EndedAt          string `json:"endedAt,omitempty"`
}

type deletedLine struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Handle    string `json:"handle"`
	DeletedAt string `json:"deletedAt"`
}

type likeLine struct {
	Type string `json:"type"`
	User string `json:"user"`
	Post string `json:"post"`
}

type countsLine struct {
	Type      string `json:"type"`
	Post      string `json:"post"`
	Likes     int    `json:"likes"`
	Comments  int    `json:"comments"`
	Reposts   int    `json:"reposts"`
	Favorites int    `json:"favorites"`
}

// Export writes every record of svc's store to w as JSON Lines in the
// import format, in an order Load applies: users, follows, blocks, mutes
// and hides, posts, live sessions, likes, then counts (after the likes, so that an import ends
// with exactly the counters exported). See feedcore.Service.Export for
// what is read, and what a live store's export holds.
func Export(ctx context.Context, svc *feedcore.Service, w io.Writer, o ExportOptions) (ExportStats, error) {
	bw := bufio.NewWriterSize(w, 64<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var st ExportStats
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 10000
	}
	emit := func(n *int, v any) error {
		if err := enc.Encode(v); err != nil {
			return err
		}
		*n++
		st.Lines++
		if o.Progress != nil && st.Lines%o.ProgressEvery == 0 {
			o.Progress(st)
		}
		return nil
	}
	id := feedcore.FormatID
	at := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	err := svc.Export(ctx, feedcore.ExportSink{
		Batch: o.Batch,
		Deleted: func(d feedcore.DeletedAccount) error {
			return emit(&st.Deleted, deletedLine{"deleted", id(d.User), d.Handle, at(&d.DeletedAt)})
		},
		User: func(u feedcore.User) error {
			return emit(&st.Users, userLine{"user", id(u.ID), u.Handle, u.DisplayName, u.AvatarURL})
		},
		Follow: func(e feedcore.Edge) error {
			return emit(&st.Follows, followLine{"follow", id(e.Follower), id(e.Followee)})
		},
		Relation: func(r feedcore.Relation) error {
			until := ""
			if !r.Until.IsZero() {
				until = at(&r.Until)
			}
			return emit(&st.Relations, relationLine{string(r.Kind), id(r.User), id(r.Target), at(&r.CreatedAt), until})
		},
		Post: func(p *feedcore.Post) error {
			return emit(&st.Posts, postLine{"post", id(p.ID), id(p.Author), p.Text, at(&p.CreatedAt)})
		},
		Live: func(l *feedcore.LiveSession) error {
			return emit(&st.Lives, liveLine{"live", id(l.ID), id(l.Anchor), l.Title,
				at(l.ScheduledStartAt), at(l.StartedAt), at(l.EndedAt)})
		},
		Like: func(post, user feedcore.ID) error {
			return emit(&st.Likes, likeLine{"like", id(user), id(post)})
		},
		Counts: func(post feedcore.ID, c feedcore.PostCounts) error {
			return emit(&st.Counts, countsLine{"counts", id(post), c.Likes, c.Comments, c.Reposts, c.Favorites})
		},
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return st, err
}
