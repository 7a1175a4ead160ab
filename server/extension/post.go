package extension

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/gqltype/inline"
)

// POST is gqlgen's POST transport (transport.POST, whose behaviour it
// keeps: the request's parsing, the response's content type by Accept,
// and the status codes of errors) but for how it writes a response.
// gqlgen writes every response with json.Marshal, which validates and
// compacts the executor's data, already compact JSON, all over again: 8%
// of feedd's CPU under a mixed load. POST splices the data into the
// response as the executor wrote it and marshals only the rest (errors,
// the cost extension), so the bytes are json.Marshal's either way.
type POST struct{}

var _ graphql.Transport = POST{}

// Supports is transport.POST's: a POST of application/json, no upgrade.
func (POST) Supports(r *http.Request) bool { return transport.POST{}.Supports(r) }

const (
	contentJSON            = "application/json"
	contentGraphQLResponse = "application/graphql-response+json"
)

func (POST) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	ctx := r.Context()
	contentType := responseContentType(r)
	w.Header().Set("Content-Type", contentType)
	start := graphql.Now()
	params, ok := decodedParams(r.Body)
	if !ok {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			writeResponse(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("could not read request body: %+v", err)}))
			return
		}
		params = &graphql.RawParams{}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(params); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			writeResponse(w, exec.DispatchError(ctx, gqlerror.List{gqlerror.Errorf("json request body could not be decoded: %+v body:%s", err, body)}))
			return
		}
	}
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	rc, opErr := exec.CreateOperationContext(ctx, params)
	if opErr != nil {
		w.WriteHeader(statusFor(contentType, opErr))
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, rc), opErr))
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, rc)
	resp := responses(ctx)
	writeResponse(w, resp)
	// Nothing holds the data once written (the writers in front copy
	// it), and the executor marshalled it into inline's pool.
	inline.Release(resp.Data)
}

// Decoded is a request body that the HTTP layer in front has already read
// and decoded into params (the server's strict check does both in one
// pass): POST takes the params instead of decoding body again. Any other
// reader of the request (the SSE transport) still reads body.
func Decoded(body []byte, params *graphql.RawParams) io.ReadCloser {
	return &decodedBody{Reader: bytes.NewReader(body), params: params}
}

type decodedBody struct {
	*bytes.Reader
	params *graphql.RawParams
}

func (*decodedBody) Close() error { return nil }

// decodedParams are the params of a Decoded body not read yet.
func decodedParams(body io.Reader) (*graphql.RawParams, bool) {
	d, ok := body.(*decodedBody)
	if !ok || d.params == nil || d.Len() != int(d.Size()) {
		return nil, false
	}
	return d.params, true
}

// responseContentType is the content type of the response, by the
// request's Accept, as transport.POST chooses it (by default, without
// UseGrapQLResponseJsonByDefault).
func responseContentType(r *http.Request) string {
	accept := r.Header.Get("Accept")
	if accept == "" {
		return contentJSON
	}
	for part := range strings.SplitSeq(accept, ",") {
		mediaType, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mediaType {
		case "*/*", "application/*", contentJSON:
			return contentJSON
		case contentGraphQLResponse:
			return contentGraphQLResponse
		}
	}
	return contentGraphQLResponse
}

// statusFor is the status of a request refused before it ran, as
// transport.POST sets it: a protocol error is 422 in application/json and
// 400 in application/graphql-response+json; a validation error is 200.
func statusFor(contentType string, errs gqlerror.List) int {
	if errcode.GetErrorKind(errs) != errcode.KindProtocol {
		return http.StatusOK
	}
	if contentType == contentGraphQLResponse {
		return http.StatusBadRequest
	}
	return http.StatusUnprocessableEntity
}

// writeResponse writes resp as json.Marshal would, in the order of
// graphql.Response's fields, each but the data marshalled alone and the
// data copied in as the executor wrote it, with json.HTMLEscape's
// escapes, which json.Marshal applies too (<, >, &, U+2028, U+2029):
// the bytes never differ. A response without data is marshalled whole.
func writeResponse(w io.Writer, resp *graphql.Response) {
	if len(resp.Data) == 0 {
		_, _ = w.Write(mustMarshal(resp))
		return
	}
	buf := inline.Buffer(len(resp.Data) + 256)
	defer func() { inline.Release(buf.Bytes()) }()
	buf.WriteByte('{')
	if len(resp.Errors) > 0 {
		field(buf, `"errors":`, resp.Errors)
		buf.WriteByte(',')
	}
	buf.WriteString(`"data":`)
	json.HTMLEscape(buf, resp.Data)
	if resp.Label != "" {
		field(buf, `,"label":`, resp.Label)
	}
	if len(resp.Path) > 0 {
		field(buf, `,"path":`, resp.Path)
	}
	if resp.HasNext != nil {
		field(buf, `,"hasNext":`, resp.HasNext)
	}
	if len(resp.Extensions) > 0 {
		buf.WriteString(`,"extensions":`)
		writeExtensions(buf, resp.Extensions)
	}
	buf.WriteByte('}')
	_, _ = w.Write(buf.Bytes())
}

// writeExtensions writes ext as json.Marshal would (keys sorted), the cost
// report (costReport) without reflection.
func writeExtensions(buf *bytes.Buffer, ext map[string]any) {
	keys := make([]string, 0, len(ext))
	for k := range ext {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeKey(buf, k)
		if c, ok := ext[k].(costReport); ok {
			buf.Write(c.appendJSON(buf.AvailableBuffer()))
		} else {
			buf.Write(mustMarshal(ext[k]))
		}
	}
	buf.WriteByte('}')
}

// writeKey writes a member name and its colon: as it is when it needs no
// escape (the names feedd's extensions use), else marshalled.
func writeKey(buf *bytes.Buffer, k string) {
	plain := k != ""
	for i := 0; i < len(k) && plain; i++ {
		c := k[i]
		plain = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
	}
	if !plain {
		buf.Write(mustMarshal(k))
		buf.WriteByte(':')
		return
	}
	buf.WriteByte('"')
	buf.WriteString(k)
	buf.WriteString(`":`)
}

// field writes name and v, marshalled.
func field(buf *bytes.Buffer, name string, v any) {
	buf.WriteString(name)
	buf.Write(mustMarshal(v))
}

// mustMarshal is json.Marshal of what the executor made; it panics, as
// transport.POST does, when that fails to marshal.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
