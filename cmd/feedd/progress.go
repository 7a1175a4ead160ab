package main

import (
	"io"
	"os"
)

// isTerminal reports whether w is a terminal, where a progress line that
// rewrites itself helps; into a file or a pipe it would be noise.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
