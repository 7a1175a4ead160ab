package server

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"testing"

	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/client"
	"github.com/feedd/feedd/redisstore/storetest"
	"github.com/feedd/feedd/server/extension"
)

func persisted(hash string) map[string]any {
	return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
}

func TestAPQSharedByReplicas(t *testing.T) {
	st := storetest.New(t)
	a := newAPIEnvOn(t, st.Client, st.Prefix, APIConfig{})
	b := newAPIEnvOn(t, st.Client, st.Prefix, APIConfig{})
	shallow := newAPIEnvOn(t, st.Client, st.Prefix, APIConfig{MaxDepth: 3})
	a.users("ann")
	const q = `query Me { viewer { handle } }`
	h := extension.QueryHash(q)
	hashOnly := map[string]any{"extensions": persisted(h)}

	_, r := a.raw(a.post(hashOnly, auth.DevHeader, "1"))
	mustCode(t, "hash only, unknown", r, "PERSISTED_QUERY_NOT_FOUND")
	if len(r.Errors) > 0 && r.Errors[0].Message != "PersistedQueryNotFound" {
		t.Errorf("message %q: Apollo clients match PersistedQueryNotFound", r.Errors[0].Message)
	}
	_, r = a.raw(a.post(map[string]any{"query": `{ viewer { id } }`, "extensions": persisted(h)}, auth.DevHeader, "1"))
	mustCode(t, "hash of another query", r, "BAD_USER_INPUT")

	// Documents that fail are never registered.
	for _, c := range []struct {
		e     *env
		query string
	}{
		{a, `{ viewer { nope } }`}, // invalid
		{a, `{ viewer {`},          // does not parse
		{shallow, `{ followingFeed { edges { node { author { handle } } } } }`}, // over that replica's depth limit
	} {
		hq := extension.QueryHash(c.query)
		if _, r = c.e.raw(c.e.post(map[string]any{"query": c.query, "extensions": persisted(hq)}, auth.DevHeader, "1")); r.code() == "" {
			t.Fatalf("%s: no error", c.query)
		}
		_, r = b.raw(b.post(map[string]any{"extensions": persisted(hq)}, auth.DevHeader, "1"))
		mustCode(t, "hash of a failed document "+c.query, r, "PERSISTED_QUERY_NOT_FOUND")
	}

	var me struct{ Viewer struct{ Handle string } }
	_, r = a.raw(a.post(map[string]any{"query": q, "extensions": persisted(h)}, auth.DevHeader, "1"))
	r.as(t, &me)
	if me.Viewer.Handle != "ann" {
		t.Fatalf("register: %+v", me)
	}
	// The other replica knows it now, by POST and by GET.
	_, r = b.raw(b.post(hashOnly, auth.DevHeader, "1"))
	r.as(t, &me)
	if me.Viewer.Handle != "ann" {
		t.Fatalf("hash only on replica b: %+v", me)
	}
	req, _ := http.NewRequest(http.MethodGet, b.srv.URL+"/query?"+url.Values{"extensions": {`{"persistedQuery":{"version":1,"sha256Hash":"` + h + `"}}`}}.Encode(), nil)
	req.Header.Set(auth.DevHeader, "1")
	_, r = b.raw(req)
	r.as(t, &me)
	if me.Viewer.Handle != "ann" {
		t.Fatalf("hash only over GET: %+v", me)
	}
	// A value planted under a hash that is not its own never runs.
	bad := extension.QueryHash("something else")
	c := st.Client
	if err := c.Do(t.Context(), c.B().Set().Key(st.Prefix+"apq:"+bad).Value(`{ viewer { id } }`).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	_, r = b.raw(b.post(map[string]any{"extensions": persisted(bad)}, auth.DevHeader, "1"))
	mustCode(t, "planted text", r, "PERSISTED_QUERY_NOT_FOUND")
	// APQ can be turned off.
	off := newAPIEnvOn(t, st.Client, st.Prefix, APIConfig{DisableAPQ: true})
	if _, r = off.raw(off.post(hashOnly, auth.DevHeader, "1")); r.code() == "" {
		t.Errorf("APQ off: hash-only request answered %s", r.Data)
	}
}

func TestPersistedOnly(t *testing.T) {
	const known = `query Me { viewer { handle } }`
	dir := t.TempDir()
	file := filepath.Join(dir, "persisted.json")
	if err := os.WriteFile(file, []byte(`{"`+extension.QueryHash(known)+`": "query Me { viewer { handle } }"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	list, err := extension.LoadPersisted(file)
	if err != nil {
		t.Fatal(err)
	}
	e := newAPIEnv(t, APIConfig{PersistedOnly: list})
	e.users("ann")
	for _, c := range []struct {
		name string
		body map[string]any
		code string
	}{
		{"known hash only", map[string]any{"extensions": persisted(extension.QueryHash(known))}, ""},
		{"known text", map[string]any{"query": known}, ""},
		{"known text and hash", map[string]any{"query": known, "extensions": persisted(extension.QueryHash(known))}, ""},
		{"unknown hash", map[string]any{"extensions": persisted(extension.QueryHash("{ viewer { id } }"))}, "PERSISTED_QUERY_NOT_FOUND"},
		{"unknown text", map[string]any{"query": `{ viewer { id } }`}, "FORBIDDEN"},
		{"unknown text with its hash (no registration)", map[string]any{"query": `{ viewer { id } }`, "extensions": persisted(extension.QueryHash("{ viewer { id } }"))}, "FORBIDDEN"},
		{"known text, wrong hash", map[string]any{"query": known, "extensions": persisted(extension.QueryHash("x"))}, "BAD_USER_INPUT"},
		{"mutation not in the list", map[string]any{"query": `mutation { followUser(userId: "1") { user { id } } }`}, "FORBIDDEN"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, r := e.raw(e.post(c.body, auth.DevHeader, "1"))
			if c.code != "" {
				mustCode(t, c.name, r, c.code)
				return
			}
			var me struct{ Viewer struct{ Handle string } }
			r.as(t, &me)
			if me.Viewer.Handle != "ann" {
				t.Errorf("viewer = %+v", me)
			}
		})
	}
	// A file whose hash does not match its text is refused at load.
	if err := os.WriteFile(file, []byte(`{"`+extension.QueryHash("x")+`": "query Me { viewer { handle } }"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := extension.LoadPersisted(file); err == nil {
		t.Error("LoadPersisted accepted a hash that does not match its text")
	}
	// With the committed list of the clients' operations, the typed Go
	// client works unchanged.
	m, err := extension.LoadPersisted("../client/persisted/persisted.json")
	if err != nil || len(m) == 0 {
		t.Fatalf("client/persisted/persisted.json: %d entries, %v", len(m), err)
	}
	ce := newAPIEnv(t, APIConfig{PersistedOnly: m})
	ce.users("ann")
	gc := client.New(ce.srv.URL+"/query", client.Auth{ViewerID: "1"}, ce.srv.Client())
	v, err := client.Viewer(t.Context(), gc)
	if err != nil || v.Viewer.Handle != "ann" {
		t.Fatalf("Go client, Viewer: %+v, %v", v, err)
	}
	if _, err := client.FollowingFeed(t.Context(), gc, client.Ptr(100), nil, nil, nil); err != nil {
		t.Fatalf("Go client, FollowingFeed: %v", err)
	}
}
