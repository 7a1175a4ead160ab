package main

import (
	"fmt"
	"io"
	"os"
	"time"
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

// progress is a line on a terminal that a long command rewrites as it
// goes, at most once a second. A nil *progress (not a terminal) shows
// nothing.
type progress struct {
	w    io.Writer
	last time.Time
}

// newProgress returns a progress line on w, nil when w is not a terminal.
func newProgress(w io.Writer) *progress {
	if !isTerminal(w) {
		return nil
	}
	return &progress{w: w}
}

// due reports whether a second has passed since the line was last shown.
func (p *progress) due() bool { return time.Since(p.last) >= time.Second }

// show rewrites the line.
func (p *progress) show(format string, args ...any) {
	p.last = time.Now()
	fmt.Fprintf(p.w, "\r\033[K"+format, args...)
}

// done clears the line, before the command prints its result.
func (p *progress) done() {
	if p != nil {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
