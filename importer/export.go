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
	Users, Follows, Posts, Reposts, Lives, Likes, Counts, Deleted int
	// Suspended, Takedowns, Reports and Audit are moderation lines.
	Suspended, Takedowns, Reports, Audit int
	// Favorites is favorite lines.
	Favorites int
	// Relations is block, mute and hide lines.
	Relations int
	// KeywordFilters is keywordFilter lines.
	KeywordFilters int
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
	Type      string `json:"type"`
	Follower  string `json:"follower"`
	Followee  string `json:"followee"`
	CreatedAt string `json:"createdAt,omitempty"`
}

type favoriteLine struct {
	Type      string `json:"type"`
	User      string `json:"user"`
	Post      string `json:"post"`
	CreatedAt string `json:"createdAt"`
}

type relationLine struct {
	Type      string `json:"type"`
	User      string `json:"user"`
	Target    string `json:"target"`
	CreatedAt string `json:"createdAt"`
	Until     string `json:"until,omitempty"`
}

type repostLine struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	User      string `json:"user"`
	Post      string `json:"post"`
	CreatedAt string `json:"createdAt"`
}

type keywordFilterLine struct {
	Type      string `json:"type"`
	User      string `json:"user"`
	Keyword   string `json:"keyword"`
	WholeWord bool   `json:"wholeWord"`
	ExpiresAt string `json:"expiresAt,omitempty"`
	CreatedAt string `json:"createdAt"`
}

type postLine struct {
	Type           string      `json:"type"`
	ID             string      `json:"id"`
	Author         string      `json:"author"`
	Text           string      `json:"text,omitempty"` // none for a post of media only
	CreatedAt      string      `json:"createdAt"`
	Media          []mediaLine `json:"media,omitempty"`
	ContentWarning string      `json:"contentWarning,omitempty"`
	ReplyTo        string      `json:"replyTo,omitempty"`
	ReplyToAuthor  string      `json:"replyToAuthor,omitempty"`
}

// mediaLine is one item of a post line's media (see lines_media.go).
type mediaLine struct {
	URL          string `json:"url"`
	Kind         string `json:"kind"`
	Width        int    `json:"width,omitempty"`
	Height       int    `json:"height,omitempty"`
	AltText      string `json:"altText,omitempty"`
	ThumbnailURL string `json:"thumbnailUrl,omitempty"`
	DurationMs   int    `json:"durationMs,omitempty"`
	Sensitive    bool   `json:"sensitive,omitempty"`
}

func mediaLines(ms []feedcore.Media) []mediaLine {
	out := make([]mediaLine, len(ms))
	for i, m := range ms {
		out[i] = mediaLine{m.URL, string(m.Kind), m.Width, m.Height, m.AltText, m.ThumbnailURL, m.DurationMs, m.Sensitive}
	}
	return out
}

type liveLine struct {
	Type             string `json:"type"`
	ID               string `json:"id"`
	Anchor           string `json:"anchor"`
	Title            string `json:"title"`
	ScheduledStartAt string `json:"scheduledStartAt,omitempty"`
	StartedAt        string `json:"startedAt,omitempty"`
	EndedAt          string `json:"endedAt,omitempty"`
	CoverURL         string `json:"coverUrl,omitempty"`
}

type deletedLine struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Handle    string `json:"handle"`
	DeletedAt string `json:"deletedAt"`
}

type suspendedLine struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Reason    string `json:"reason,omitempty"`
	Operator  string `json:"operator,omitempty"`
	CreatedAt string `json:"createdAt"`
}

type takedownLine struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	Author    string `json:"author"`
	Text      string `json:"text,omitempty"`
	CreatedAt string `json:"createdAt"`
	DeletedAt string `json:"deletedAt"`
	Reason    string `json:"reason,omitempty"`
}

type reportLine struct {
	Type       string `json:"type"`
	ID         string `json:"id"`
	User       string `json:"user"`
	Subject    string `json:"subject"`
	Reason     string `json:"reason"`
	Comment    string `json:"comment,omitempty"`
	ResolvedAt string `json:"resolvedAt,omitempty"`
}

type auditLine struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CreatedAt string `json:"createdAt"`
	Operator  string `json:"operator"`
	Action    string `json:"action"`
	Subject   string `json:"subject"`
	Reason    string `json:"reason,omitempty"`
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
// import format, in an order Load applies: deleted and suspended
// accounts, users, follows, blocks, mutes and hides, keyword filters,
// posts (replies among them, and takedowns), reposts, live sessions,
// likes, favorites, counts (after the likes and favorites, so that an
// import ends with exactly the counters exported), then reports and the
// audit trail. See feedcore.Service.Export for
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
		Follow: func(e feedcore.Edge, t time.Time) error {
			created := "" // a follow made before times were kept: none
			if !t.IsZero() {
				created = at(&t)
			}
			return emit(&st.Follows, followLine{"follow", id(e.Follower), id(e.Followee), created})
		},
		Relation: func(r feedcore.Relation) error {
			until := ""
			if !r.Until.IsZero() {
				until = at(&r.Until)
			}
			return emit(&st.Relations, relationLine{string(r.Kind), id(r.User), id(r.Target), at(&r.CreatedAt), until})
		},
		KeywordFilter: func(f feedcore.KeywordFilter) error {
			return emit(&st.KeywordFilters, keywordFilterLine{"keywordFilter", id(f.User), f.Keyword, f.WholeWord, at(f.ExpiresAt), at(&f.CreatedAt)})
		},
		Post: func(p *feedcore.Post) error {
			line := postLine{Type: "post", ID: id(p.ID), Author: id(p.Author), Text: p.Text, CreatedAt: at(&p.CreatedAt),
				Media: mediaLines(p.Media), ContentWarning: p.ContentWarning}
			if p.ReplyTo != 0 {
				line.ReplyTo, line.ReplyToAuthor = id(p.ReplyTo), id(p.ReplyToAuthor)
			}
			return emit(&st.Posts, line)
		},
		Repost: func(r *feedcore.Post) error {
			return emit(&st.Reposts, repostLine{"repost", id(r.ID), id(r.Author), id(r.RepostOf), at(&r.CreatedAt)})
		},
		Live: func(l *feedcore.LiveSession) error {
			return emit(&st.Lives, liveLine{"live", id(l.ID), id(l.Anchor), l.Title,
				at(l.ScheduledStartAt), at(l.StartedAt), at(l.EndedAt), l.CoverURL})
		},
		Like: func(post, user feedcore.ID) error {
			return emit(&st.Likes, likeLine{"like", id(user), id(post)})
		},
		Favorite: func(f feedcore.Favorite) error {
			return emit(&st.Favorites, favoriteLine{"favorite", id(f.User), id(f.Post), at(&f.At)})
		},
		Counts: func(post feedcore.ID, c feedcore.PostCounts) error {
			return emit(&st.Counts, countsLine{"counts", id(post), c.Likes, c.Comments, c.Reposts, c.Favorites})
		},
		Suspended: func(sp feedcore.Suspension) error {
			return emit(&st.Suspended, suspendedLine{"suspended", id(sp.User), sp.Reason, sp.Operator, at(&sp.At)})
		},
		Takedown: func(p *feedcore.Post) error {
			return emit(&st.Takedowns, takedownLine{"takedown", id(p.ID), id(p.Author), p.Text, at(&p.CreatedAt), at(&p.TakenDown), p.TakedownReason})
		},
		Report: func(r feedcore.Report) error {
			resolved := ""
			if !r.Resolved.IsZero() {
				resolved = at(&r.Resolved)
			}
			return emit(&st.Reports, reportLine{"report", r.ID, id(r.Reporter), r.Subject.String(), r.Reason, r.Comment, resolved})
		},
		Audit: func(e feedcore.AuditEntry) error {
			return emit(&st.Audit, auditLine{"audit", e.ID, at(&e.At), e.Operator, e.Action, e.Subject, e.Reason})
		},
	})
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return st, err
}
