package server

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/gqltype"
	"github.com/feedd/feedd/redisstore"
)

type userData struct {
	ID                string  `json:"id"`
	DatabaseID        string  `json:"databaseId"`
	Handle            string  `json:"handle"`
	DisplayName       string  `json:"displayName"`
	AvatarURL         *string `json:"avatarUrl"`
	FollowerCount     int     `json:"followerCount"`
	FollowingCount    int     `json:"followingCount"`
	ViewerIsFollowing bool    `json:"viewerIsFollowing"`
}

type postData struct {
	ID         string   `json:"id"`
	DatabaseID string   `json:"databaseId"`
	Text       string   `json:"text"`
	CreatedAt  string   `json:"createdAt"`
	Author     userData `json:"author"`
	Counts     struct {
		Likes, Comments, Reposts, Favorites int
	} `json:"counts"`
	ViewerHasLiked bool `json:"viewerHasLiked"`
}

const userFields = `id databaseId handle displayName avatarUrl followerCount followingCount viewerIsFollowing`
const postFields = `id databaseId text createdAt author { ` + userFields + ` } counts { likes comments reposts favorites } viewerHasLiked`

var dateTimeRE = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$`)

func TestPublishFollowAndRead(t *testing.T) {
	e := newEnv(t)
	e.users("ann", "bob", "cat")

	var pub struct {
		PublishPost struct{ Post postData } `json:"publishPost"`
	}
	e.do(2, `mutation($t: String!) { publishPost(input: {text: $t}) { post { `+postFields+` } } }`,
		map[string]any{"t": "  hello from bob  "}).as(t, &pub)
	p := pub.PublishPost.Post
	if p.Text != "hello from bob" || p.Author.Handle != "bob" || p.Author.DatabaseID != "2" {
		t.Fatalf("published post = %+v", p)
	}
	if !dateTimeRE.MatchString(p.CreatedAt) {
		t.Errorf("createdAt %q is not RFC 3339 UTC with milliseconds", p.CreatedAt)
	}
	if typ, id, err := gqltype.Decode(p.ID); err != nil || typ != gqltype.Post || p.DatabaseID != strconv.FormatUint(id, 10) {
		t.Errorf("post id %q does not decode to Post:%s (%v)", p.ID, p.DatabaseID, err)
	}

	// Follow by global id and by plain database id.
	var fol struct {
		FollowUser struct{ User userData } `json:"followUser"`
	}
	e.do(1, `mutation($u: ID!) { followUser(userId: $u) { user { `+userFields+` } } }`,
		map[string]any{"u": gqltype.Encode(gqltype.User, 2)}).as(t, &fol)
	if u := fol.FollowUser.User; u.Handle != "bob" || u.FollowerCount != 1 || !u.ViewerIsFollowing {
		t.Fatalf("followUser(bob) = %+v", u)
	}
	e.do(1, `mutation { followUser(userId: "3") { user { handle } } }`, nil).as(t, &fol)

	var me struct{ Viewer userData }
	e.do(1, `{ viewer { `+userFields+` } }`, nil).as(t, &me)
	if v := me.Viewer; v.Handle != "ann" || v.FollowingCount != 2 || v.FollowerCount != 0 || v.ViewerIsFollowing || v.AvatarURL != nil {
		t.Fatalf("viewer = %+v", v)
	}
	if v := me.Viewer; v.ID != gqltype.Encode(gqltype.User, 1) || v.DisplayName != "The ann" {
		t.Fatalf("viewer ids = %+v", v)
	}

	// user(handle) answers anonymous callers too.
	var byHandle struct {
		Bob, Nobody *userData
	}
	e.do(0, `{ bob: user(handle: "bob") { `+userFields+` } nobody: user(handle: "nobody") { id } }`, nil).as(t, &byHandle)
	if byHandle.Bob == nil || byHandle.Bob.FollowerCount != 1 || byHandle.Bob.ViewerIsFollowing || byHandle.Nobody != nil {
		t.Fatalf("user(handle) = %+v / %+v", byHandle.Bob, byHandle.Nobody)
	}

	// node refetches both types, and is null for what does not exist.
	var nodes struct {
		Post, User, Ghost, GhostPost *struct {
			Typename string `json:"__typename"`
			Text     string `json:"text"`
			Handle   string `json:"handle"`
		}
	}
	e.do(1, `query($p: ID!, $u: ID!, $g: ID!, $gp: ID!) {
		post: node(id: $p) { __typename ... on Post { text } }
		user: node(id: $u) { __typename ... on User { handle } }
		ghost: node(id: $g) { id }
		ghostPost: node(id: $gp) { id }
	}`, map[string]any{"p": p.ID, "u": gqltype.Encode(gqltype.User, 3), "g": gqltype.Encode(gqltype.User, 99), "gp": gqltype.Encode(gqltype.Post, 99)}).as(t, &nodes)
	if nodes.Post == nil || nodes.Post.Typename != "Post" || nodes.Post.Text != "hello from bob" {
		t.Errorf("node(post) = %+v", nodes.Post)
	}
	if nodes.User == nil || nodes.User.Typename != "User" || nodes.User.Handle != "cat" {
		t.Errorf("node(user) = %+v", nodes.User)
	}
	if nodes.Ghost != nil || nodes.GhostPost != nil {
		t.Errorf("node of missing objects = %+v / %+v", nodes.Ghost, nodes.GhostPost)
	}

	// Unfollow, then delete: the post's node is null afterwards.
	e.do(1, `mutation { unfollowUser(userId: "3") { user { followerCount } } }`, nil).as(t, &struct{}{})
	var del struct {
		DeletePost struct{ DeletedPostID string } `json:"deletePost"`
	}
	e.do(2, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": p.ID}).as(t, &del)
	if del.DeletePost.DeletedPostID != p.ID {
		t.Fatalf("deletedPostId = %q, want %q", del.DeletePost.DeletedPostID, p.ID)
	}
	var gone struct{ Node *struct{ ID string } }
	e.do(1, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": p.ID}).as(t, &gone)
	if gone.Node != nil {
		t.Fatalf("deleted post still resolves: %+v", gone.Node)
	}
}

func TestErrorCodes(t *testing.T) {
	e := newEnv(t)
	e.users("ann", "bob")
	var pub struct {
		PublishPost struct{ Post struct{ ID string } } `json:"publishPost"`
	}
	e.do(2, `mutation { publishPost(input: {text: "bob's"}) { post { id } } }`, nil).as(t, &pub)
	bobsPost := pub.PublishPost.Post.ID
	expired := expiredToken(t)

	for _, c := range []struct {
		name    string
		viewer  uint64
		query   string
		vars    map[string]any
		headers []string
		code    string
	}{
		{"viewer, anonymous", 0, `{ viewer { id } }`, nil, nil, "UNAUTHENTICATED"},
		{"feed, anonymous", 0, `{ followingFeed { edges { cursor } } }`, nil, nil, "UNAUTHENTICATED"},
		{"publish, anonymous", 0, `mutation { publishPost(input: {text: "x"}) { post { id } } }`, nil, nil, "UNAUTHENTICATED"},
		{"viewer, unknown user", 42, `{ viewer { id } }`, nil, nil, "UNAUTHENTICATED"},
		{"feed, unknown user", 42, `{ followingFeed { edges { cursor } } }`, nil, nil, "UNAUTHENTICATED"},
		{"feed, unknown user, bad cursor", 42, `{ followingFeed(after: "x") { edges { cursor } } }`, nil, nil, "UNAUTHENTICATED"},
		{"feed, unknown user, first 0", 42, `{ followingFeed(first: 0) { edges { cursor } } }`, nil, nil, "UNAUTHENTICATED"},
		{"feed, bad cursor", 1, `{ followingFeed(after: "x") { edges { cursor } } }`, nil, nil, "INVALID_CURSOR"},
		{"viewer, expired token", 0, `{ viewer { id } }`, nil, []string{"Authorization", "Bearer " + expired}, "UNAUTHENTICATED"},
		{"viewer, bad dev header", 0, `{ viewer { id } }`, nil, []string{auth.DevHeader, "ann"}, "UNAUTHENTICATED"},
		{"node, malformed id", 1, `{ node(id: "not-an-id") { id } }`, nil, nil, "BAD_USER_INPUT"},
		{"node, unknown type", 1, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": gqltype.Encode("Live", 1)}, nil, "BAD_USER_INPUT"},
		{"feed, first 0", 1, `{ followingFeed(first: 0) { edges { cursor } } }`, nil, nil, "BAD_USER_INPUT"},
		{"feed, first 101", 1, `{ followingFeed(first: 101) { edges { cursor } } }`, nil, nil, "BAD_USER_INPUT"},
		{"feed, last -1", 1, `{ followingFeed(last: -1, before: "x") { edges { cursor } } }`, nil, nil, "BAD_USER_INPUT"},
		{"delete, someone else's", 1, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": bobsPost}, nil, "FORBIDDEN"},
		{"delete, missing post", 2, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": gqltype.Encode(gqltype.Post, 12345)}, nil, "NOT_FOUND"},
		{"delete, a user id", 2, `mutation($id: ID!) { deletePost(id: $id) { deletedPostId } }`, map[string]any{"id": gqltype.Encode(gqltype.User, 2)}, nil, "BAD_USER_INPUT"},
		{"follow, missing user", 1, `mutation($u: ID!) { followUser(userId: $u) { user { id } } }`, map[string]any{"u": gqltype.Encode(gqltype.User, 999)}, nil, "NOT_FOUND"},
		{"follow, malformed id", 1, `mutation { followUser(userId: "@bob") { user { id } } }`, nil, nil, "BAD_USER_INPUT"},
		{"follow, self", 1, `mutation { followUser(userId: "1") { user { id } } }`, nil, nil, "BAD_USER_INPUT"},
		{"publish, empty text", 1, `mutation { publishPost(input: {text: ""}) { post { id } } }`, nil, nil, "BAD_USER_INPUT"},
		{"publish, blank text", 1, `mutation { publishPost(input: {text: " \n\t "}) { post { id } } }`, nil, nil, "BAD_USER_INPUT"},
		{"publish, oversize text", 1, `mutation($t: String!) { publishPost(input: {text: $t}) { post { id } } }`, map[string]any{"t": strings.Repeat("é", 2001)}, nil, "BAD_USER_INPUT"},
		{"validation, unknown field", 1, `{ viewer { password } }`, nil, nil, "BAD_USER_INPUT"},
		{"validation, missing variable", 1, `query($h: String!) { user(handle: $h) { id } }`, nil, nil, "BAD_USER_INPUT"},
		{"parse error", 1, `{ viewer { id }`, nil, nil, "BAD_USER_INPUT"},
	} {
		r := e.do(c.viewer, c.query, c.vars, c.headers...)
		mustCode(t, c.name, r, c.code)
		if len(r.Errors) > 0 {
			t.Logf("%s: %s", c.name, r.Errors[0].Message)
		}
		if c.code == "UNAUTHENTICATED" && r.Status != http.StatusOK {
			t.Errorf("%s: HTTP status %d, want 200", c.name, r.Status)
		}
	}
}

func TestBearerToken(t *testing.T) {
	e := newEnv(t)
	e.users("ann", "bob")
	tok, err := auth.Mint(testSecret, 2, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var me struct{ Viewer struct{ Handle string } }
	// The token wins over a dev header naming someone else.
	e.do(1, `{ viewer { handle } }`, nil, "Authorization", "Bearer "+tok).as(t, &me)
	if me.Viewer.Handle != "bob" {
		t.Fatalf("viewer with bearer token = %q, want bob", me.Viewer.Handle)
	}
}

func TestTransportErrorsCarryCodes(t *testing.T) {
	e := newEnv(t)
	e.users("ann")
	get := func(q url.Values) *gqlResponse {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/query?"+q.Encode(), nil)
		req.Header.Set(auth.DevHeader, "1")
		return e.send(req)
	}
	var me struct{ Viewer struct{ Handle string } }
	get(url.Values{"query": {`{ viewer { handle } }`}}).as(t, &me)
	if me.Viewer.Handle != "ann" {
		t.Fatalf("GET viewer = %+v", me)
	}
	r := get(url.Values{"query": {`mutation { publishPost(input: {text: "x"}) { post { id } } }`}})
	mustCode(t, "mutation over GET", r, "BAD_USER_INPUT")
	if r.Status != http.StatusNotAcceptable {
		t.Errorf("mutation over GET: status %d, want 406", r.Status)
	}
	mustCode(t, "GET with bad variables", get(url.Values{"query": {`{ viewer { id } }`}, "variables": {"{"}}), "BAD_USER_INPUT")

	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/query", strings.NewReader("{not json"))
	req.Header.Set("Content-Type", "application/json")
	mustCode(t, "undecodable body", e.send(req), "BAD_USER_INPUT")

	req, _ = http.NewRequest(http.MethodPut, e.srv.URL+"/query", strings.NewReader("{}"))
	mustCode(t, "PUT", e.send(req), "BAD_USER_INPUT")
}

func TestHealthAndPlayground(t *testing.T) {
	e := newEnv(t)
	res, err := http.Get(e.srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %d", res.StatusCode)
	}
	res, err = http.Get(e.srv.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Request.URL.RawQuery, "followingFeed") {
		t.Fatalf("playground: status %d, landed on %s", res.StatusCode, res.Request.URL)
	}
	if res.Header.Get(RequestIDHeader) == "" {
		t.Error("no request id header")
	}
}

func TestStoreDownIsUnavailable(t *testing.T) {
	// A private embedded store, even when FEED_TEST_REDIS is set: closing
	// the client must not stop a shared test store's cleanup.
	st, err := redisstore.Open(context.Background(), redisstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	e := newEnvOn(t, st.Client, "down:")
	e.users("ann")
	st.Client.Close()
	r := e.do(0, `{ user(handle: "ann") { id } }`, nil)
	mustCode(t, "store closed", r, "UNAVAILABLE")
	if len(r.Errors) > 0 && r.Errors[0].Message != unavailableMessage {
		t.Errorf("message = %q", r.Errors[0].Message)
	}
	res, err := http.Get(e.srv.URL + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("readyz with store down: %d", res.StatusCode)
	}
}

// expiredToken is an HS256 token for user 1 that expired an hour ago;
// auth.Mint refuses to mint one, so it is signed here.
func expiredToken(t *testing.T) string {
	t.Helper()
	enc := base64.RawURLEncoding.EncodeToString
	claims := `{"sub":"1","exp":` + strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10) + `}`
	signed := enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc([]byte(claims))
	m := hmac.New(sha256.New, testSecret)
	m.Write([]byte(signed))
	return signed + "." + enc(m.Sum(nil))
}
