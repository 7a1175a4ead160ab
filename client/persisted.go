package client

import _ "embed"

// PersistedJSON is persisted.json: sha256 hex -> text of every operation
// in operations/, as go run ./tools/persisted writes it. The server learns
// the names of the client's operations from it (metric labels).
//
//go:embed persisted.json
var PersistedJSON []byte
