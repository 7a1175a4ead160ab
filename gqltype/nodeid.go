// Package gqltype holds the Go side of the schema's own types, the ones
// gqlgen.yml binds: the Node interface with its opaque global ids, and the
// DateTime scalar. Package gqltype/view holds what a response shows of
// each node.
//
// Global ids are base64url, without padding, of "<Type>:<decimal id>".
// Clients must treat them as opaque; the encoding exists so that
// Query.node can tell a post from a user without a lookup.
package gqltype

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Type names the GraphQL type a global id refers to.
type Type string

// The types that have global ids.
const (
	Post        Type = "Post"
	User        Type = "User"
	LiveSession Type = "LiveSession"
)

// KeywordFilter is a viewer's keyword filter: node(id:) finds it for its
// owner only.
const KeywordFilter Type = "KeywordFilter"

// Node is what Query.node returns: a post's, user's or live session's
// view (package view) or a *feedcore.KeywordFilter. gqlgen binds the
// GraphQL interface Node to it; it is empty because the generated code
// picks the concrete type with a type switch.
type Node interface{}

// ErrMalformed is wrapped by every Decode error.
var ErrMalformed = errors.New("malformed global id")

// Encode returns the global id of the object of type t with database id id.
func Encode(t Type, id uint64) string {
	return base64.RawURLEncoding.EncodeToString([]byte(string(t) + ":" + strconv.FormatUint(id, 10)))
}

// Decode splits a global id into its type and database id. It checks the
// shape only (a known type and a positive id), not that the object exists.
func Decode(raw string) (Type, uint64, error) {
	b, err := base64.RawURLEncoding.DecodeString(raw)
	if err != nil {
		return "", 0, fmt.Errorf("%w %q", ErrMalformed, raw)
	}
	name, num, ok := strings.Cut(string(b), ":")
	t := Type(name)
	if !ok || (t != Post && t != User && t != LiveSession && t != KeywordFilter) {
		return "", 0, fmt.Errorf("%w %q", ErrMalformed, raw)
	}
	// ParseUint accepts no sign and no spaces, so each id has one encoding.
	id, err := strconv.ParseUint(num, 10, 64)
	if err != nil || id == 0 || strconv.FormatUint(id, 10) != num {
		return "", 0, fmt.Errorf("%w %q", ErrMalformed, raw)
	}
	// base64 decoding ignores the unused low bits of the last character,
	// so "VXNlcjoxMDG" decodes like "VXNlcjoxMDE" (User:101): only the
	// canonical spelling is an id, so that one object has one id (caches,
	// dedup, allow-lists keyed by id).
	if Encode(t, id) != raw {
		return "", 0, fmt.Errorf("%w %q", ErrMalformed, raw)
	}
	return t, id, nil
}

// DecodeAs decodes raw and checks it names an object of type want. A plain
// positive decimal number is accepted too, as the database id of a want,
// for clients that only hold a databaseId.
func DecodeAs(raw string, want Type) (uint64, error) {
	if id, err := strconv.ParseUint(raw, 10, 64); err == nil && id > 0 {
		if strconv.FormatUint(id, 10) != raw { // "0101" is not 101
			return 0, fmt.Errorf("%w %q", ErrMalformed, raw)
		}
		return id, nil
	}
	t, id, err := Decode(raw)
	if err != nil {
		return 0, err
	}
	if t != want {
		return 0, fmt.Errorf("%w: %q is the id of a %s, want a %s", ErrMalformed, raw, t, want)
	}
	return id, nil
}
