package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/feedd/feedd/apierr"
	"github.com/feedd/feedd/auth"
	"github.com/feedd/feedd/reqinfo"
	"github.com/feedd/feedd/server/extension"
)

// corsAllowHeaders are the request headers a browser app may send: every
// header feedd reads. A header missing here fails the preflight of a web
// app on another origin that sends it.
var corsAllowHeaders = strings.Join([]string{"Content-Type", "Authorization", auth.DevHeader, RequestIDHeader, DeviceHeader}, ", ")

// corsExposeHeaders are the response headers a browser app may read.
var corsExposeHeaders = strings.Join([]string{"Retry-After", RequestIDHeader}, ", ")

// guard is the HTTP front of /query, before gqlgen:
//
//   - Browsers (requests with an Origin header) are served only from the
//     server's own origin and the configured ones. Any other origin is
//     refused with 403 FORBIDDEN before the body is read, so a page on
//     another site can never run a mutation. Allowed cross-origin requests
//     get Access-Control-Allow-Origin; preflights (OPTIONS with
//     Access-Control-Request-Method) are answered here, 204 for allowed
//     origins and 403 for the rest.
//   - A POST must be application/json. text/plain, form and multipart
//     bodies are what a cross-site HTML form can send without a preflight
//     (the classic CSRF vector), so they are refused with 415.
//   - A POST body over the limit is refused with 413.
//   - A POST body must pass checkRequest (one JSON object, valid UTF-8, no
//     member named twice, only the request members, nothing after it), and
//     a GET's parameters checkQueryString; else 400 BAD_USER_INPUT, with a
//     message that quotes nothing of the request (request.go).
//   - GET serves queries only: gqlgen's GET transport refuses mutations.
//
// Every refusal is a GraphQL response with extensions.code.
func guard(api APIConfig, next http.Handler) http.Handler {
	origins := map[string]bool{}
	anyOrigin := false
	for _, o := range api.CORSOrigins {
		o = normalizeOrigin(o)
		if o == "*" {
			anyOrigin = true
		} else if o != "" {
			origins[o] = true
		}
	}
	allowed := func(r *http.Request, origin string) bool {
		return anyOrigin || origins[normalizeOrigin(origin)] || sameOrigin(r, origin)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		// Answers differ by origin: caches must key on it.
		w.Header().Add("Vary", "Origin")
		if origin != "" {
			if !allowed(r, origin) {
				refuse(w, r, http.StatusForbidden, apierr.Forbidden,
					fmt.Sprintf("origin %q may not call this API (see --cors-origins)", origin))
				return
			}
			h := w.Header()
			h.Set("Access-Control-Allow-Origin", origin)
			if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
				h.Add("Vary", "Access-Control-Request-Method")
				h.Add("Vary", "Access-Control-Request-Headers")
				h.Set("Access-Control-Allow-Methods", "GET, POST, OPTIONS")
				h.Set("Access-Control-Allow-Headers", corsAllowHeaders)
				h.Set("Access-Control-Max-Age", "600")
				w.WriteHeader(http.StatusNoContent)
				return
			}
			h.Set("Access-Control-Expose-Headers", corsExposeHeaders)
		}
		if r.Method == http.MethodPost {
			mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if err != nil || mt != "application/json" {
				refuse(w, r, http.StatusUnsupportedMediaType, apierr.BadInput,
					"a POST body must be Content-Type: application/json")
				return
			}
			body, err := io.ReadAll(io.LimitReader(r.Body, api.MaxBodyBytes+1))
			var tooBig *http.MaxBytesError
			switch {
			case errors.As(err, &tooBig) || int64(len(body)) > api.MaxBodyBytes:
				refuse(w, r, http.StatusRequestEntityTooLarge, apierr.BadInput,
					fmt.Sprintf("request body exceeds %d bytes", api.MaxBodyBytes))
				return
			case err != nil:
				refuse(w, r, http.StatusBadRequest, apierr.BadInput, "could not read the request body")
				return
			}
			params, err := decodeRequest(body)
			if err != nil {
				refuse(w, r, http.StatusBadRequest, apierr.BadInput, err.Error())
				return
			}
			// POST takes params as they are, rather than decoding body again.
			r.Body = extension.Decoded(body, params)
		}
		if r.Method == http.MethodGet {
			if err := checkQueryString(r.URL.RawQuery); err != nil {
				refuse(w, r, http.StatusBadRequest, apierr.BadInput, err.Error())
				return
			}
		}
		next.ServeHTTP(&stateWriter{ResponseWriter: w, outcome: reqinfo.OutcomeOf(r.Context())}, r)
	})
}

// sameOrigin reports whether origin names the host the request came to
// (the scheme is not compared: TLS usually ends at a proxy).
func sameOrigin(r *http.Request, origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	return strings.EqualFold(u.Host, r.Host)
}

// normalizeOrigin lowercases an origin and drops a trailing slash, so
// configured and sent origins compare equal.
func normalizeOrigin(o string) string {
	return strings.TrimSuffix(strings.ToLower(strings.TrimSpace(o)), "/")
}

// refuse answers r with a GraphQL error response, and reports its code.
func refuse(w http.ResponseWriter, r *http.Request, status int, code apierr.Code, msg string) {
	reqinfo.OutcomeOf(r.Context()).AddCode(string(code))
	body, _ := json.Marshal(map[string]any{"errors": gqlerror.List{extension.CodedError(code, "%s", msg)}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
