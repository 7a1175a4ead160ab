// Command persisted writes the allow-list of the clients' operations for
// `feedd serve --persisted-only FILE`: a JSON object mapping the SHA-256
// (hex) of each operation's document to the document.
//
// It reads the schema and client/operations/*.graphql and builds each
// operation's document exactly as genqlient does for the typed Go client
// (the operation, then the fragments it uses, __typename added on
// interface fields, gqlparser's formatter), so the text the Go client
// sends, and so its hash, is in the list. Run from the repository root:
//
//	go run ./tools/persisted            # writes client/persisted/persisted.json
//	go run ./tools/persisted -check     # fails when the file is stale
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
)

func main() {
	schema := flag.String("schema", "schema.graphqls", "the schema")
	ops := flag.String("operations", "client/operations/*.graphql", "the clients' operation files (a glob)")
	out := flag.String("o", "client/persisted/persisted.json", "where to write the list")
	check := flag.Bool("check", false, "do not write; fail if the file differs from what would be written")
	flag.Parse()
	if err := run(*schema, *ops, *out, *check); err != nil {
		fmt.Fprintln(os.Stderr, "persisted:", err)
		os.Exit(1)
	}
}

func run(schemaFile, opsGlob, out string, check bool) error {
	docs, err := Documents(schemaFile, opsGlob)
	if err != nil {
		return err
	}
	body, err := Encode(docs)
	if err != nil {
		return err
	}
	if check {
		old, err := os.ReadFile(out)
		if err != nil {
			return err
		}
		if !bytes.Equal(old, body) {
			return fmt.Errorf("%s is stale: run go run ./tools/persisted", out)
		}
		return nil
	}
	return os.WriteFile(out, body, 0o644)
}

// Encode is the file: hash -> document, keys sorted, indented.
func Encode(docs map[string]string) ([]byte, error) {
	m := make(map[string]string, len(docs))
	for _, d := range docs {
		h := sha256.Sum256([]byte(d))
		m[hex.EncodeToString(h[:])] = d
	}
	b, err := json.MarshalIndent(m, "", "  ") // encoding/json sorts keys
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// parseFile reads file and parses it with parse as a source named by its
// path, which gqlparser's errors then name.
func parseFile[T any](file string, parse func(*ast.Source) (T, error)) (T, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		var zero T
		return zero, err
	}
	return parse(&ast.Source{Name: file, Input: string(b)})
}

// Documents returns each operation's document by operation name.
func Documents(schemaFile, opsGlob string) (map[string]string, error) {
	schema, err := parseFile(schemaFile, func(s *ast.Source) (*ast.Schema, error) { return gqlparser.LoadSchema(s) })
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(opsGlob)
	if err != nil {
		return nil, err
	}
	sort.Strings(files)
	if len(files) == 0 {
		return nil, fmt.Errorf("no files match %s", opsGlob)
	}
	all := &ast.QueryDocument{}
	for _, f := range files {
		d, err := parseFile(f, parser.ParseQuery)
		if err != nil {
			return nil, err
		}
		all.Operations = append(all.Operations, d.Operations...)
		all.Fragments = append(all.Fragments, d.Fragments...)
	}
	if errs := validator.ValidateWithRules(schema, all, nil); len(errs) > 0 {
		return nil, errs
	}
	docs := map[string]string{}
	for _, op := range all.Operations {
		if op.Name == "" {
			return nil, fmt.Errorf("%s: operations must be named", op.Position.Src.Name)
		}
		doc := &ast.QueryDocument{Operations: ast.OperationList{op}, Fragments: usedFragments(schema, all, op)}
		addTypename(schema, doc)
		var b strings.Builder
		formatter.NewFormatter(&b).FormatQueryDocument(doc)
		docs[op.Name] = "\n" + b.String()
	}
	return docs, nil
}

// usedFragments are the fragments op spreads, directly or not, in the
// order genqlient lists them.
func usedFragments(schema *ast.Schema, all *ast.QueryDocument, op *ast.OperationDefinition) ast.FragmentDefinitionList {
	var used, queue ast.FragmentDefinitionList
	seen := map[string]bool{}
	var ev validator.Events
	ev.OnFragmentSpread(func(_ *validator.Walker, s *ast.FragmentSpread) {
		if seen[s.Name] {
			return
		}
		seen[s.Name] = true
		def := all.Fragments.ForName(s.Name)
		used = append(used, def)
		queue = append(queue, def)
	})
	validator.Walk(schema, &ast.QueryDocument{Operations: ast.OperationList{op}}, &ev)
	for len(queue) > 0 {
		validator.Walk(schema, &ast.QueryDocument{Fragments: ast.FragmentDefinitionList{queue[0]}}, &ev)
		queue = queue[1:]
	}
	return used
}

// addTypename selects __typename first on every field of interface or
// union type that does not select it, as genqlient does.
func addTypename(schema *ast.Schema, doc *ast.QueryDocument) {
	var ev validator.Events
	ev.OnField(func(_ *validator.Walker, f *ast.Field) {
		if f.Definition == nil || f.SelectionSet == nil {
			return
		}
		t := schema.Types[f.Definition.Type.Name()]
		if t == nil || (t.Kind != ast.Interface && t.Kind != ast.Union) {
			return
		}
		for _, s := range f.SelectionSet {
			if sf, ok := s.(*ast.Field); ok && sf.Name == "__typename" {
				return
			}
		}
		f.SelectionSet = append(ast.SelectionSet{&ast.Field{
			Alias: "__typename", Name: "__typename",
			Definition:       &ast.FieldDefinition{Name: "__typename", Type: ast.NamedType("String", nil)},
			ObjectDefinition: t,
		}}, f.SelectionSet...)
	})
	validator.Walk(schema, doc, &ev)
}
