package resolvers

import (
	"fmt"

	"github.com/feedd/feedd/apierr"
)

// fail returns a client-facing error; its message is shown as is.
func fail(code apierr.Code, format string, args ...any) error {
	return &apierr.Error{Code: code, Message: fmt.Sprintf(format, args...)}
}
