// Package persisted is the allow-list of the typed client's operations,
// persisted.json: the SHA-256 (hex) of each operation's document in
// ../operations -> the document, as go run ./tools/persisted writes it.
// `feedd serve --persisted-only client/persisted/persisted.json` runs only
// these; the server learns the client's operation names from JSON (metric
// labels) without importing the generated client.
package persisted

import _ "embed"

// JSON is persisted.json.
//
//go:embed persisted.json
var JSON []byte
