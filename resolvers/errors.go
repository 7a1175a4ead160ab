package resolvers

import (
	"fmt"

	"github.com/feedd/feedd/feedcore"
)

// fail returns a client-facing error; its message is shown as is.
func fail(code feedcore.Code, format string, args ...any) error {
	return &feedcore.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
