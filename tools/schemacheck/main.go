// Command schemacheck compares feedd's GraphQL schema (schema.graphqls, the
// source of truth) with the last released one (schema.lock.graphqls) and
// reports what changed for clients: breaking changes (a removed type,
// field, argument or enum value, an incompatible type change, a new
// required argument or input field, a nullable input made non-null, a
// non-null output made nullable), dangerous ones (a new enum value or union
// member, a changed default) and safe additions.
//
// It exits 1 when a change is breaking, unless FEED_ALLOW_BREAKING=1 is
// set (for a deliberate major release); 2 when a schema does not load.
// With -update it rewrites the lock from the schema (after a release).
//
//	go run ./tools/schemacheck            # report; fail on breaking changes
//	go run ./tools/schemacheck -q         # print only breaking changes
//	go run ./tools/schemacheck -update    # record the schema as released
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// AllowEnv, set to 1, lets breaking changes pass.
const AllowEnv = "FEED_ALLOW_BREAKING"

// lockHeader starts the lock file; the schema follows verbatim.
const lockHeader = `# The last released GraphQL schema: the baseline that tools/schemacheck
# compares schema.graphqls against to find breaking changes. Do not edit;
# after a release run: go run ./tools/schemacheck -update

`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("schemacheck", flag.ContinueOnError)
	fs.SetOutput(stderr)
	schemaPath := fs.String("schema", "schema.graphqls", "the current schema (source of truth)")
	lockPath := fs.String("lock", "schema.lock.graphqls", "the last released schema")
	update := fs.Bool("update", false, "rewrite the lock from the current schema")
	quiet := fs.Bool("q", false, "print nothing unless a change is breaking")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "schemacheck: unexpected arguments %q\n", fs.Args())
		return 2
	}

	src, err := os.ReadFile(*schemaPath)
	if err != nil {
		fmt.Fprintf(stderr, "schemacheck: %v\n", err)
		return 2
	}
	cur, err := load(*schemaPath, src)
	if err != nil {
		fmt.Fprintf(stderr, "schemacheck: %v\n", err)
		return 2
	}
	lockSrc, err := os.ReadFile(*lockPath)
	if err != nil && !(*update && os.IsNotExist(err)) {
		fmt.Fprintf(stderr, "schemacheck: %v (create it with -update)\n", err)
		return 2
	}

	var changes []Change
	if lockSrc != nil {
		released, err := load(*lockPath, lockSrc)
		if err != nil {
			fmt.Fprintf(stderr, "schemacheck: %v\n", err)
			return 2
		}
		changes = Compare(released, cur)
	}
	breaking := HasBreaking(changes)
	if !*quiet || breaking {
		for _, c := range changes {
			fmt.Fprintln(stdout, c)
		}
	}

	if *update {
		want := append([]byte(lockHeader), src...)
		if bytes.Equal(want, lockSrc) {
			return 0
		}
		if err := os.WriteFile(*lockPath, want, 0o644); err != nil {
			fmt.Fprintf(stderr, "schemacheck: %v\n", err)
			return 2
		}
		fmt.Fprintf(stdout, "%s updated from %s\n", *lockPath, *schemaPath)
		return 0
	}
	if !breaking {
		if !*quiet && len(changes) > 0 {
			fmt.Fprintf(stdout, "%d change(s) since %s, none breaking\n", len(changes), *lockPath)
		}
		return 0
	}
	if os.Getenv(AllowEnv) == "1" {
		fmt.Fprintf(stdout, "breaking changes against %s allowed by %s=1\n", *lockPath, AllowEnv)
		return 0
	}
	fmt.Fprintf(stderr, "schemacheck: %s breaks clients of the released schema %s.\n"+
		"Make the change additive (add a field, deprecate the old one), or release a\n"+
		"breaking version deliberately: %s=1, then go run ./tools/schemacheck -update\n",
		*schemaPath, *lockPath, AllowEnv)
	return 1
}

func load(name string, src []byte) (*ast.Schema, error) {
	s, err := gqlparser.LoadSchema(&ast.Source{Name: name, Input: string(src)})
	if err != nil {
		return nil, fmt.Errorf("load %s: %w", name, err)
	}
	return s, nil
}
