package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"
)

// Kind is what an Item reports.
type Kind int

const (
	// Test is a failing test: "--- FAIL: TestX (0.01s)".
	Test Kind = iota
	// Package is go test's closing line for a package that failed:
	// "FAIL<tab>pkg<tab>0.1s", "FAIL<tab>pkg [build failed]".
	Package
	// Panic is a panic or fatal error, a test binary's timeout included.
	Panic
	// Race is a data race report.
	Race
	// Build is a block of compiler or vet errors: "# pkg" and what follows.
	Build
	// Killed is the go command killing a test binary that ran too long.
	Killed
)

// Item is one thing that failed: the line that names it and the lines of
// output that belong to it.
type Item struct {
	Kind Kind
	Head string
	Body []string
}

const (
	// maxBody is how many lines of an item's body Write shows.
	maxBody = 15
	// maxDetailed is how many items Write shows with their bodies; the
	// rest get their head line only.
	maxDetailed = 20
	// maxFrames is how many of a panic's stack frames outside the standard
	// library are kept.
	maxFrames = 3
	// maxLine is how many bytes of a line are shown.
	maxLine = 300
	// tailLines is how many last lines of a log Parse keeps.
	tailLines = 15
	// packageLines is how many last lines of a failed package's output are
	// shown when nothing else in it explains the failure (os.Exit in a
	// test, log.Fatal, a failing TestMain).
	packageLines = 10
)

// openTest is a "--- FAIL" item whose indented output may still follow.
type openTest struct {
	item   *Item
	indent int
}

// parser holds the state of Parse between lines.
type parser struct {
	items []*Item

	// open is the stack of failing tests, outermost first, whose output
	// (indented deeper than their "--- FAIL" line) is being read.
	open []openTest

	// block is the panic, race or build report being read (nil if none).
	// For a panic: panicDump is set once its message is read and its
	// goroutine dump has begun; goroutine is the dump's current goroutine;
	// frames counts the frames kept, keepLocation says the next line is
	// the file and line of one, and goroutineDone is set when the
	// goroutine that gave them ends.
	block         *Item
	panicDump     bool
	goroutine     string
	frames        int
	keepLocation  bool
	goroutineDone bool

	// current is the test named by the last "=== RUN/CONT/NAME" line (-v
	// output) and byTest the lines printed under each test's name, until
	// its "--- FAIL" line claims them.
	current string
	byTest  map[string][]string

	// pkgLines is the output of the package being read; pkgItems is set
	// when an item explains its failure.
	pkgLines []string
	pkgItems bool

	tail []string
}

// Parse reads a go test log and returns what failed in it, in the order
// of the log, and the log's last lines.
func Parse(r io.Reader) ([]*Item, []string, error) {
	p := &parser{byTest: map[string][]string{}}
	br := bufio.NewReader(r)
	for {
		line, err := br.ReadString('\n')
		if line != "" {
			p.line(strings.TrimRight(line, "\r\n"))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return p.items, p.tail, err
		}
	}
	return p.items, p.tail, nil
}

func (p *parser) add(it *Item) *Item {
	p.items = append(p.items, it)
	p.pkgItems = true
	return it
}

func (p *parser) line(l string) {
	p.tail = append(p.tail, l)
	if len(p.tail) > tailLines {
		p.tail = p.tail[1:]
	}
	if p.block != nil && p.inBlock(l) {
		return
	}
	p.block = nil

	trimmed := strings.TrimLeft(l, " \t")
	indent := len(l) - len(trimmed)

	switch {
	case isStatus(l):
		p.closeTests(0)
		if strings.HasPrefix(l, "FAIL\t") {
			it := &Item{Kind: Package, Head: l}
			if !p.pkgItems {
				// Nothing said why: show what the package printed last.
				it.Body = lastLines(p.pkgLines, packageLines)
			}
			p.add(it)
		}
		p.pkgLines, p.pkgItems = nil, false
		p.current = ""
		clear(p.byTest)
		return
	case l == "FAIL", l == "PASS", strings.HasPrefix(l, "exit status "):
		p.closeTests(0)
		return
	case strings.HasPrefix(l, "=== "):
		p.closeTests(0)
		p.current = ""
		if f := strings.Fields(l); len(f) >= 3 {
			p.current = f[2]
		}
		return
	case strings.HasPrefix(trimmed, "--- "):
		p.closeTests(indent)
		p.current = ""
		if name, ok := strings.CutPrefix(trimmed, "--- FAIL: "); ok {
			name, _, _ = strings.Cut(name, " (")
			it := p.add(&Item{Kind: Test, Head: trimmed, Body: p.byTest[name]})
			delete(p.byTest, name)
			p.open = append(p.open, openTest{it, indent})
		}
		return
	case strings.HasPrefix(l, "panic: "), strings.HasPrefix(l, "fatal error: "):
		p.closeTests(0)
		p.block = p.add(&Item{Kind: Panic, Head: l})
		p.panicDump, p.goroutine, p.frames, p.keepLocation, p.goroutineDone = false, "", 0, false, false
		return
	case l == "WARNING: DATA RACE":
		p.closeTests(0)
		p.block = p.add(&Item{Kind: Race, Head: l})
		return
	case strings.HasPrefix(l, "# "):
		p.closeTests(0)
		p.block = p.add(&Item{Kind: Build, Head: l})
		return
	case strings.HasPrefix(l, "*** Test killed"):
		p.closeTests(0)
		p.add(&Item{Kind: Killed, Head: l})
		return
	case l == "==================":
		// The rules around a race report.
		return
	}

	p.pkgLines = append(p.pkgLines, l)
	if l == "" {
		p.closeTests(0)
		return
	}
	// A failing test's own output is indented deeper than its "--- FAIL".
	p.closeTests(indent)
	if n := len(p.open); n > 0 {
		top := p.open[n-1]
		top.item.Body = append(top.item.Body, l[top.indent:])
		return
	}
	if p.current != "" {
		p.byTest[p.current] = append(p.byTest[p.current], l)
	}
}

// closeTests ends the output of the open failing tests whose "--- FAIL"
// line is indented as much as indent or more.
func (p *parser) closeTests(indent int) {
	for len(p.open) > 0 && p.open[len(p.open)-1].indent >= indent {
		p.open = p.open[:len(p.open)-1]
	}
}

// inBlock adds l to the block being read and reports true, or reports
// false if l ends it.
func (p *parser) inBlock(l string) bool {
	b := p.block
	if isStatus(l) || l == "FAIL" || l == "PASS" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
		return false
	}
	switch b.Kind {
	case Race:
		if l == "==================" {
			return false
		}
		b.Body = append(b.Body, l)
	case Build:
		// Compiler and vet errors name a file and indent their
		// continuation lines; a vet block has a second "# [pkg]" head;
		// the go command's own errors start with a few words. Anything
		// else is the output of another package, printed right after.
		switch {
		case strings.HasPrefix(l, "# ") && len(b.Body) == 0,
			strings.Contains(l, ".go:"),
			strings.HasPrefix(l, "\t"), strings.HasPrefix(l, " "),
			hasAnyPrefix(l, "package ", "pattern ", "import cycle", "go: ", "no required module", "cannot find", "too many errors"):
			b.Body = append(b.Body, l)
		default:
			return false
		}
	case Panic:
		p.panicLine(l)
	}
	return true
}

// panicLine reads a line of a panic: its message (up to a blank line; a
// test timeout lists the running tests there), then, from the goroutine
// dump, the first goroutine with frames outside the standard library and
// up to maxFrames of those frames.
func (p *parser) panicLine(l string) {
	b := p.block
	if p.keepLocation && strings.HasPrefix(l, "\t") {
		b.Body = append(b.Body, l)
	}
	p.keepLocation = false
	if !p.panicDump {
		if l == "" {
			p.panicDump = true
			return
		}
		b.Body = append(b.Body, l)
		return
	}
	switch {
	case p.goroutineDone || p.frames >= maxFrames, strings.HasPrefix(l, "\t"):
	case l == "":
		if p.frames > 0 {
			p.goroutineDone = true
		}
		p.goroutine = ""
	case strings.HasPrefix(l, "goroutine "):
		p.goroutine = l
	case !strings.HasPrefix(l, "created by ") && outsideStd(l):
		if p.frames == 0 {
			b.Body = append(b.Body, p.goroutine)
		}
		b.Body = append(b.Body, l)
		p.frames++
		p.keepLocation = true
	}
}

// isStatus says whether l is go test's closing line for a package.
func isStatus(l string) bool {
	return strings.HasPrefix(l, "ok  \t") || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "?   \t")
}

// outsideStd says whether a goroutine dump's function line is in a package
// outside the standard library (its import path starts with a domain).
func outsideStd(l string) bool {
	first, _, ok := strings.Cut(l, "/")
	return ok && strings.Contains(first, ".") && !strings.ContainsAny(first, " \t(")
}

func hasAnyPrefix(l string, prefixes ...string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

func lastLines(ls []string, n int) []string {
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return ls
}

// clip shortens a line to maxLine bytes.
func clip(l string) string {
	if len(l) <= maxLine {
		return l
	}
	return l[:maxLine] + "…"
}

// Write prints items: each head line and up to maxBody lines of its body
// indented under it (for a test, its first and last lines; for the
// others, their first lines). Only the first maxDetailed items that have
// a body get it.
func Write(w io.Writer, items []*Item) {
	detailed := 0
	for _, it := range items {
		fmt.Fprintln(w, clip(it.Head))
		if len(it.Body) == 0 {
			continue
		}
		if detailed++; detailed > maxDetailed {
			continue
		}
		// go test indents a test's output already.
		indent := func(l string) string {
			if l == "" || it.Kind == Test && (l[0] == ' ' || l[0] == '\t') {
				return l
			}
			return "    " + l
		}
		body, hidden := it.Body, 0
		if len(body) > maxBody {
			hidden = len(body) - maxBody
		}
		first := len(body) - hidden
		if hidden > 0 && it.Kind == Test {
			// What a test printed last is often its failure.
			first = maxBody * 2 / 3
		}
		for _, l := range body[:first] {
			fmt.Fprintln(w, clip(indent(l)))
		}
		if hidden > 0 {
			fmt.Fprintf(w, "    ... (%d lines not shown)\n", hidden)
		}
		for _, l := range body[first+hidden:] {
			fmt.Fprintln(w, clip(indent(l)))
		}
	}
	if detailed > maxDetailed {
		fmt.Fprintf(w, "(the output of %d of the items above is not shown)\n", detailed-maxDetailed)
	}
}
