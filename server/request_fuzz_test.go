package server

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

var requestErrors = []error{errBodyNotUTF8, errBodySurrogate, errBodyNotObject, errBodyMember,
	errBodyType, errBodyDuplicate, errBodyTrailing, errBodyMalformed}

// FuzzCheckRequest: no body panics checkRequest; a refusal is one of the
// fixed messages (nothing of the body in it); an accepted body is valid
// UTF-8, one JSON value, an object of request members that gqlgen decodes
// without error, with no \ufffd that the body did not spell out. Seeds are
// in testdata/fuzz/FuzzCheckRequest.
func FuzzCheckRequest(f *testing.F) {
	f.Add([]byte(`{"query":"{ viewer { handle } }","variables":{"a":[1,{"b":null}]}}`))
	f.Add([]byte(`{"query":"a","query":"b"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		err := checkRequest(body)
		if err != nil {
			for _, known := range requestErrors {
				if errors.Is(err, known) {
					return
				}
			}
			t.Fatalf("unexpected refusal %v", err)
		}
		if !utf8.Valid(body) || !json.Valid(body) {
			t.Fatalf("accepted %q", body)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("accepted a non-object %q", body)
		}
		for k := range m {
			if _, _, ok := requestMember(k); !ok {
				t.Fatalf("accepted member %q", k)
			}
		}
		var p struct {
			Query         string         `json:"query"`
			OperationName string         `json:"operationName"`
			Variables     map[string]any `json:"variables"`
			Extensions    map[string]any `json:"extensions"`
		}
		if err := json.Unmarshal(body, &p); err != nil {
			t.Fatalf("accepted %q that gqlgen cannot decode: %v", body, err)
		}
		// No replacement character that the body did not contain as such
		// or as an escape.
		if strings.Contains(p.Query, "\ufffd") && !strings.Contains(string(body), "\ufffd") && !strings.Contains(strings.ToLower(string(body)), `\ufffd`) {
			t.Fatalf("accepted %q: decoding made up U+FFFD", body)
		}
	})
}
