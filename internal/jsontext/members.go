package jsontext

import (
	"bytes"
	"encoding/json"
	"io"
)

// Refusals are the errors Members returns for text that is not one JSON
// object: each caller words them for its own readers.
type Refusals struct {
	// NotObject: the text does not start with an object.
	NotObject error
	// Malformed: the object is not well-formed JSON.
	Malformed error
	// Trailing: something other than white space follows the object.
	Trailing error
}

// Members reads b, which must hold one JSON object and nothing after it
// but white space, and calls member with each member's name, in order,
// and the decoder at the member's value, which member must read (Token,
// Decode). Numbers decode as json.Number. It returns member's first error,
// or one of r's.
func (r Refusals) Members(b []byte, member func(name string, dec *json.Decoder) error) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return r.NotObject
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return r.Malformed
		}
		name, _ := t.(string)
		if err := member(name, dec); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return r.Malformed
	}
	if _, err := dec.Token(); err != io.EOF {
		return r.Trailing
	}
	return nil
}
