// Command failsummary reads the logs of `go test` runs (go test's usual
// text output, verbose or not, stdout and stderr together) and prints what
// failed in them: each failing test with the first lines of its output,
// the packages that failed, panics and test timeouts, data races and build
// errors. .ci/run calls it when a run fails, so that the tail of the CI log
// says what broke.
//
//	failsummary [-failed LABEL] [LABEL=]LOG...
//
// LABEL names a log in the output (by default, its file name). A log in
// which nothing failed prints nothing. When the log labelled by -failed
// (the go test that exited non-zero) shows nothing recognisable as a
// failure, its last lines are printed instead.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("failsummary", flag.ContinueOnError)
	fs.SetOutput(stderr)
	failed := fs.String("failed", "", "the `label` of the log whose go test exited non-zero")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fmt.Fprintln(stderr, "usage: failsummary [-failed LABEL] [LABEL=]LOG...")
		return 2
	}
	status := 0
	for _, arg := range fs.Args() {
		label, path, ok := strings.Cut(arg, "=")
		if !ok {
			label, path = arg, arg
		}
		f, err := os.Open(path)
		if err != nil {
			fmt.Fprintln(stderr, "failsummary:", err)
			status = 1
			continue
		}
		items, tail, err := Parse(f)
		f.Close()
		if err != nil {
			fmt.Fprintf(stderr, "failsummary: %s: %v\n", path, err)
			status = 1
		}
		switch {
		case len(items) > 0:
			fmt.Fprintf(stdout, "-- %s\n", label)
			Write(stdout, items)
		case label == *failed:
			fmt.Fprintf(stdout, "-- %s: no failing test, panic or build error found; the log ends with:\n", label)
			for _, l := range tail {
				fmt.Fprintln(stdout, clip(l))
			}
		}
	}
	return status
}
