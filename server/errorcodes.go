package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/reqinfo"
)

// ensureErrorCodes fills in extensions.code on error responses that gqlgen's
// transports write without going through the error presenter (a GET with
// undecodable variables, a mutation over GET, an unsupported method). Only
// responses with status 400 or more are buffered and inspected; successful
// responses stream through untouched. The codes it fills in are decided
// here, so it reports them to the request's Outcome.
func ensureErrorCodes(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cw := &codeWriter{ResponseWriter: w, outcome: reqinfo.OutcomeOf(r.Context())}
		next.ServeHTTP(cw, r)
		cw.finish()
	})
}

type codeWriter struct {
	http.ResponseWriter
	outcome *reqinfo.Outcome
	status  int
	buf     *bytes.Buffer // non-nil once an error status is seen
}

func (c *codeWriter) WriteHeader(status int) {
	if c.status != 0 {
		return
	}
	c.status = status
	if status >= 400 {
		c.buf = &bytes.Buffer{}
		return // written in finish, with the final length
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *codeWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.WriteHeader(http.StatusOK)
	}
	if c.buf != nil {
		return c.buf.Write(b)
	}
	return c.ResponseWriter.Write(b)
}

// Flush and FlushError keep streaming transports working through the
// wrapper (an error answer, being buffered, is not flushed), and Unwrap
// lets http.ResponseController and a WebSocket upgrade reach the
// connection (its deadlines, Hijack).
func (c *codeWriter) Flush() { _ = c.FlushError() }

func (c *codeWriter) FlushError() error {
	if c.buf != nil {
		return nil
	}
	return http.NewResponseController(c.ResponseWriter).Flush()
}

func (c *codeWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }

func (c *codeWriter) finish() {
	if c.buf == nil {
		return
	}
	body, added := addCodes(c.buf.Bytes(), c.status)
	for _, code := range added {
		c.outcome.AddCode(code)
	}
	h := c.ResponseWriter.Header()
	// A request that never executed has no data entry (the GraphQL spec),
	// and the GraphQL-over-HTTP spec answers it (a parse, validation or
	// variable error: 422 from gqlgen) with 200 to a client that asked for
	// application/json; application/graphql-response+json keeps the 4xx.
	body = dropNullData(body)
	if c.status == http.StatusUnprocessableEntity && !strings.HasPrefix(h.Get("Content-Type"), "application/graphql-response+json") {
		c.status = http.StatusOK
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	c.ResponseWriter.WriteHeader(c.status)
	_, _ = c.ResponseWriter.Write(body)
}

// addCodes sets a code on every error in a GraphQL response body that has
// none: BAD_USER_INPUT for 4xx, INTERNAL for 5xx. It returns the body and
// the codes it set. A body that is not a GraphQL response is returned
// unchanged.
func addCodes(body []byte, status int) ([]byte, []string) {
	var resp map[string]json.RawMessage
	if json.Unmarshal(body, &resp) != nil {
		return body, nil
	}
	var errs []map[string]any
	if json.Unmarshal(resp["errors"], &errs) != nil {
		return body, nil
	}
	var added []string
	code := apierr.BadInput
	if status >= 500 {
		code = apierr.Internal
	}
	for i, e := range errs {
		if e == nil {
			e = map[string]any{"message": "internal error"}
			errs[i] = e
		}
		ext, _ := e["extensions"].(map[string]any)
		if ext == nil {
			ext = map[string]any{}
			e["extensions"] = ext
		}
		if _, ok := ext["code"]; !ok {
			ext["code"] = string(code)
			added = append(added, string(code))
		}
	}
	raw, err := json.Marshal(errs)
	if err != nil {
		return body, nil
	}
	resp["errors"] = raw
	out, err := json.Marshal(resp)
	if err != nil {
		return body, nil
	}
	return out, added
}

// dropNullData removes a null data entry from a GraphQL response body.
func dropNullData(body []byte) []byte {
	var resp map[string]json.RawMessage
	if json.Unmarshal(body, &resp) != nil {
		return body
	}
	if d, ok := resp["data"]; !ok || string(d) != "null" {
		return body
	}
	delete(resp, "data")
	out, err := json.Marshal(resp)
	if err != nil {
		return body
	}
	return out
}
