package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestHelpAndVersion: --help lists the subcommands; version says which
// build this is.
func TestHelpAndVersion(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "help"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{arg}, cmdOptions{stdout: &out}); err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		for _, cmd := range []string{"serve", "worker", "import", "export", "token", "version"} {
			if !strings.Contains(out.String(), "feedd "+cmd) && !strings.Contains(out.String(), "feedd ["+cmd+"]") {
				t.Errorf("%s does not list %s:\n%s", arg, cmd, out.String())
			}
		}
	}
	var out bytes.Buffer
	if err := run(context.Background(), []string{"version"}, cmdOptions{stdout: &out}); err != nil || !strings.HasPrefix(out.String(), "feedd ") {
		t.Fatalf("version: %q, %v", out.String(), err)
	}
}

// TestDocsListEveryFlag compares the flag table of docs/operations.md
// (Configuration; it was the README's) with the flags every subcommand
// defines, both ways.
func TestDocsListEveryFlag(t *testing.T) {
	var sets []*flag.FlagSet
	o := cmdOptions{stdout: io.Discard, flagSetMade: func(fs *flag.FlagSet) {
		fs.SetOutput(io.Discard)
		sets = append(sets, fs)
	}}
	for name := range commands {
		if err := run(context.Background(), []string{name, "-h"}, o); !errors.Is(err, flag.ErrHelp) {
			t.Fatalf("%s -h: %v", name, err)
		}
	}
	defined := map[string]bool{}
	for _, fs := range sets {
		fs.VisitAll(func(f *flag.Flag) { defined[f.Name] = true })
	}
	readme, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	// A row's first cell names one or more flags: "`--a` / `--b`".
	listed := map[string]bool{}
	for _, row := range regexp.MustCompile("(?m)^\\| (`--[^|]*)\\|").FindAllStringSubmatch(string(readme), -1) {
		for _, m := range regexp.MustCompile("`--([a-z0-9-]+)`").FindAllStringSubmatch(row[1], -1) {
			listed[m[1]] = true
		}
	}
	var missing, stale []string
	for f := range defined {
		if !listed[f] {
			missing = append(missing, f)
		}
	}
	for f := range listed {
		if !defined[f] {
			stale = append(stale, f)
		}
	}
	slices.Sort(missing)
	slices.Sort(stale)
	if len(missing) > 0 || len(stale) > 0 {
		t.Fatalf("docs/operations.md flag table: missing %v, listed but not defined %v", missing, stale)
	}
}
