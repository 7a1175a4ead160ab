package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/url"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"

	"github.com/feedd/feedd/internal/jsontext"
)

// Strict request decoding. encoding/json, which gqlgen decodes requests
// with, takes the last of two equal keys, matches member names without
// case, ignores what follows the first value when streaming, and turns
// invalid UTF-8 and lone surrogate escapes into U+FFFD. A request that
// depends on any of these means one thing to a proxy or WAF in front and
// another to feedd, or smuggles bytes past the content rules, so it is
// refused before gqlgen sees it. The errors never quote the body.

// Refusals of checkRequest and checkJSON, worded for the client.
var (
	errBodyNotUTF8    = errors.New("the request body is not valid UTF-8")
	errBodySurrogate  = errors.New(`the request body has a \u escape of a lone UTF-16 surrogate`)
	errBodyNotObject  = errors.New(`the request body must be one JSON object: {"query": ..., "operationName": ..., "variables": {...}, "extensions": {...}}`)
	errBodyMember     = errors.New(`the request object may hold only "query", "operationName", "variables" and "extensions" (names are case-sensitive)`)
	errBodyType       = errors.New(`in the request object "query" and "operationName" must be strings, "variables" and "extensions" objects`)
	errBodyDuplicate  = errors.New("a JSON object in the request names a member twice")
	errBodyTrailing   = errors.New("the request body has data after the JSON object")
	errBodyMalformed  = errors.New("the request body is not well-formed JSON")
	errParamRepeated  = errors.New(`the query string may give "query", "operationName", "variables" and "extensions" at most once each`)
	errParamMalformed = errors.New("the query string is malformed")
)

// bodyRefusals word jsontext's refusals of a body that is not one object.
var bodyRefusals = jsontext.Refusals{NotObject: errBodyNotObject, Malformed: errBodyMalformed, Trailing: errBodyTrailing}

// requestMembers are the members of a GraphQL-over-HTTP request object,
// the strings first, then those that hold a JSON object (firstObject on).
var requestMembers = [...]string{"query", "operationName", "variables", "extensions"}

const firstObject = 2

// checkRequest checks a POST body: valid UTF-8 with no lone surrogate
// escape, exactly one JSON object with no member named twice at any depth,
// only the four request members, spelled exactly, of their types (null
// allowed), and nothing after it but whitespace.
func checkRequest(body []byte) error {
	_, err := decodeRequest(body)
	return err
}

// decodeRequest checks body as checkRequest does and, in the same pass,
// decodes it into the request's parameters: the values gqlgen's POST
// transport would decode (encoding/json with UseNumber: strings,
// json.Number, bools, nil, map[string]any and []any), so that the
// transport need not read the body a second time (extension.Decoded).
func decodeRequest(body []byte) (*graphql.RawParams, error) {
	if err := checkText(body); err != nil {
		return nil, err
	}
	p := &graphql.RawParams{}
	var seen [4]bool // by requestMember's index
	err := bodyRefusals.Members(body, func(k string, dec *json.Decoder) error {
		i, isObject, known := requestMember(k)
		switch {
		case known && seen[i]:
			return errBodyDuplicate
		case !known:
			return errBodyMember
		}
		seen[i] = true
		t, err := dec.Token()
		if err != nil {
			return errBodyMalformed
		}
		switch {
		case t == nil: // null: absent
			return nil
		case isObject && t == json.Delim('{'):
			v, err := walkNested(dec, '{')
			if err != nil {
				return err
			}
			if requestMembers[i] == "variables" {
				p.Variables = v.(map[string]any)
			} else {
				p.Extensions = v.(map[string]any)
			}
			return nil
		case !isObject:
			if s, ok := t.(string); ok {
				if requestMembers[i] == "query" {
					p.Query = s
				} else {
					p.OperationName = s
				}
				return nil
			}
		}
		return errBodyType
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// requestMember is the index in requestMembers of the request member
// named k and whether it holds a JSON object (else a string); known is
// false for any other name.
func requestMember(k string) (i int, isObject, known bool) {
	for i, name := range requestMembers {
		if name == k {
			return i, i >= firstObject, true
		}
	}
	return 0, false, false
}

// checkJSON checks one JSON value given as text (a GET request's variables
// or extensions): valid UTF-8, well formed, no member named twice, nothing
// after it.
func checkJSON(s string) error {
	b := []byte(s)
	if err := checkText(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if _, err := walkValue(dec); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errBodyTrailing
	}
	return nil
}

// checkQueryString checks a GET request's parameters: each request
// parameter at most once, valid UTF-8, and variables and extensions
// strict JSON.
func checkQueryString(raw string) error {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return errParamMalformed
	}
	for i, name := range requestMembers {
		vs := q[name]
		if len(vs) > 1 {
			return errParamRepeated
		}
		if len(vs) == 0 {
			continue
		}
		if !utf8.ValidString(vs[0]) {
			return errBodyNotUTF8
		}
		if i >= firstObject && vs[0] != "" {
			if err := checkJSON(vs[0]); err != nil {
				return err
			}
		}
	}
	return nil
}

// walkValue reads one value, refusing a member named twice in any object
// in it, and returns it as encoding/json's Decode (with UseNumber) into an
// any would.
func walkValue(dec *json.Decoder) (any, error) {
	t, err := dec.Token()
	if err != nil {
		return nil, errBodyMalformed
	}
	if d, ok := t.(json.Delim); ok {
		return walkNested(dec, d)
	}
	return t, nil
}

// walkNested reads the rest of an object or array whose opening d was just
// read, refusing a member named twice in any object in it, and returns it
// as a map[string]any or a []any (never nil, as encoding/json's).
func walkNested(dec *json.Decoder, d json.Delim) (any, error) {
	var (
		obj map[string]any // an object's members
		arr = []any{}
	)
	if d == '{' {
		obj, arr = map[string]any{}, nil
	}
	for dec.More() {
		var k string
		if obj != nil {
			t, err := dec.Token()
			if err != nil {
				return nil, errBodyMalformed
			}
			k, _ = t.(string)
			if _, ok := obj[k]; ok {
				return nil, errBodyDuplicate
			}
		}
		v, err := walkValue(dec)
		if err != nil {
			return nil, err
		}
		if obj != nil {
			obj[k] = v
		} else {
			arr = append(arr, v)
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace or bracket
		return nil, errBodyMalformed
	}
	if obj != nil {
		return obj, nil
	}
	return arr, nil
}

// checkText refuses invalid UTF-8 and \u escapes of lone surrogates, both
// of which encoding/json would silently decode to U+FFFD.
func checkText(b []byte) error {
	if !utf8.Valid(b) {
		return errBodyNotUTF8
	}
	if jsontext.LoneSurrogate(b) {
		return errBodySurrogate
	}
	return nil
}
