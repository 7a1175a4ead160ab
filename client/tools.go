//go:build tools

package client

// The genqlient generator is run with `go run github.com/Khan/genqlient`;
// this import keeps its main package and dependencies in go.mod and go.sum
// through `go mod tidy`.
import _ "github.com/Khan/genqlient"
