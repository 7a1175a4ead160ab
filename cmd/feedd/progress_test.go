package main

import (
	"bytes"
	"testing"
)

// TestProgress: off the terminal there is no progress line; on it, the
// line is rewritten in place, at most once a second, and cleared at the
// end.
func TestProgress(t *testing.T) {
	var buf bytes.Buffer
	if p := newProgress(&buf); p != nil {
		t.Fatal("a progress line into a buffer")
	}
	var off *progress
	off.done() // nothing to clear, nothing written
	p := &progress{w: &buf}
	if !p.due() {
		t.Fatal("a new line is not due")
	}
	p.show("%d lines", 7)
	if p.due() {
		t.Error("due again right after it was shown")
	}
	p.done()
	if got, want := buf.String(), "\r\033[K7 lines\r\033[K"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}
