package server

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

// FuzzDecodeRequest: decodeRequest, which checks a body and decodes it in
// one pass, refuses exactly what the check alone (checkTokens, the walk it
// replaced) refused, with the same refusal, and what it accepts it decodes
// to the very params gqlgen's POST transport would (encoding/json with
// UseNumber). Seeds: FuzzCheckRequest's corpus and the cases below.
func FuzzDecodeRequest(f *testing.F) {
	for _, s := range []string{
		`{"query":"{ viewer { handle } }","variables":{"a":[1,{"b":null}],"c":[],"d":{},"e":1.5e3,"f":true}}`,
		`{"query":"a","query":"b"}`,
		`{"query":null,"operationName":"x","variables":null,"extensions":{"persistedQuery":{"version":1,"sha256Hash":"ab"}}}`,
		`{"query":"\u00e9\n\"","variables":{"\u0061":1,"a":2}}`,
		`{"Query":"x"}`, `{"query":1}`, `{"variables":[]}`, `{"query":"x"} {}`, `{"query":"x"`, ``, `[]`,
		`{"variables":{"a":-0,"b":[[[]]],"c":"\ud83d\ude00"}}`,
	} {
		f.Add([]byte(s))
	}
	seeds, _ := filepath.Glob("testdata/fuzz/FuzzCheckRequest/*")
	for _, name := range seeds {
		if b, err := os.ReadFile(name); err == nil {
			if body, ok := corpusBytes(b); ok {
				f.Add(body)
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := decodeRequest(body)
		if want := checkTokens(body); err != want {
			t.Fatalf("refusal %v, the check alone: %v", err, want)
		}
		if err != nil {
			if p != nil {
				t.Fatalf("refused with params %+v", p)
			}
			return
		}
		want := &graphql.RawParams{}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(want); err != nil {
			t.Fatalf("accepted a body gqlgen cannot decode: %v", err)
		}
		if !reflect.DeepEqual(p, want) {
			t.Fatalf("decoded %#v, gqlgen decodes %#v", p, want)
		}
	})
}

// corpusBytes is the []byte value of a go test fuzz v1 corpus file.
func corpusBytes(b []byte) ([]byte, bool) {
	lines := strings.SplitN(string(b), "\n", 2)
	if len(lines) < 2 || lines[0] != "go test fuzz v1" {
		return nil, false
	}
	v := strings.TrimSpace(lines[1])
	if !strings.HasPrefix(v, "[]byte(") || !strings.HasSuffix(v, ")") {
		return nil, false
	}
	s, err := strconv.Unquote(strings.TrimSuffix(strings.TrimPrefix(v, "[]byte("), ")"))
	return []byte(s), err == nil
}

// checkTokens is checkRequest as it was before it decoded: the check
// alone, for FuzzDecodeRequest to compare with.
func checkTokens(body []byte) error {
	if err := checkText(body); err != nil {
		return err
	}
	seen := map[string]bool{}
	return bodyRefusals.Members(body, func(k string, dec *json.Decoder) error {
		_, isObject, known := requestMember(k)
		switch {
		case seen[k]:
			return errBodyDuplicate
		case !known:
			return errBodyMember
		}
		seen[k] = true
		t, err := dec.Token()
		if err != nil {
			return errBodyMalformed
		}
		switch {
		case t == nil:
			return nil
		case isObject && t == json.Delim('{'):
			return walkOnly(dec, '{')
		case !isObject:
			if _, ok := t.(string); ok {
				return nil
			}
		}
		return errBodyType
	})
}

func walkOnly(dec *json.Decoder, d json.Delim) error {
	var seen map[string]bool
	if d == '{' {
		seen = map[string]bool{}
	}
	for dec.More() {
		if seen != nil {
			t, err := dec.Token()
			if err != nil {
				return errBodyMalformed
			}
			k, _ := t.(string)
			if seen[k] {
				return errBodyDuplicate
			}
			seen[k] = true
		}
		t, err := dec.Token()
		if err != nil {
			return errBodyMalformed
		}
		if d, ok := t.(json.Delim); ok {
			if err := walkOnly(dec, d); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return errBodyMalformed
	}
	return nil
}
