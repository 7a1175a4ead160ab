package importer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/feedcore"
	"github.com/feedd/feedd/feedcore/feedtest"
	"github.com/feedd/feedd/redisstore/storetest"
)

// newService returns a service on a fresh store, with fan-out workers
// running until the test ends.
func newService(tb testing.TB) *feedcore.Service {
	tb.Helper()
	st := storetest.New(tb)
	svc, err := feedcore.New(context.Background(), st.Client, feedcore.Options{
		Prefix: st.Prefix, CursorKey: []byte("importer-test-cursor-key-0123456789")})
	if err != nil {
		tb.Fatal(err)
	}
	feedtest.Workers(tb, svc)
	return svc
}

func drain(tb testing.TB, svc *feedcore.Service) { tb.Helper(); feedtest.Drain(tb, svc) }

func counts(tb testing.TB, svc *feedcore.Service, ids ...feedcore.ID) []feedcore.GraphCounts {
	tb.Helper()
	cs, err := svc.Counts(context.Background(), ids)
	if err != nil {
		tb.Fatal(err)
	}
	return cs
}

// smallFile has users, follows before and after posts, ties on createdAt
// (also after truncation to milliseconds and across time zones), ids as
// strings and as numbers, blank lines, and live and counts lines.
const smallFile = `{"type":"user","id":"1","handle":"ann","displayName":"Ann","avatarUrl":"https://img.example/ann.png"}
{"type":"user","id":"2","handle":"bob"}
{"type":"user","id":3,"handle":"cid","displayName":"Cid \u00e9\u4e16"}
{"type":"user","id":"4","handle":"dee","avatarUrl":null}

{"type":"user","handle":"eve","id":"5"}
{"type":"post","id":"101","author":"2","text":"first","createdAt":"2023-07-11T15:00:00Z"}
{"type":"post","id":"102","author":"3","text":"tie with 101","createdAt":"2023-07-11T15:00:00Z"}
{"type":"post","id":"103","author":"2","text":"  half past  ","createdAt":"2023-07-11T15:00:00.5Z"}
{"type":"follow","follower":"1","followee":"2"}
{"type":"follow","follower":"1","followee":"3"}
{"type":"follow","follower":4,"followee":2}
{"type":"follow","follower":"2","followee":"3"}
{"type":"post","id":"104","author":"3","text":"tie in another zone","createdAt":"2023-07-11T17:00:00+02:00"}
{"type":"post","id":"105","author":"1","text":"micro","createdAt":"2023-07-11T16:00:00.123456Z"}
{"type":"post","id":"106","author":"4","text":"old","createdAt":"2023-07-11T14:00:00Z"}
{"type":"post","id":107,"author":"2","text":"milli tie with 105","createdAt":"2023-07-11T16:00:00.123Z"}
   
{"type":"follow","follower":"4","followee":"3"}
{"type":"live","id":"9","anchor":"2","title":"Unboxing","scheduledStartAt":"2023-07-12T10:00:00Z"}
{"type":"counts","post":"101","likes":3,"comments":1,"reposts":0,"favorites":2}
`

func TestLoadSmallFile(t *testing.T) {
	want := map[feedcore.ID][]feedcore.ID{
		1: {107, 105, 103, 104, 102, 101},
		2: {107, 103, 104, 102, 101},
		3: {104, 102},
		4: {107, 103, 104, 102, 101, 106},
		5: {},
	}
	type gc = feedcore.GraphCounts
	wantCounts := []gc{{Following: 2}, {Followers: 2, Following: 1}, {Followers: 3}, {Following: 2}, {}}
	for _, size := range []int{0, 1, 2, 3} {
		t.Run(fmt.Sprintf("batch=%d", size), func(t *testing.T) {
			svc := newService(t)
			ctx := context.Background()
			st, err := LoadWith(ctx, svc, strings.NewReader(smallFile), Options{BatchSize: size})
			if err != nil {
				t.Fatal(err)
			}
			wantStats := Stats{Users: 5, Follows: 5, Posts: 7, Skipped: 2, Lines: 21}
			if st != wantStats {
				t.Errorf("stats %+v, want %+v", st, wantStats)
			}
			drain(t, svc)
			for viewer, ids := range want {
				for _, n := range []int{1, 2, 100} {
					if got := feedtest.Feed(t, svc, viewer, n); !reflect.DeepEqual(got, ids) {
						t.Errorf("viewer %d, page size %d: feed %v, want %v", viewer, n, got, ids)
					}
				}
			}
			if got := counts(t, svc, 1, 2, 3, 4, 5); !reflect.DeepEqual(got, wantCounts) {
				t.Errorf("counts %v, want %v", got, wantCounts)
			}
			ann, err := svc.UserByHandle(ctx, "ann")
			if err != nil || ann == nil || *ann != (feedcore.User{ID: 1, Handle: "ann", DisplayName: "Ann", AvatarURL: "https://img.example/ann.png"}) {
				t.Errorf("ann = %+v, %v", ann, err)
			}
			cid, err := svc.User(ctx, 3)
			if err != nil || cid.DisplayName != "Cid é世" {
				t.Errorf("cid = %+v, %v", cid, err)
			}
			ps, err := svc.Posts(ctx, []feedcore.ID{103, 104, 105})
			if err != nil {
				t.Fatal(err)
			}
			if ps[0].Text != "half past" || !ps[0].CreatedAt.Equal(time.Date(2023, 7, 11, 15, 0, 0, 5e8, time.UTC)) {
				t.Errorf("post 103 = %+v", ps[0])
			}
			if !ps[1].CreatedAt.Equal(time.Date(2023, 7, 11, 15, 0, 0, 0, time.UTC)) {
				t.Errorf("post 104 = %+v", ps[1])
			}
			if !ps[2].CreatedAt.Equal(time.Date(2023, 7, 11, 16, 0, 0, 123e6, time.UTC)) || ps[2].Author != 1 {
				t.Errorf("post 105 = %+v", ps[2])
			}
		})
	}
}

// Loading a file again changes nothing: users are replaced by themselves,
// follows and identical posts are idempotent.
func TestLoadTwice(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	for i := range 2 {
		if _, err := Load(ctx, svc, strings.NewReader(smallFile)); err != nil {
			t.Fatalf("load %d: %v", i, err)
		}
	}
	drain(t, svc)
	if got, want := feedtest.Feed(t, svc, 1, 100), []feedcore.ID{107, 105, 103, 104, 102, 101}; !reflect.DeepEqual(got, want) {
		t.Errorf("feed %v, want %v", got, want)
	}
	if got := counts(t, svc, 3); got[0] != (feedcore.GraphCounts{Followers: 3}) {
		t.Errorf("counts of 3: %+v", got[0])
	}
}

func TestHooks(t *testing.T) {
	svc := newService(t)
	const file = `{"type":"user","id":"2","handle":"bob"}
{"type":"live","id":"9","anchor":"2","title":"Preview","scheduledStartAt":"2023-07-12T10:00:00Z"}
{"type":"live","id":"10","anchor":"2","title":"On air","scheduledStartAt":"2023-07-12T10:00:00Z","startedAt":"2023-07-12T10:01:02.345678+02:00"}
{"type":"live","id":11,"anchor":"2","title":" Replay ","startedAt":"2023-07-12T10:00:00Z","endedAt":"2023-07-12T11:00:00Z"}
{"type":"live","id":"12","anchor":"2","title":"Called off","scheduledStartAt":"2023-07-12T10:00:00Z","endedAt":"2023-07-11T09:00:00Z"}
{"type":"counts","post":"101","likes":3,"comments":1,"reposts":0,"favorites":2}
{"type":"counts","post":"102","likes":-0}
{"type":"live","id":"13","anchor":"2","title":"refused","startedAt":"2023-07-12T10:00:00Z"}
{"type":"counts","post":"103","likes":1}
`
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			panic(err)
		}
		return t.UTC()
	}
	var lives []LiveLine
	var cs []CountsLine
	refuse := errors.New("no such anchor")
	st, err := LoadWith(context.Background(), svc, strings.NewReader(file), Options{
		Live: func(_ context.Context, l LiveLine) error {
			if l.ID == 13 {
				return refuse
			}
			lives = append(lives, l)
			return nil
		},
		Counts: func(_ context.Context, c CountsLine) error { cs = append(cs, c); return nil },
	})
	var le *LineError
	if !errors.As(err, &le) || le.Line != 8 || !errors.Is(err, refuse) || err.Error() != "line 8: live: no such anchor" {
		t.Fatalf("err = %v, want line 8's hook error", err)
	}
	if want := (Stats{Users: 1, Lives: 4, Counts: 2, Lines: 7}); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	wantLives := []LiveLine{
		{ID: 9, Anchor: 2, Title: "Preview", ScheduledStartAt: at("2023-07-12T10:00:00Z"), State: LivePreview},
		{ID: 10, Anchor: 2, Title: "On air", ScheduledStartAt: at("2023-07-12T10:00:00Z"), StartedAt: at("2023-07-12T08:01:02.345Z"), State: LiveLive},
		{ID: 11, Anchor: 2, Title: "Replay", StartedAt: at("2023-07-12T10:00:00Z"), EndedAt: at("2023-07-12T11:00:00Z"), State: LiveReplay},
		{ID: 12, Anchor: 2, Title: "Called off", ScheduledStartAt: at("2023-07-12T10:00:00Z"), EndedAt: at("2023-07-11T09:00:00Z"), State: LiveCancelled},
	}
	if !reflect.DeepEqual(lives, wantLives) {
		t.Errorf("lives\n%+v\nwant\n%+v", lives, wantLives)
	}
	wantCounts := []CountsLine{{Post: 101, Likes: 3, Comments: 1, Favorites: 2}, {Post: 102}}
	if !reflect.DeepEqual(cs, wantCounts) {
		t.Errorf("counts %+v, want %+v", cs, wantCounts)
	}
}

// Each case's bad line comes after three good lines and is followed by a
// line of its own type (same batch) and then by one of every type; the
// good lines must be applied and none after them.
func TestBadLines(t *testing.T) {
	base := []string{
		`{"type":"user","id":"1","handle":"ann"}`,
		`{"type":"user","id":"2","handle":"bob"}`,
		`{"type":"follow","follower":"1","followee":"2"}`,
	}
	next := map[string]string{
		"user":     `{"type":"user","id":"3","handle":"late"}`,
		"follow":   `{"type":"follow","follower":"2","followee":"1"}`,
		"post":     `{"type":"post","id":"50","author":"1","text":"late","createdAt":"2023-07-11T15:32:02Z"}`,
		"counts":   `{"type":"counts","post":"50","likes":1}`,
		"live":     `{"type":"live","id":"7","anchor":"1","title":"t","startedAt":"2023-07-11T15:32:02Z"}`,
		"favorite": `{"type":"favorite","user":"2","post":"50"}`,
		"repost":   `{"type":"repost","id":"62","user":"2","post":"52","createdAt":"2023-07-11T15:32:02Z"}`,
	}
	tail := []string{
		`{"type":"user","id":"4","handle":"later"}`,
		`{"type":"follow","follower":"2","followee":"1"}`,
		`{"type":"post","id":"51","author":"2","text":"later","createdAt":"2023-07-11T15:32:02Z"}`,
	}
	long := `{"type":"user","id":"5","handle":"x","displayName":"` + strings.Repeat("a", MaxLineBytes) + `"}`
	cases := []struct {
		name   string
		before []string // default base
		bad    string
		kind   string // the bad line's type, to pick the line after it
		want   string // the whole error message
		code   apierr.Code
	}{
		{name: "bad JSON", bad: `{"type":"user","id":"5","handle":"dan"`, kind: "user",
			want: `line 4: invalid JSON at column 39: want ',' or '}' after a value`},
		{name: "not an object", bad: `["user"]`, kind: "user",
			want: `line 4: invalid JSON at column 1: a line must be one JSON object`},
		{name: "trailing text", bad: `{"type":"user","id":"5","handle":"dan"} x`, kind: "user",
			want: `line 4: invalid JSON at column 41: unexpected text after the object`},
		{name: "bad escape", bad: `{"type":"user","id":"5","handle":"d\qn"}`, kind: "user",
			want: `line 4: invalid JSON at column 36: bad escape in a string`},
		{name: "unknown type", bad: `{"type":"usr","id":"5","handle":"dan"}`, kind: "user",
			want: `line 4: unknown type "usr": want user, follow, post, live, counts, like, block, mute, hide, deleted, keywordFilter, suspended, takedown, report, audit, favorite or repost`},
		{name: "missing type", bad: `{"id":"5","handle":"dan"}`, kind: "user",
			want: `line 4: missing field "type"`},
		{name: "unknown field", bad: `{"type":"user","id":"5","handel":"dan"}`, kind: "user",
			want: `line 4: user: unknown field "handel"`},
		{name: "unknown field before type", bad: `{"Handle":"dan","type":"user","id":"5"}`, kind: "user",
			want: `line 4: user: unknown field "Handle"`},
		{name: "field of another type", bad: `{"type":"user","id":"5","handle":"dan","author":"1"}`, kind: "user",
			want: `line 4: user: unknown field "author": a user line has no author`},
		{name: "field twice", bad: `{"type":"user","id":"5","handle":"dan","id":"6"}`, kind: "user",
			want: `line 4: field "id" appears twice`},
		{name: "id abc", bad: `{"type":"user","id":"abc","handle":"dan"}`, kind: "user",
			want: `line 4: user: id "abc" is not a valid id: want a positive decimal number`},
		{name: "id 0", bad: `{"type":"user","id":"0","handle":"dan"}`, kind: "user",
			want: `line 4: user: id "0" is not a valid id: want a positive decimal number`},
		{name: "id negative number", bad: `{"type":"follow","follower":-1,"followee":"2"}`, kind: "follow",
			want: `line 4: follow: follower -1 is not a valid id: want a positive decimal number`},
		{name: "id fraction", bad: `{"type":"follow","follower":1.5,"followee":"2"}`, kind: "follow",
			want: `line 4: follow: follower 1.5 is not a valid id: want a positive decimal number`},
		{name: "id too large", bad: `{"type":"follow","follower":"18446744073709551616","followee":"2"}`, kind: "follow",
			want: `line 4: follow: follower "18446744073709551616" is not a valid id: want a positive decimal number`},
		{name: "id boolean", bad: `{"type":"follow","follower":true,"followee":"2"}`, kind: "follow",
			want: `line 4: follow: follower: want an id, a positive decimal number, not a boolean`},
		{name: "missing handle", bad: `{"type":"user","id":"5"}`, kind: "user",
			want: `line 4: user: missing field "handle"`},
		{name: "null handle", bad: `{"type":"user","id":"5","handle":null}`, kind: "user",
			want: `line 4: user: missing field "handle"`},
		{name: "handle a number", bad: `{"type":"user","id":"5","handle":5}`, kind: "user",
			want: `line 4: user: handle: want a string, not a number`},
		{name: "handle an object", bad: `{"type":"user","id":"5","handle":{"a":1}}`, kind: "user",
			want: `line 4: handle: want a string or number, not an object`},
		{name: "handle with a space", bad: `{"type":"user","id":"5","handle":"d n"}`, kind: "user",
			want: `line 4: user: handle "d n" is not valid: 1 to 64 characters, no spaces, braces or @`, code: apierr.BadInput},
		{name: "duplicate handle for another id", bad: `{"type":"user","id":"5","handle":"ann"}`, kind: "user",
			want: `line 4: user: handle "ann" is taken by another user`, code: apierr.BadInput},
		{name: "duplicate handle in one batch",
			before: []string{base[0], base[1], base[2], `{"type":"user","id":"6","handle":"eve"}`},
			bad:    `{"type":"user","id":"5","handle":"eve"}`, kind: "user",
			want: `line 5: user: handle "eve" is taken by another user`, code: apierr.BadInput},
		{name: "follow of unknown user", bad: `{"type":"follow","follower":"1","followee":"999"}`, kind: "follow",
			want: `line 4: follow: no user with id 999`, code: apierr.NotFound},
		{name: "follow by unknown user", bad: `{"type":"follow","follower":"999","followee":"1"}`, kind: "follow",
			want: `line 4: follow: no user with id 999`, code: apierr.NotFound},
		{name: "follow in one batch with unknown user",
			before: []string{base[0], base[1], `{"type":"user","id":"6","handle":"eve"}`, `{"type":"user","id":"7","handle":"fay"}`, base[2], `{"type":"follow","follower":"6","followee":"7"}`},
			bad:    `{"type":"follow","follower":"6","followee":"998"}`, kind: "follow",
			want: `line 7: follow: no user with id 998`, code: apierr.NotFound},
		{name: "self-follow", bad: `{"type":"follow","follower":"2","followee":"2"}`, kind: "follow",
			want: `line 4: follow: you cannot follow yourself`, code: apierr.BadInput},
		{name: "post by unknown author", bad: `{"type":"post","id":"52","author":"77","text":"hi","createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: no user with id 77`, code: apierr.NotFound},
		{name: "bad createdAt", bad: `{"type":"post","id":"52","author":"1","text":"hi","createdAt":"2023-07-11 15:32:02"}`, kind: "post",
			want: `line 4: post: createdAt "2023-07-11 15:32:02" is not an RFC 3339 time like 2023-07-11T15:32:02Z`},
		{name: "missing createdAt", bad: `{"type":"post","id":"52","author":"1","text":"hi"}`, kind: "post",
			want: `line 4: post: missing field "createdAt"`},
		{name: "blank text", bad: `{"type":"post","id":"52","author":"1","text":"  ","createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: missing field "text": a post needs text or media`},
		{name: "post id reused",
			before: []string{base[0], base[1], base[2], `{"type":"post","id":"52","author":"1","text":"hi","createdAt":"2023-07-11T15:32:02Z"}`, base[2]},
			bad:    `{"type":"post","id":"52","author":"2","text":"hi","createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 6: post: post 52 already exists with another author, time, text, media, content warning or parent`, code: apierr.BadInput},
		{name: "post id reused in one batch",
			before: []string{base[0], base[1], base[2], `{"type":"post","id":"52","author":"1","text":"hi","createdAt":"2023-07-11T15:32:02Z"}`},
			bad:    `{"type":"post","id":"52","author":"1","text":"hi","createdAt":"2023-07-11T15:32:03Z"}`, kind: "post",
			want: `line 5: post: post 52 already exists with another author, time, text, media, content warning or parent`, code: apierr.BadInput},
		{name: "reply to a missing post", bad: `{"type":"post","id":"52","author":"1","text":"hi","createdAt":"2023-07-11T15:32:02Z","replyTo":"999"}`, kind: "post",
			want: `line 4: post: post 52 replies to 999, which is not a post in the store (give replyToAuthor for a parent deleted since)`, code: apierr.NotFound},
		{name: "replyToAuthor alone", bad: `{"type":"post","id":"52","author":"1","text":"hi","createdAt":"2023-07-11T15:32:02Z","replyToAuthor":"2"}`, kind: "post",
			want: `line 4: post: replyToAuthor without replyTo`},
		{name: "repost of a missing post", bad: `{"type":"repost","id":"60","user":"1","post":"999","createdAt":"2023-07-11T15:32:02Z"}`, kind: "repost",
			want: `line 4: repost: repost 60: no post with id 999`, code: apierr.NotFound},
		{name: "repost without createdAt", bad: `{"type":"repost","id":"60","user":"1","post":"999"}`, kind: "repost",
			want: `line 4: repost: missing field "createdAt"`},
		{name: "repost by unknown user",
			before: []string{base[0], base[1], base[2], `{"type":"post","id":"52","author":"2","text":"hi","createdAt":"2023-07-11T15:32:02Z"}`},
			bad:    `{"type":"repost","id":"60","user":"77","post":"52","createdAt":"2023-07-11T15:32:03Z"}`, kind: "repost",
			want: `line 5: repost: no user with id 77`, code: apierr.NotFound},
		{name: "second repost in one batch",
			before: []string{base[0], base[1], base[2], `{"type":"post","id":"52","author":"2","text":"hi","createdAt":"2023-07-11T15:32:02Z"}`,
				`{"type":"repost","id":"60","user":"1","post":"52","createdAt":"2023-07-11T15:32:03Z"}`},
			bad: `{"type":"repost","id":"61","user":"1","post":"52","createdAt":"2023-07-11T15:32:04Z"}`, kind: "repost",
			want: `line 6: repost: repost 61: user 1 reposts post 52 already, as repost 60`, code: apierr.BadInput},
		{name: "second repost",
			before: []string{base[0], base[1], base[2], `{"type":"post","id":"52","author":"2","text":"hi","createdAt":"2023-07-11T15:32:02Z"}`,
				`{"type":"repost","id":"60","user":"1","post":"52","createdAt":"2023-07-11T15:32:03Z"}`, base[2]},
			bad: `{"type":"repost","id":"61","user":"1","post":"52","createdAt":"2023-07-11T15:32:04Z"}`, kind: "repost",
			want: `line 7: repost: repost 61: user 1 reposts post 52 already, as another repost`, code: apierr.BadInput},
		{name: "post id reused with other media",
			before: []string{base[0], base[1], base[2], `{"type":"post","id":"52","author":"1","text":"hi","createdAt":"2023-07-11T15:32:02Z","media":[{"url":"https://a.example/1.jpg","kind":"IMAGE"}]}`, base[2]},
			bad:    `{"type":"post","id":"52","author":"1","text":"hi","createdAt":"2023-07-11T15:32:02Z","media":[{"url":"https://a.example/2.jpg","kind":"IMAGE"}]}`, kind: "post",
			want: `line 6: post: post 52 already exists with another author, time, text, media, content warning or parent`, code: apierr.BadInput},
		{name: "counts with negative likes", bad: `{"type":"counts","post":"50","likes":-1}`, kind: "counts",
			want: `line 4: counts: likes -1 is negative; counts must be 0 or more`},
		{name: "counts not integer", bad: `{"type":"counts","post":"50","likes":1.5}`, kind: "counts",
			want: `line 4: counts: likes 1.5 is not a non-negative integer`},
		{name: "counts as string", bad: `{"type":"counts","post":"50","likes":"1"}`, kind: "counts",
			want: `line 4: counts: likes: want a non-negative integer, not a string`},
		{name: "live ended never started", bad: `{"type":"live","id":"8","anchor":"1","title":"t","endedAt":"2023-07-11T15:32:02Z"}`, kind: "live",
			want: `line 4: live: endedAt requires startedAt (or, for a cancelled preview, scheduledStartAt)`},
		{name: "live with no times", bad: `{"type":"live","id":"8","anchor":"1","title":"t"}`, kind: "live",
			want: `line 4: live: a live needs scheduledStartAt (a preview) or startedAt (live or ended)`},
		{name: "live ended before start", bad: `{"type":"live","id":"8","anchor":"1","title":"t","startedAt":"2023-07-11T15:32:02Z","endedAt":"2023-07-11T15:32:01Z"}`, kind: "live",
			want: `line 4: live: endedAt 2023-07-11T15:32:01Z is before startedAt 2023-07-11T15:32:02Z`},
		{name: "live bad time", bad: `{"type":"live","id":"8","anchor":"1","title":"t","scheduledStartAt":"tomorrow"}`, kind: "live",
			want: `line 4: live: scheduledStartAt "tomorrow" is not an RFC 3339 time like 2023-07-11T15:32:02Z`},
		{name: "live without title", bad: `{"type":"live","id":"8","anchor":"1","startedAt":"2023-07-11T15:32:02Z"}`, kind: "live",
			want: `line 4: live: missing field "title": a live needs a title`},
		{name: "likes over GraphQL Int", bad: `{"type":"counts","post":"50","likes":2147483648}`, kind: "counts",
			want: `line 4: counts: likes 2147483648 is too large; counts must be at most 2147483647 (GraphQL Int)`},
		{name: "likes at int64 max", bad: `{"type":"counts","post":"50","favorites":9223372036854775807}`, kind: "counts",
			want: `line 4: counts: favorites 9223372036854775807 is too large; counts must be at most 2147483647 (GraphQL Int)`},
		{name: "text not UTF-8", bad: "{\"type\":\"post\",\"id\":\"52\",\"author\":\"1\",\"text\":\"caf\xe9\",\"createdAt\":\"2023-07-11T15:32:02Z\"}", kind: "post",
			want: `line 4: post: text: not valid UTF-8`},
		{name: "text with a lone surrogate", bad: `{"type":"post","id":"52","author":"1","text":"a\ud800b","createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: text: a \u escape of a lone UTF-16 surrogate`},
		{name: "text with NUL", bad: `{"type":"post","id":"52","author":"1","text":"a\u0000b","createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: text must not contain control characters other than newline and tab (found U+0000 at character 2)`, code: apierr.BadInput},
		{name: "text zero-width only", bad: `{"type":"post","id":"52","author":"1","text":"\u200b\ufeff \u2060","createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: text must contain at least one visible character`, code: apierr.BadInput},
		{name: "title with escape control", bad: `{"type":"live","id":"8","anchor":"1","title":"a\u001bb","startedAt":"2023-07-11T15:32:02Z"}`, kind: "live",
			want: `line 4: live: title must not contain control characters other than newline and tab (found U+001B at character 2)`, code: apierr.BadInput},
		{name: "media not an array", bad: `{"type":"post","id":"52","author":"1","text":"hi","media":"x","createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media: want an array of objects, not a string`},
		{name: "media an object", bad: `{"type":"post","id":"52","author":"1","text":"hi","media":{"url":"x"},"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: media: want an array of objects, not an object`},
		{name: "media of strings", bad: `{"type":"post","id":"52","author":"1","media":["https://a.example/x.jpg"],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media[0]: want an object`},
		{name: "media unterminated", bad: `{"type":"post","id":"52","author":"1","media":[{"url":"]"}`, kind: "post",
			want: `line 4: invalid JSON at column 59: unterminated array`},
		{name: "media field in another case", bad: `{"type":"post","id":"52","author":"1","media":[{"URL":"https://a.example/x.jpg","kind":"IMAGE"}],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media[0]: unknown field "URL"`},
		{name: "media field twice", bad: `{"type":"post","id":"52","author":"1","media":[{"url":"https://a.example/x.jpg","kind":"IMAGE","url":"https://a.example/y.jpg"}],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media[0]: field "url" appears twice`},
		{name: "media width a fraction", bad: `{"type":"post","id":"52","author":"1","media":[{"url":"https://a.example/x.jpg","kind":"IMAGE","width":1.5}],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media[0].width: want an integer, not number 1.5`},
		{name: "media sensitive a string", bad: `{"type":"post","id":"52","author":"1","media":[{"url":"https://a.example/x.jpg","kind":"IMAGE","sensitive":"yes"}],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media[0].sensitive: want a boolean, not string`},
		{name: "media of five", bad: `{"type":"post","id":"52","author":"1","media":[{"url":"https://a.example/1","kind":"IMAGE"},{"url":"https://a.example/2","kind":"IMAGE"},{"url":"https://a.example/3","kind":"IMAGE"},{"url":"https://a.example/4","kind":"IMAGE"},{"url":"https://a.example/5","kind":"IMAGE"}],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media has more than 4 items; a post carries at most 4 images or GIFs, or 1 video`},
		{name: "media image and video", bad: `{"type":"post","id":"52","author":"1","media":[{"url":"https://a.example/1","kind":"IMAGE"},{"url":"https://a.example/2","kind":"VIDEO"}],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media[1].kind is VIDEO, but a video goes alone: a post carries at most 4 images or GIFs, or 1 video`, code: apierr.BadInput},
		{name: "media kind unknown", bad: `{"type":"post","id":"52","author":"1","media":[{"url":"https://a.example/1","kind":"image"}],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media[0].kind must be IMAGE, VIDEO or GIF`, code: apierr.BadInput},
		{name: "media http elsewhere", bad: `{"type":"post","id":"52","author":"1","media":[{"url":"http://a.example/1","kind":"IMAGE"}],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media[0].url must be an https URL`, code: apierr.BadInput},
		{name: "media thumbnail with userinfo", bad: `{"type":"post","id":"52","author":"1","media":[{"url":"https://a.example/1","kind":"IMAGE","thumbnailUrl":"https://u@a.example/t"}],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media[0].thumbnailUrl must not carry a user name or password`, code: apierr.BadInput},
		{name: "media alt text with a lone surrogate", bad: `{"type":"post","id":"52","author":"1","media":[{"url":"https://a.example/1","kind":"IMAGE","altText":"a\ud800"}],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: media: a \u escape of a lone UTF-16 surrogate`},
		{name: "media alt text not UTF-8", bad: "{\"type\":\"post\",\"id\":\"52\",\"author\":\"1\",\"media\":[{\"url\":\"https://a.example/1\",\"kind\":\"IMAGE\",\"altText\":\"caf\xe9\"}],\"createdAt\":\"2023-07-11T15:32:02Z\"}", kind: "post",
			want: `line 4: post: media: not valid UTF-8`},
		{name: "blank text and empty media", bad: `{"type":"post","id":"52","author":"1","text":" ","media":[],"createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: missing field "text": a post needs text or media`},
		{name: "long content warning", bad: `{"type":"post","id":"52","author":"1","text":"hi","contentWarning":"` + strings.Repeat("w", 201) + `","createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: contentWarning has 201 characters; at most 200 are allowed`, code: apierr.BadInput},
		{name: "live cover not https", bad: `{"type":"live","id":"8","anchor":"1","title":"t","coverUrl":"ftp://a.example/c.jpg","startedAt":"2023-07-11T15:32:02Z"}`, kind: "live",
			want: `line 4: live: coverUrl must be an https URL`, code: apierr.BadInput},
		{name: "cover on a post", bad: `{"type":"post","id":"52","author":"1","text":"hi","coverUrl":"https://a.example/c.jpg","createdAt":"2023-07-11T15:32:02Z"}`, kind: "post",
			want: `line 4: post: unknown field "coverUrl": a post line has no coverUrl`},
		{name: "follow with a bad createdAt", bad: `{"type":"follow","follower":"2","followee":"1","createdAt":"yesterday"}`, kind: "follow",
			want: `line 4: follow: createdAt "yesterday" is not an RFC 3339 time like 2023-07-11T15:32:02Z`},
		{name: "favorite of a missing post", bad: `{"type":"favorite","user":"1","post":"999"}`, kind: "favorite",
			want: `line 4: favorite: no post with id 999`, code: apierr.NotFound},
		{name: "favorite by an unknown user", bad: `{"type":"favorite","user":"999","post":"50"}`, kind: "favorite",
			want: `line 4: favorite: no user with id 999`, code: apierr.NotFound},
		{name: "favorite with a target", bad: `{"type":"favorite","user":"1","post":"50","target":"2"}`, kind: "favorite",
			want: `line 4: favorite: unknown field "target": a favorite line has no target`},
		{name: "line over 1 MiB", bad: long, kind: "user",
			want: `line 4: line is longer than 1048576 bytes (1 MiB)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := c.before
			if before == nil {
				before = base
			}
			lines := append(append(append(append([]string{}, before...), c.bad), next[c.kind]), tail...)
			svc := newService(t)
			ctx := context.Background()
			st, err := Load(ctx, svc, strings.NewReader(strings.Join(lines, "\n")+"\n"))
			wantLine := len(before) + 1
			var le *LineError
			if !errors.As(err, &le) {
				t.Fatalf("err = %v (%T), want a *LineError", err, err)
			}
			if le.Line != wantLine || err.Error() != c.want {
				t.Errorf("err = %q (line %d)\nwant %q (line %d)", err, le.Line, c.want, wantLine)
			}
			if c.code != "" && feedcore.CodeOf(err) != c.code {
				t.Errorf("code %s, want %s", feedcore.CodeOf(err), c.code)
			}
			if st.Lines != wantLine-1 {
				t.Errorf("stats.Lines = %d, want %d", st.Lines, wantLine-1)
			}
			// Everything before the bad line is applied.
			for _, h := range []string{"ann", "bob"} {
				if u, err := svc.UserByHandle(ctx, h); err != nil || u == nil {
					t.Errorf("user %s = %v, %v; want it to exist", h, u, err)
				}
			}
			if st.Users < 2 || st.Follows < 1 {
				t.Errorf("stats %+v: lines before the bad one not all applied", st)
			}
			// Nothing after it is.
			for _, h := range []string{"late", "later", "d n", "dan"} {
				if u, err := svc.UserByHandle(ctx, h); err != nil || u != nil {
					t.Errorf("user %s = %+v, %v; want none", h, u, err)
				}
			}
			if u, err := svc.User(ctx, 5); feedcore.CodeOf(err) != apierr.NotFound {
				t.Errorf("user 5 = %+v, %v; want none", u, err)
			}
			if got := counts(t, svc, 1, 2); got[0] != (feedcore.GraphCounts{Followers: 0, Following: 1}) || got[1] != (feedcore.GraphCounts{Followers: 1, Following: 0}) {
				t.Errorf("counts of 1, 2: %+v; want only 1 following 2", got)
			}
			ps, err := svc.Posts(ctx, []feedcore.ID{50, 51})
			if err != nil || ps[0] != nil || ps[1] != nil {
				t.Errorf("posts after the bad line: %+v, %v", ps, err)
			}
		})
	}
}

// A file's last line need not end in a newline; CR LF endings and a byte
// order mark are accepted; a line of exactly 1 MiB is.
func TestLineEndings(t *testing.T) {
	svc := newService(t)
	long := `{"type":"user","id":"3","handle":"cid","displayName":"`
	long += strings.Repeat("c", MaxLineBytes-len(long)-2) + `"}`
	file := "\xef\xbb\xbf" + `{"type":"user","id":"1","handle":"ann"}` + "\r\n" + long + "\r\n\r\n" +
		`{"type":"user","id":"2","handle":"bob"}`
	st, err := Load(context.Background(), svc, strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if want := (Stats{Users: 3, Lines: 4}); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	if u, err := svc.UserByHandle(context.Background(), "bob"); err != nil || u == nil || u.ID != 2 {
		t.Errorf("bob = %+v, %v", u, err)
	}
}

func TestEmptyAndCancelled(t *testing.T) {
	svc := newService(t)
	st, err := Load(context.Background(), svc, strings.NewReader("\n \n"))
	if err != nil || st != (Stats{Lines: 2}) {
		t.Errorf("empty file: %+v, %v", st, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, svc, strings.NewReader(smallFile)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if u, _ := svc.UserByHandle(context.Background(), "ann"); u != nil {
		t.Errorf("cancelled import applied ann")
	}
}

// A reader that fails is reported as such, not as a bad line.
func TestReadError(t *testing.T) {
	svc := newService(t)
	boom := errors.New("disk on fire")
	r := &failingReader{data: `{"type":"user","id":"1","handle":"ann"}` + "\n", err: boom}
	st, err := Load(context.Background(), svc, r)
	var le *LineError
	if !errors.Is(err, boom) || errors.As(err, &le) {
		t.Fatalf("err = %v", err)
	}
	if st.Users != 1 {
		t.Errorf("stats %+v: the line read before the failure should be applied", st)
	}
}

type failingReader struct {
	data string
	err  error
}

func (r *failingReader) Read(p []byte) (int, error) {
	if r.data == "" {
		return 0, r.err
	}
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

// A random interleaving of users, follows and posts, with many createdAt
// ties, loads to the feeds and counts a model predicts, whatever the batch
// size.
func TestLoadRandomModel(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	const users = 30
	var lines []string
	exists := map[feedcore.ID]bool{}
	follows := map[feedcore.ID]map[feedcore.ID]bool{}
	type post struct {
		id, author feedcore.ID
		ts         int64
	}
	var posts []post
	nextUser := feedcore.ID(1)
	for len(lines) < 600 {
		switch n := r.IntN(10); {
		case n < 2 && nextUser <= users || len(exists) < 2:
			lines = append(lines, fmt.Sprintf(`{"type":"user","id":%d,"handle":"h%d"}`, nextUser, nextUser))
			exists[nextUser] = true
			follows[nextUser] = map[feedcore.ID]bool{}
			nextUser++
		case n < 6:
			a, b := feedcore.ID(r.IntN(int(nextUser-1))+1), feedcore.ID(r.IntN(int(nextUser-1))+1)
			if a == b {
				continue
			}
			lines = append(lines, fmt.Sprintf(`{"type":"follow","follower":"%d","followee":"%d"}`, a, b))
			follows[a][b] = true
		default:
			p := post{id: feedcore.ID(1000 + len(posts)), author: feedcore.ID(r.IntN(int(nextUser-1)) + 1), ts: int64(r.IntN(40)) * 500}
			posts = append(posts, p)
			at := time.UnixMilli(1_700_000_000_000 + p.ts).UTC().Format(time.RFC3339Nano)
			lines = append(lines, fmt.Sprintf(`{"type":"post","id":"%d","author":"%d","text":"p%d","createdAt":"%s"}`, p.id, p.author, p.id, at))
		}
	}
	file := strings.Join(lines, "\n")
	for _, size := range []int{1, 7, 0} {
		t.Run(fmt.Sprintf("batch=%d", size), func(t *testing.T) {
			svc := newService(t)
			if _, err := LoadWith(context.Background(), svc, strings.NewReader(file), Options{BatchSize: size}); err != nil {
				t.Fatal(err)
			}
			drain(t, svc)
			for viewer := range exists {
				var want []post
				for _, p := range posts {
					if p.author == viewer || follows[viewer][p.author] {
						want = append(want, p)
					}
				}
				slices.SortFunc(want, func(a, b post) int {
					if a.ts != b.ts {
						return cmp.Compare(b.ts, a.ts)
					}
					return cmp.Compare(b.id, a.id)
				})
				wantIDs := []feedcore.ID{}
				for _, p := range want {
					wantIDs = append(wantIDs, p.id)
				}
				if got := feedtest.Feed(t, svc, viewer, 10); !reflect.DeepEqual(got, wantIDs) {
					t.Errorf("viewer %d: feed\n%v\nwant\n%v", viewer, got, wantIDs)
				}
				followers := 0
				for _, fs := range follows {
					if fs[viewer] {
						followers++
					}
				}
				if got := counts(t, svc, viewer)[0]; got != (feedcore.GraphCounts{Followers: followers, Following: len(follows[viewer])}) {
					t.Errorf("viewer %d: counts %+v, want %d followers, %d following", viewer, got, followers, len(follows[viewer]))
				}
			}
		})
	}
}

// TestProgress: the progress hook sees the totals grow batch by batch,
// ending at the file's last line.
func TestProgress(t *testing.T) {
	svc := newService(t)
	var b strings.Builder
	for i := 1; i <= 25; i++ {
		fmt.Fprintf(&b, `{"type":"user","id":"%d","handle":"u%d"}`+"\n", i, i)
	}
	var seen []Stats
	o := Defaults(svc)
	o.BatchSize = 10
	o.Progress = func(st Stats) { seen = append(seen, st) }
	if _, err := LoadWith(context.Background(), svc, strings.NewReader(b.String()), o); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 3 || seen[0].Lines != 10 || seen[0].Users != 10 || seen[2].Lines != 25 || seen[2].Users != 25 {
		t.Fatalf("progress calls %+v, want 3 batches ending at line 25", seen)
	}
}
