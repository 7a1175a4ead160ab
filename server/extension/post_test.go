package extension

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/testserver"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// TestPOSTAnswersAsGqlgen sends the same requests through gqlgen's POST
// transport and through POST, and wants the same status, content type and
// body from both.
func TestPOSTAnswersAsGqlgen(t *testing.T) {
	theirs, ours := testserver.New(), testserver.New()
	theirs.AddTransport(transport.POST{})
	ours.AddTransport(POST{})
	for _, tc := range []struct{ name, body, accept string }{
		{"query", `{"query":"{ name }"}`, ""},
		{"query, graphql-response", `{"query":"{ name }"}`, "application/graphql-response+json"},
		{"query, any", `{"query":"{ name }"}`, "*/*"},
		{"query, unknown accept", `{"query":"{ name }"}`, "text/html"},
		{"query, accept list", `{"query":"{ name }"}`, "text/html, application/json;q=0.9"},
		{"variables", `{"query":"query($id: Int!) { find(id: $id) }","variables":{"id":1}}`, ""},
		{"parse error", `{"query":"{ name"}`, ""},
		{"parse error, graphql-response", `{"query":"{ name"}`, "application/graphql-response+json"},
		{"validation error", `{"query":"{ nope }"}`, ""},
		{"validation error, graphql-response", `{"query":"{ nope }"}`, "application/graphql-response+json"},
		{"no query", `{}`, ""},
		{"bad json", `{"query":`, ""},
		{"bad json, graphql-response", `{"query":`, "application/graphql-response+json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, got := serve(theirs, tc.body, tc.accept), serve(ours, tc.body, tc.accept)
			if got.Code != want.Code || got.Header().Get("Content-Type") != want.Header().Get("Content-Type") ||
				got.Body.String() != want.Body.String() {
				t.Errorf("got %d %q %s, want %d %q %s", got.Code, got.Header().Get("Content-Type"), got.Body,
					want.Code, want.Header().Get("Content-Type"), want.Body)
			}
		})
	}
}

func serve(h http.Handler, body, accept string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/query", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	if accept != "" {
		r.Header.Set("Accept", accept)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestWriteResponseIsJSONMarshal: whatever the response holds, the bytes
// are json.Marshal's.
func TestWriteResponseIsJSONMarshal(t *testing.T) {
	more := true
	for _, resp := range []*graphql.Response{
		{Data: []byte(`{"a":1,"b":[true,null,"x"]}`)},
		{Data: []byte(`{"text":"<b>bold</b> & co"}`)},
		{Data: []byte("{\"text\":\"line\u2028sep\"}")},
		{Data: []byte(`{"text":"\u00e9t\u00e9 \ud83d\ude00"}`)},
		{Data: []byte(`null`)},
		{},
		{Errors: gqlerror.List{{Message: "no"}}},
		{Errors: gqlerror.List{{Message: "partial"}}, Data: []byte(`{"a":null}`)},
		{Data: []byte(`{"a":1}`), Extensions: map[string]any{"cost": 3}},
		{Data: []byte(`{"a":1}`), Label: "l", HasNext: &more},
		{Data: []byte(`{"a":1}`), Label: "<l>", Path: ast.Path{ast.PathName("a"), ast.PathIndex(2)}, HasNext: &more,
			Extensions: map[string]any{"cost": map[string]any{"limit": 5000, "remaining": 9954, "note": "a & b"}}},
		{Errors: gqlerror.List{{Message: "x < y", Path: ast.Path{ast.PathName("a")}}}, Data: []byte(`{"a":null}`),
			Extensions: map[string]any{"z": 1, "a": []int{1}}},
		{Data: []byte(`{"a":1}`), Errors: gqlerror.List{}, Extensions: map[string]any{}, Path: ast.Path{}},
	} {
		want, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		writeResponse(&got, resp)
		if !bytes.Equal(got.Bytes(), want) {
			t.Errorf("writeResponse(%+v) = %s, want %s", resp, got.Bytes(), want)
		}
	}
}
