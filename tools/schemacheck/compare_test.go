package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

func mustLoad(t *testing.T, sdl string) *ast.Schema {
	t.Helper()
	s, err := gqlparser.LoadSchema(&ast.Source{Name: t.Name(), Input: sdl})
	if err != nil {
		t.Fatalf("load %q: %v", sdl, err)
	}
	return s
}

// summary renders changes as "SEVERITY path" lines, comparable in tables.
func summary(cs []Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Severity.String() + " " + c.Path
	}
	return out
}

func TestCompare(t *testing.T) {
	const base = "type Query { a: Int }\n"
	for _, c := range []struct {
		name     string
		old, new string
		want     []string
	}{
		{"identical", `type T { f: Int }`, `type T { f: Int }`, nil},
		{"descriptions and order do not matter",
			`type T { f: Int g: String }`, `"doc" type T { "g" g: String f: Int }`, nil},

		// Types.
		{"type removed", `type T { f: Int }`, ``, []string{"BREAKING T"}},
		{"type added", ``, `type T { f: Int }`, []string{"safe T"}},
		{"kind changed", `type T { f: Int }`, `interface T { f: Int }`, []string{"BREAKING T"}},
		{"scalar removed", `scalar DateTime`, ``, []string{"BREAKING DateTime"}},

		// Output fields.
		{"field removed", `type T { f: Int g: Int }`, `type T { f: Int }`, []string{"BREAKING T.g"}},
		{"field added", `type T { f: Int }`, `type T { f: Int g: Int }`, []string{"safe T.g"}},
		{"output made nullable", `type T { f: Int! }`, `type T { f: Int }`, []string{"BREAKING T.f"}},
		{"output made non-null", `type T { f: Int }`, `type T { f: Int! }`, []string{"safe T.f"}},
		{"list element made nullable", `type T { f: [Int!]! }`, `type T { f: [Int]! }`, []string{"BREAKING T.f"}},
		{"list element made non-null", `type T { f: [Int] }`, `type T { f: [Int!] }`, []string{"safe T.f"}},
		{"output named type changed", `type T { f: Int }`, `type T { f: String }`, []string{"BREAKING T.f"}},
		{"output made a list", `type T { f: Int }`, `type T { f: [Int] }`, []string{"BREAKING T.f"}},
		{"interface output narrowed to an implementation",
			`interface N { id: ID! } type P implements N { id: ID! } type T { f: N }`,
			`interface N { id: ID! } type P implements N { id: ID! } type T { f: P }`,
			[]string{"safe T.f"}},
		{"object output widened to an interface",
			`interface N { id: ID! } type P implements N { id: ID! } type T { f: P }`,
			`interface N { id: ID! } type P implements N { id: ID! } type T { f: N }`,
			[]string{"BREAKING T.f"}},
		{"field deprecated", `type T { f: Int }`, `type T { f: Int @deprecated(reason: "use g") }`, []string{"safe T.f"}},

		// Arguments.
		{"argument removed", `type T { f(x: Int): Int }`, `type T { f: Int }`, []string{"BREAKING T.f(x:)"}},
		{"optional argument added", `type T { f: Int }`, `type T { f(x: Int): Int }`, []string{"safe T.f(x:)"}},
		{"required argument added", `type T { f: Int }`, `type T { f(x: Int!): Int }`, []string{"BREAKING T.f(x:)"}},
		{"non-null argument with a default added", `type T { f: Int }`, `type T { f(x: Int! = 1): Int }`, []string{"safe T.f(x:)"}},
		{"argument made non-null", `type T { f(x: Int): Int }`, `type T { f(x: Int!): Int }`, []string{"BREAKING T.f(x:)"}},
		{"argument made nullable", `type T { f(x: Int!): Int }`, `type T { f(x: Int): Int }`, []string{"safe T.f(x:)"}},
		{"argument type changed", `type T { f(x: Int): Int }`, `type T { f(x: String): Int }`, []string{"BREAKING T.f(x:)"}},
		{"argument made a list", `type T { f(x: Int): Int }`, `type T { f(x: [Int]): Int }`, []string{"BREAKING T.f(x:)"}},
		{"argument list element made non-null", `type T { f(x: [Int]): Int }`, `type T { f(x: [Int!]): Int }`, []string{"BREAKING T.f(x:)"}},
		{"argument default changed", `type T { f(x: Int = 1): Int }`, `type T { f(x: Int = 2): Int }`, []string{"DANGEROUS T.f(x:)"}},
		{"default removed from a non-null argument", `type T { f(x: Int! = 1): Int }`, `type T { f(x: Int!): Int }`, []string{"BREAKING T.f(x:)"}},
		{"query argument removed", `extend type Query { z(first: Int): Int }`, `extend type Query { z: Int }`, []string{"BREAKING Query.z(first:)"}},

		// Input objects.
		{"input field removed", `input I { a: Int b: Int }`, `input I { a: Int }`, []string{"BREAKING I.b"}},
		{"optional input field added", `input I { a: Int }`, `input I { a: Int b: String }`, []string{"safe I.b"}},
		{"required input field added", `input I { a: Int }`, `input I { a: Int b: String! }`, []string{"BREAKING I.b"}},
		{"input field made non-null", `input I { a: Int }`, `input I { a: Int! }`, []string{"BREAKING I.a"}},
		{"input field made nullable", `input I { a: Int! }`, `input I { a: Int }`, []string{"safe I.a"}},
		{"input became oneOf", `input I { a: Int b: Int }`, `input I @oneOf { a: Int b: Int }`, []string{"BREAKING I"}},

		// Enums.
		{"enum value removed", `enum E { A B }`, `enum E { A }`, []string{"BREAKING E.B"}},
		{"enum value added", `enum E { A }`, `enum E { A B }`, []string{"DANGEROUS E.B"}},
		{"enum value deprecated", `enum E { A B }`, `enum E { A B @deprecated }`, []string{"safe E.B"}},

		// Interfaces and unions.
		{"interface dropped",
			`interface N { id: ID! } type P implements N { id: ID! }`,
			`interface N { id: ID! } type P { id: ID! }`,
			[]string{"BREAKING P"}},
		{"interface added",
			`interface N { id: ID! } type P { id: ID! }`,
			`interface N { id: ID! } type P implements N { id: ID! }`,
			[]string{"safe P"}},
		{"union member removed", `type A { a: Int } type B { b: Int } union U = A | B`, `type A { a: Int } type B { b: Int } union U = A`, []string{"BREAKING U"}},
		{"union member added", `type A { a: Int } type B { b: Int } union U = A`, `type A { a: Int } type B { b: Int } union U = A | B`, []string{"DANGEROUS U"}},

		// Roots and directives.
		{"mutation root removed", `type Mutation { m: Int }`, ``, []string{"BREAKING Mutation", "BREAKING schema"}},
		{"mutation root added", ``, `type Mutation { m: Int }`, []string{"safe Mutation", "safe schema"}},
		{"directive removed", `directive @d on FIELD`, ``, []string{"BREAKING @d"}},
		{"directive location removed", `directive @d on FIELD | FRAGMENT_SPREAD`, `directive @d on FIELD`, []string{"BREAKING @d"}},
		{"directive required argument added", `directive @d on FIELD`, `directive @d(x: Int!) on FIELD`, []string{"BREAKING @d(x:)"}},
		{"directive added", ``, `directive @d on FIELD`, []string{"safe @d"}},

		// Several at once: breaking first, then by path.
		{"mixed",
			`type T { f: Int g: Int! } enum E { A B }`,
			`type T { f: Int h: Int g: Int } enum E { A C }`,
			[]string{"BREAKING E.B", "BREAKING T.g", "DANGEROUS E.C", "safe T.h"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Compare(mustLoad(t, base+c.old), mustLoad(t, base+c.new))
			if !slices.Equal(summary(got), c.want) {
				t.Errorf("changes:\n%s\nwant %q", changeLines(got), c.want)
			}
			if HasBreaking(got) != slices.ContainsFunc(c.want, func(s string) bool { return strings.HasPrefix(s, "BREAKING") }) {
				t.Errorf("HasBreaking = %v", HasBreaking(got))
			}
			for _, ch := range got {
				if ch.Message == "" {
					t.Errorf("%s: no message", ch.Path)
				}
			}
		})
	}
}

func changeLines(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		b.WriteString("  " + c.String() + "\n")
	}
	return b.String()
}

// TestMessages spot-checks that messages say what happened.
func TestMessages(t *testing.T) {
	got := Compare(
		mustLoad(t, `type Query { a(x: Int): Int! }`),
		mustLoad(t, `type Query { a(x: Int!): Int }`))
	want := []string{
		"BREAKING  Query.a: type changed from Int! to Int (non-null output made nullable)",
		"BREAKING  Query.a(x:): type changed from Int to Int! (nullable input made non-null)",
	}
	if s := changeLines(got); s != "  "+strings.Join(want, "\n  ")+"\n" {
		t.Errorf("got\n%s", s)
	}
}

// TestLockIsCurrent: the committed lock loads and matches the committed
// schema, or differs from it only in ways that break no client.
func TestLockIsCurrent(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := run([]string{"-schema", "../../schema.graphqls", "-lock", "../../schema.lock.graphqls"}, &out, &errOut); code != 0 {
		t.Fatalf("schemacheck exit %d:\n%s%s", code, out.String(), errOut.String())
	}
}

// TestRun exercises the command: exit codes, the escape hatch, -update.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	schema, lock := filepath.Join(dir, "s.graphqls"), filepath.Join(dir, "lock.graphqls")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	check := func(want int, args ...string) string {
		t.Helper()
		var out, errOut bytes.Buffer
		if code := run(append([]string{"-schema", schema, "-lock", lock}, args...), &out, &errOut); code != want {
			t.Fatalf("%v: exit %d, want %d\n%s%s", args, code, want, out.String(), errOut.String())
		}
		return out.String() + errOut.String()
	}
	write(schema, `type Query { a: Int, b: Int }`)
	check(2)            // no lock yet
	check(0, "-update") // creates it
	if out := check(0, "-q"); out != "" {
		t.Errorf("-q with no changes printed %q", out)
	}

	write(schema, `type Query { a: Int, b: Int, c: Int }`)
	if out := check(0); !strings.Contains(out, "Query.c: field added") {
		t.Errorf("addition not reported: %q", out)
	}
	if out := check(0, "-q"); out != "" {
		t.Errorf("-q with only additions printed %q", out)
	}

	write(schema, `type Query { a: Int }`)
	if out := check(1, "-q"); !strings.Contains(out, "BREAKING  Query.b: field removed") {
		t.Errorf("breaking change not reported: %q", out)
	}
	t.Setenv(AllowEnv, "1")
	if out := check(0); !strings.Contains(out, "allowed by "+AllowEnv) {
		t.Errorf("allowed breaking change: %q", out)
	}
	t.Setenv(AllowEnv, "")
	check(0, "-update")
	check(0)
	if b, _ := os.ReadFile(lock); !strings.HasPrefix(string(b), lockHeader) || !strings.HasSuffix(string(b), `type Query { a: Int }`) {
		t.Errorf("lock after -update: %q", b)
	}

	write(schema, `type Query { a: Nope }`)
	check(2)
}
