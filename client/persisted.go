package client

import "github.com/feedd/feedd/client/persisted"

// PersistedJSON is persisted/persisted.json: sha256 hex -> text of every
// operation in operations/, as go run ./tools/persisted writes it. It is
// persisted.JSON, which the server reads without importing this package.
var PersistedJSON = persisted.JSON
