package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// progress writes a status line to w: rewritten in place at most once a
// second on a terminal, a new line every 5 seconds elsewhere (logs, CI).
type progress struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	last  time.Time
	shown bool
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

// update shows line() if the last line is old enough.
func (p *progress) update(line func() string) {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	every := 5 * time.Second
	if p.tty {
		every = time.Second
	}
	if now := time.Now(); now.Sub(p.last) >= every {
		p.last = now
		if p.tty {
			fmt.Fprintf(p.w, "\r\033[K%s", line())
			p.shown = true
		} else {
			fmt.Fprintln(p.w, line())
		}
	}
}

// done clears a terminal's status line.
func (p *progress) done() {
	if p == nil || p.w == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
	p.last = time.Time{}
}
