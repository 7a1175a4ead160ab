package core

import (
	"slices"
	"strings"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore/content"
	"github.com/feedd/feedd/feedcore/store"
)

// Records: the kinds of record feedd keeps (what an export writes and an
// import reads), and what a rebuild counts.

// RelationKind is what one user set against another: a block, a mute or a
// hide of the user's own posts from the other.
type RelationKind string

// The kinds of relation.
const (
	RelationBlock RelationKind = "block"
	RelationMute  RelationKind = "mute"
	RelationHide  RelationKind = "hide"
)

// Relation is one user's relation to another: User blocks, mutes or hides
// its posts from Target, since CreatedAt; a mute ends at Until (zero: no
// end).
type Relation struct {
	Kind         RelationKind
	User, Target store.ID
	CreatedAt    time.Time
	Until        time.Time
}

// RelationForever is the "until" score of a relation with no end: the
// largest integer a Lua number (a double) holds exactly, never inf, which
// tonumber would not round-trip.
const RelationForever int64 = 1<<53 - 1

// ExportChunk is how many members of one set Export reads per call, so a
// post with a million likers is read in pieces.
const ExportChunk = 1000

// ExportSink receives the records Export reads. Every callback is
// required. A callback's error stops the export and is returned.
type ExportSink struct {
	User func(User) error
	// Follow: a follow, and when it was made.
	Follow func(Edge, time.Time) error
	// Relation: a block, mute (with its end) or hide; ended mutes are not
	// exported.
	Relation func(Relation) error
	Post     func(*content.Post) error
	// Repost: a repost's record (its Author reposted RepostOf at
	// CreatedAt, under its ID), after every post.
	Repost func(*content.Post) error
	Live   func(*LiveSession) error
	// Like: user likes post.
	Like func(post, user store.ID) error
	// Favorite: a user's favorite of a post (deleted posts' left out).
	Favorite func(Favorite) error
	// Counts: a post's counters as stored.
	Counts func(post store.ID, c PostCounts) error
	// Deleted: a deleted account (its marker), first of all; nil skips them.
	Deleted func(DeletedAccount) error
	// KeywordFilter: a keyword filter in force (expired ones are not
	// exported); nil skips them.
	KeywordFilter func(KeywordFilter) error
	// Suspended: a suspended account, after the deleted ones (before its
	// posts and sessions, which an import then marks as it stores them);
	// Takedown: a post taken down (a tombstone with TakenDown set), in
	// the posts pass; Report and Audit: the reports and the audit trail,
	// oldest first, last of all. Nil skips them.
	Suspended func(Suspension) error
	Takedown  func(*content.Post) error
	Report    func(Report) error
	Audit     func(AuditEntry) error
	// Batch is how many keys are read per round trip; ExportBatch when 0.
	Batch int

	// Recent is set by Export (a caller's value is replaced): posts since
	// then are written again before their likes.
	Recent time.Time
}

// RebuildStats counts what a Rebuild run (not the runs it resumed) did.
type RebuildStats struct {
	Resumed      bool  // it continued from a checkpoint
	Follows      int64 // followers entries written
	Posts        int64 // outbox entries written
	Sessions     int64 // live sessions filed
	Authors      int64 // users whose author-side structures were checked
	BigV         int64 // big-V authors whose active sets were built
	Readers      int64 // inboxes rebuilt
	InboxEntries int64 // entries copied into inboxes (posts and replays)
	Removed      int64 // stale entries removed
	Relations    int64 // pairs of users whose relations were settled
	Replies      int64 // live replies filed with their parents
	Reposts      int64 // live reposts filed with their originals
	// KeywordFilters is users whose keyword filters were rewritten
	// (expired ones pruned, ids derived again, a version token set).
	KeywordFilters int64
	Suspensions    int64 // suspended accounts whose posts' and sessions' marks were settled
	Reports        int64 // reports indexed
	FollowTimes    int64 // follows whose times were written on both sides
	Favorites      int64 // favoriters entries written
	Counters       int64 // likes and favorites counters recomputed to another value
}

// PostCounts are a post's engagement counters.
type PostCounts struct{ Likes, Comments, Reposts, Favorites int }

// Favorite is one user's favorite of one post, since At (import).
type Favorite struct {
	User, Post store.ID
	At         time.Time
}

// DeletedAccount is a deleted account, as export writes and import reads it.
type DeletedAccount struct {
	User      store.ID
	Handle    string
	DeletedAt time.Time
}

// Suspension is a suspended account, as export writes and import reads it.
type Suspension struct {
	User     store.ID
	At       time.Time
	Reason   string
	Operator string
}

// Report is a stored report.
type Report struct {
	ID       string    // the report id: its entry in the reports stream
	At       time.Time // when it was filed (the id's time)
	Reporter store.ID
	Subject  Target
	Reason   string
	Comment  string
	Resolved time.Time // when an operator resolved it; zero while open
}

// Since is where a listing of reports or of the audit trail starts: at a
// time (entries filed then or later), after an entry id, or (zero) at the
// beginning.
type Since struct {
	Time  time.Time
	After string
}

// Start is the XRANGE start of a listing from sc.
func (sc Since) Start() string {
	switch {
	case sc.After != "":
		return "(" + sc.After
	case !sc.Time.IsZero():
		return Itoa64(max(sc.Time.UnixMilli(), 0))
	}
	return "-"
}

// AuditEntry is one moderation action of the audit stream.
type AuditEntry struct {
	ID       string    // the entry's id in the audit stream
	At       time.Time // when the action was taken
	Operator string
	Action   string // ActionTakedown, ActionSuspend, ActionUnsuspend or ActionResolve
	Subject  string // post:ID, user:ID or report:ID
	Reason   string
}

// TargetKind is what a report (or a moderation action) is about.
type TargetKind string

const (
	TargetPost TargetKind = "post"
	TargetUser TargetKind = "user"
	TargetLive TargetKind = "live"
)

// Target is a report's subject: "post:32850", "user:200", "live:9".
type Target struct {
	Kind TargetKind
	ID   store.ID
}

func (t Target) String() string { return string(t.Kind) + ":" + store.FormatID(t.ID) }

// ParseTarget reads a Target as String writes it.
func ParseTarget(s string) (Target, error) {
	kind, id, ok := strings.Cut(s, ":")
	t := Target{Kind: TargetKind(kind)}
	var err error
	if t.ID, err = store.ParseID(id); !ok || err != nil || t.ID == 0 || !slices.Contains([]TargetKind{TargetPost, TargetUser, TargetLive}, t.Kind) {
		return Target{}, apierr.Errorf(apierr.BadInput, "subject %q is not post:ID, user:ID or live:ID", s)
	}
	return t, nil
}

// KeywordFilter is one of a user's keyword filters.
type KeywordFilter struct {
	ID        store.ID
	User      store.ID // whose filter it is
	Keyword   string
	WholeWord bool
	ExpiresAt *time.Time // nil: never
	CreatedAt time.Time
}
