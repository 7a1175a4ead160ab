package server

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/feedd/feedd/auth"
)

// marker is in every hostile body below: a refusal must not echo it.
const marker = "ZQXmarker"

const publish = `mutation { publishPost(input: {text: \"` + marker + `\"}) { post { id } } }`

// TestStrictRequestDecoding: bodies that encoding/json would read one way
// and a proxy another are refused with 400 BAD_USER_INPUT, quoting nothing
// of the body, and run nothing.
func TestStrictRequestDecoding(t *testing.T) {
	e := newEnv(t)
	e.users("ann")
	big := `{"query":"` + strings.Repeat(marker, 100_000) + `` // 900 KB, never closed
	for _, tc := range []struct{ name, body, want string }{
		{"duplicate query", `{"query":"` + publish + `","query":"{ viewer { handle } }"}`, "twice"},
		{"query in another case", `{"query":"{ viewer { handle } }","QUERY":"` + publish + `"}`, "case-sensitive"},
		{"Query only", `{"Query":"` + publish + `"}`, "case-sensitive"},
		{"unknown member", `{"query":"` + publish + `","` + marker + `":1}`, "only"},
		{"duplicate variable", `{"query":"mutation($t: String!) { publishPost(input: {text: $t}) { post { id } } }","variables":{"t":"` + marker + `","t":"b"}}`, "twice"},
		{"duplicate nested", `{"query":"` + publish + `","extensions":{"a":{"b":1,"b":2}}}`, "twice"},
		{"duplicate operationName", `{"query":"` + publish + `","operationName":null,"operationName":"x"}`, "twice"},
		{"trailing object", `{"query":"` + publish + `"} {"query":"` + marker + `"}`, "after"},
		{"trailing garbage", `{"query":"` + publish + `"}` + marker, "after"},
		{"array", `[{"query":"` + publish + `"}]`, "one JSON object"},
		{"query a number", `{"query":1,"variables":{"m":"` + marker + `"}}`, "must be strings"},
		{"variables a string", `{"query":"` + publish + `","variables":"` + marker + `"}`, "objects"},
		{"variables an array", `{"query":"` + publish + `","variables":["` + marker + `"]}`, "objects"},
		{"invalid UTF-8", "{\"query\":\"mutation { publishPost(input: {text: \\\"a\xff" + marker + "\\\"}) { post { id } } }\"}", "UTF-8"},
		{"overlong UTF-8", "{\"query\":\"\xc0\xaf" + marker + "\"}", "UTF-8"},
		{"lone high surrogate", `{"query":"mutation { publishPost(input: {text: \"\ud800` + marker + `\"}) { post { id } } }"}`, "surrogate"},
		{"lone low surrogate", `{"query":"` + publish + `","variables":{"x":"\udc00"}}`, "surrogate"},
		{"unterminated", big, "well-formed"},
		{"empty", ``, "one JSON object"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/query", strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(auth.DevHeader, "1")
			res, err := e.srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusBadRequest || !bytes.Contains(raw, []byte(`"code":"BAD_USER_INPUT"`)) {
				t.Fatalf("status %d, body %.300s", res.StatusCode, raw)
			}
			if !bytes.Contains(raw, []byte(tc.want)) {
				t.Errorf("body %s, want it to mention %q", raw, tc.want)
			}
			if bytes.Contains(raw, []byte(marker)) || len(raw) > 1000 {
				t.Errorf("the refusal echoes the body: %.300s", raw)
			}
		})
	}
	var feed struct {
		FollowingFeed struct{ Edges []any } `json:"followingFeed"`
	}
	e.do(1, `{ followingFeed(first: 10) { edges { cursor } } }`, nil).as(t, &feed)
	if n := len(feed.FollowingFeed.Edges); n != 0 {
		t.Fatalf("a refused request published %d posts", n)
	}

	// What strictness still lets through.
	for name, body := range map[string]string{
		"nulls":                 `{"query":"{ viewer { handle } }","operationName":null,"variables":null,"extensions":null}`,
		"surrogate pair":        `{"query":"{ viewer { handle } } # \ud83d\ude00","variables":{}}`,
		"whitespace after":      "{\"query\":\"{ viewer { handle } }\"}\n\r\n ",
		"same key, two objects": `{"query":"{ viewer { handle } }","extensions":{"a":{"k":1},"b":{"k":1}}}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/query", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if r := e.sendAs(req, "1"); len(r.Errors) > 0 || r.Status != http.StatusOK {
			t.Errorf("%s: status %d, errors %+v", name, r.Status, r.Errors)
		}
	}
}

func (e *env) sendAs(req *http.Request, viewer string) *gqlResponse {
	e.t.Helper()
	req.Header.Set(auth.DevHeader, viewer)
	return e.send(req)
}

// TestStrictQueryString: a GET's parameters get the same rules.
func TestStrictQueryString(t *testing.T) {
	e := newEnv(t)
	e.users("ann")
	for name, q := range map[string]string{
		"query twice":        "query=" + url.QueryEscape("{ viewer { handle } }") + "&query=" + url.QueryEscape("{ viewer { id } }"),
		"duplicate variable": "query=" + url.QueryEscape("{ viewer { handle } }") + "&variables=" + url.QueryEscape(`{"a":1,"a":2}`),
		"trailing variables": "query=" + url.QueryEscape("{ viewer { handle } }") + "&variables=" + url.QueryEscape(`{} {}`),
		"invalid UTF-8":      "query=%7B%20viewer%20%7B%20handle%20%7D%20%7D%20%23%FF",
		"lone surrogate":     "query=" + url.QueryEscape("{ viewer { handle } }") + "&extensions=" + url.QueryEscape(`{"a":"\ud800"}`),
		"bad escape":         "query=%zz" + marker,
	} {
		req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/query?"+q, nil)
		r := e.sendAs(req, "1")
		if r.Status != http.StatusBadRequest || r.code() != "BAD_USER_INPUT" {
			t.Errorf("%s: status %d, errors %+v", name, r.Status, r.Errors)
		}
		for _, ge := range r.Errors {
			if strings.Contains(ge.Message, marker) {
				t.Errorf("%s: echoes the request: %q", name, ge.Message)
			}
		}
	}
}
