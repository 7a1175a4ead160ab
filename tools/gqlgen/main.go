// Command gqlgen regenerates graph/ from schema.graphqls and gqlgen.yml,
// as `go run github.com/99designs/gqlgen generate` does, and then lets the
// executor do inline what needs none of gqlgen's general machinery
// (package gqltype/inline):
//
//	go run ./tools/gqlgen
//
// No configuration of gqlgen changes these, so after gqlgen has written
// graph/generated.go the command rewrites it in six places:
//
//   - Lists. gqlgen's template marshals every list of objects through
//     graphql.MarshalSliceConcurrently; every such call becomes a call of
//     inline.List with the list's selection, and graph/inline_gen.go
//     holds the set of fields gqlgen runs in goroutines of their own.
//   - Plain fields. A field bound to a struct field or to a method without
//     context or arguments (the views' fields) is marshalled straight
//     from its value, without the closures and middleware call
//     graphql.ResolveField spends on every field, and a leaf without a
//     field context too: half of a page's allocations went there. An
//     object keeps its field context, for its fields' paths. Nothing is
//     lost: a method that returns an error, or a nil object, is resolved
//     again through ResolveField (views' methods are pure), which reports
//     it as ever; a panic is recovered by the nearest field above; and
//     feedd registers no field middleware (server's use refuses one) that
//     would have seen the field.
//   - Objects. gqlgen's FieldSet writes an object's fields through an
//     iterator that allocates each field anew and a map of the aliases
//     written; each object's marshal makes its field set with newObject
//     instead (inline.Set: the set, its values and its writer in one
//     allocation, not three), which writes the same bytes without either.
//   - Deferred groups. Every object's marshal made a field set and a map
//     for its @defer group, and asked for its path to hand the group on,
//     even with nothing deferred; it does so once it defers a field.
//   - Collections. Every object's marshal collected its fields from its
//     selection anew for each request; it calls collectFields, which
//     keeps them across requests when the selection's directives name no
//     variable.
//   - Responses. A query's or a mutation's result was marshalled into a
//     bytes.Buffer of its own, grown from 64 bytes by doubling; it is
//     marshalled into a buffer of inline's pool, which the transport
//     hands back once it has written the response.
//
// Every set of fields and the rewrites come from gqlgen's own code model,
// read while it generated; the command fails when the template no longer
// emits the code it rewrites: regenerating then would silently lose the
// rewrite.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/99designs/gqlgen/api"
	"github.com/99designs/gqlgen/codegen"
	"github.com/99designs/gqlgen/codegen/config"
	"github.com/vektah/gqlparser/v2/ast"
)

func main() {
	log.SetFlags(0)
	if err := run(); err != nil {
		log.Fatalf("gqlgen: %v", err)
	}
}

func run() error {
	cfg, err := config.LoadConfigFromDefaultLocations()
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("no gqlgen.yml here or above: run from the repository: %w", err)
	}
	if err != nil {
		return fmt.Errorf("load gqlgen.yml: %w", err)
	}
	var m codeModel
	if err := api.Generate(cfg, api.AddPlugin(&m)); err != nil {
		return fmt.Errorf("generate: %w", err)
	}
	exec := cfg.Exec.Filename
	if err := rewrite(exec, m.plain); err != nil {
		return err
	}
	out := filepath.Join(filepath.Dir(exec), "inline_gen.go")
	return writeGo(out, m.concurrent.source(cfg.Exec.Package))
}

// codeModel is a gqlgen plugin that keeps, while gqlgen builds its code
// model, what the rewrites need of it.
type codeModel struct {
	concurrent concurrentFields
	// plain are the plain fields (see plainOf) by generated function
	// (_Type_field).
	plain map[string]plainField
}

// concurrentFields are the fields gqlgen runs concurrently (codegen's
// Field.IsConcurrent: a resolver, or a method taking a context), by type.
type concurrentFields map[string][]string

func (*codeModel) Name() string { return "inline" }

func (m *codeModel) GenerateCode(data *codegen.Data) error {
	m.concurrent, m.plain = concurrentFields{}, map[string]plainField{}
	for _, o := range data.Objects {
		for _, f := range o.Fields {
			if f.IsConcurrent() {
				m.concurrent[o.Name] = append(m.concurrent[o.Name], f.Name)
			}
			if p, ok := plainOf(f); ok && !strings.HasPrefix(o.Name, "__") { // introspection's are written otherwise
				m.plain["_"+o.Name+"_"+f.Name] = p
			}
		}
	}
	return nil
}

// plainField is a field the executor resolves without
// graphql.ResolveField when its value allows: a leaf or an object (see
// plainOf), read from a method that may fail or not.
type plainField struct{ object, fallible bool }

// plainOf reports whether f is plain: bound to a struct field or to a
// method taking no context, with no arguments and no directives, on an
// object that is not an operation's root, and not a list; and either a
// scalar or enum that is nullable or of a Go type that cannot be nil (its
// marshal then never reports an error, which would want the field's own
// path), or an object behind a pointer (marshalled with its field
// context, for its fields' paths, when the pointer is not nil).
func plainOf(f *codegen.Field) (plainField, bool) {
	ref := f.TypeReference
	bound := f.IsVariable() || (f.IsMethod() && !f.MethodHasContext && !f.VOkFunc)
	if !bound || f.IsResolver || f.IsReserved() || f.Object.Root || len(f.Args) > 0 || f.HasDirectives() || ref.GQL.Elem != nil {
		return plainField{}, false
	}
	p := plainField{object: !ref.Definition.IsLeafType(), fallible: f.IsMethod() && !f.NoErr}
	if p.object {
		return p, ref.Definition.Kind == ast.Object && ref.IsPtr()
	}
	return p, !ref.GQL.NonNull || !ref.IsNilable()
}

// source is graph/inline_gen.go: the fields as an inline.Fields, and the
// functions the rewritten code calls.
func (c concurrentFields) source(pkg string) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by tools/gqlgen. DO NOT EDIT.\n\npackage %s\n\n", pkg)
	b.WriteString("import (\n\t\"context\"\n\n\t\"github.com/99designs/gqlgen/graphql\"\n\t\"github.com/vektah/gqlparser/v2/ast\"\n\n\t\"github.com/feedd/feedd/gqltype/inline\"\n)\n\n")
	b.WriteString("// concurrentFields are the fields the executor resolves in goroutines of\n// their own: a list whose selection reaches none is marshalled inline.\nvar concurrentFields = inline.Fields{\n")
	types := make([]string, 0, len(c))
	for t := range c {
		types = append(types, t)
	}
	slices.Sort(types)
	for _, t := range types {
		names := slices.Sorted(slices.Values(c[t]))
		fmt.Fprintf(&b, "\t%q: {", t)
		for i, n := range names {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%q: true", n)
		}
		b.WriteString("},\n")
	}
	b.WriteString("}\n\n")
	b.WriteString("// marshalList is graphql.MarshalSliceConcurrently, inline when sel reaches\n// no concurrent field (see package inline).\n")
	b.WriteString("func marshalList(ctx context.Context, sel ast.SelectionSet, n int, workerLimit int64, omitPanicHandler bool, marshal func(context.Context, int) graphql.Marshaler) graphql.Array {\n")
	b.WriteString("\treturn inline.List(ctx, concurrentFields, sel, n, workerLimit, omitPanicHandler, marshal)\n}\n\n")
	b.WriteString("// newObject is the field set of an object selected with fields, written\n// as graphql.FieldSet writes it (see package inline).\n")
	b.WriteString("func newObject(fields []graphql.CollectedField) *inline.Set {\n")
	b.WriteString("\treturn inline.NewSet(fields)\n}\n\n")
	b.WriteString("// marshalResponse marshals an operation's result into a buffer the\n// transport hands back once written (see package inline).\n")
	b.WriteString("func marshalResponse(data graphql.Marshaler) []byte {\n\treturn inline.Response(data)\n}\n\n")
	b.WriteString("// collectFields is graphql.CollectFields, kept across requests where the\n// selection allows (see package inline).\n")
	b.WriteString("func collectFields(op *graphql.OperationContext, sel ast.SelectionSet, satisfies []string) []graphql.CollectedField {\n\treturn inline.CollectFields(op, sel, satisfies)\n}\n")
	return b.Bytes()
}

// concurrently is the call gqlgen's template (codegen/type.gotpl) emits
// for a list of objects; $1 and $2 its worker limit and panic handling.
var concurrently = regexp.MustCompile(`graphql\.MarshalSliceConcurrently\(ctx, len\(v\), (\d+), (true|false), func\(`)

// plainResolve is a plain field's function as codegen/field.gotpl writes
// it: $1 its name, $2 its object's type, $3 the value, $4 ", nil" unless
// the method returns an error too, $5 the marshal, $6 the ResolveField
// call.
var plainResolve = regexp.MustCompile(`(?m)^func \(ec \*executionContext\) (_\w+)\(ctx context\.Context, field graphql\.CollectedField, obj ([^)]+)\) \(ret graphql\.Marshaler\) \{
	(return graphql\.ResolveField\(
		ctx,
		ec\.OperationContext,
		field,
		func\(ctx context\.Context, field graphql\.CollectedField\) \(\*graphql\.FieldContext, error\) \{
			return ec\.fieldContext\w+\(ctx, field\)
		\},
		func\(ctx context\.Context\) \(any, error\) \{
			return (obj\.\w+(?:\(\))?)(, nil)?
		\},
		nil,
		func\(ctx context\.Context, selections ast\.SelectionSet, v [^)]+\) graphql\.Marshaler \{
			return ec\.(marshal[^(]+)\(ctx, selections, v\)
		\},
		true,
		(?:true|false),
	\))
\}`)

// objectEnd is how an object's marshal returns its field set
// (codegen/object.gotpl).
const objectEnd = "\n\treturn out\n}\n"

// deferGroup is the end of an object's marshal (codegen/object.gotpl):
// its deferred group handed on, asking for its path even when empty.
var deferGroup = regexp.MustCompile(`(?m)^\tatomic\.AddInt32\(&ec\.Deferred, int32\(min\(len\(deferLabelToView\), math\.MaxInt32\)\)\)\n\n\tec\.ProcessDeferredGroup\(graphql\.DeferredGroup\{\n(?:\t\t.*\n){4}\t\}\)\n`)

// rewrite applies the rewrites to the generated executor at path.
func rewrite(path string, plain map[string]plainField) error {
	src, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read the generated executor: %w", err)
	}
	for _, step := range []func([]byte) ([]byte, error){
		inlineLists,
		func(src []byte) ([]byte, error) { return rewritePlain(src, plain) },
		lazyDeferGroups,
		pooledResponses,
		keptCollections,
		writeObjects, // last: the steps before count objects by objectMade
	} {
		if src, err = step(src); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return writeGo(path, src)
}

// inlineLists points every list marshal at marshalList.
func inlineLists(src []byte) ([]byte, error) {
	if len(concurrently.FindAllIndex(src, -1)) == 0 {
		return nil, errors.New("no graphql.MarshalSliceConcurrently call as codegen/type.gotpl used to write: update tools/gqlgen's pattern to the new template")
	}
	out := concurrently.ReplaceAll(src, []byte("marshalList(ctx, sel, len(v), $1, $2, func("))
	if bytes.Contains(out, []byte("MarshalSliceConcurrently")) {
		return nil, errors.New("graphql.MarshalSliceConcurrently still called in a form tools/gqlgen does not know: update its pattern")
	}
	return out, nil
}

// objectMade is how an object's marshal makes its field set.
const objectMade = "out := graphql.NewFieldSet(fields)"

// writeObjects makes every object's marshal make its field set with
// newObject, which writes it itself.
func writeObjects(src []byte) ([]byte, error) {
	objects, ends := bytes.Count(src, []byte(objectMade)), bytes.Count(src, []byte(objectEnd))
	if objects == 0 || objects != ends {
		return nil, fmt.Errorf("%d objects' field sets built and %d returned in the form tools/gqlgen knows: update objectMade and objectEnd to codegen/object.gotpl", objects, ends)
	}
	src = bytes.ReplaceAll(src, []byte(objectMade), []byte("out := newObject(fields)"))
	// A concurrent field's resolver is handed the set itself.
	return bytes.ReplaceAll(src, []byte("innerFunc(ctx, out)"), []byte("innerFunc(ctx, &out.FieldSet)")), nil
}

// deferMade is how an object's marshal makes its deferred group, and
// deferring how it defers a field (codegen/object.gotpl).
const (
	deferMade = "\tdeferredFieldSet := graphql.NewFieldSet(nil)\n\tdeferLabelToView := make(map[string]*graphql.FieldSetView)\n"
	deferring = "\t\t\tif field.IsDeferred() {\n"
)

// lazyDeferGroups makes each object's deferred group when it defers its
// first field, and hands the group on (asking for the object's path) only
// when it has one.
func lazyDeferGroups(src []byte) ([]byte, error) {
	objects, made, defers := bytes.Count(src, []byte(objectMade)), bytes.Count(src, []byte(deferMade)), bytes.Count(src, []byte(deferring))
	if made != objects || defers != bytes.Count(src, []byte("deferredFieldSet.AddField(field)")) {
		return nil, fmt.Errorf("%d of %d objects make their deferred group, and %d fields defer, in the form tools/gqlgen knows: update deferMade and deferring to codegen/object.gotpl", made, objects, defers)
	}
	handed := bytes.Count(src, []byte("ec.ProcessDeferredGroup("))
	if groups := len(deferGroup.FindAllIndex(src, -1)); groups != objects || handed != objects {
		return nil, fmt.Errorf("%d deferred groups handed on in the form tools/gqlgen knows, of %d, for %d objects: update deferGroup to codegen/object.gotpl", groups, handed, objects)
	}
	src = bytes.ReplaceAll(src, []byte(deferMade), []byte("\tvar deferredFieldSet *graphql.FieldSet\n\tvar deferLabelToView map[string]*graphql.FieldSetView\n"))
	src = bytes.ReplaceAll(src, []byte(deferring), []byte(deferring+
		"\t\t\t\tif deferredFieldSet == nil {\n\t\t\t\t\tdeferredFieldSet, deferLabelToView = graphql.NewFieldSet(nil), map[string]*graphql.FieldSetView{}\n\t\t\t\t}\n"))
	return deferGroup.ReplaceAllFunc(src, func(m []byte) []byte {
		return append(append([]byte("\tif len(deferLabelToView) > 0 {\n"), m...), "\t}\n"...)
	}), nil
}

// queryResult and mutationResult are how a query's and a mutation's
// result is marshalled and handed on (codegen/generated!.gotpl).
const (
	queryResult    = "\t\t\tvar buf bytes.Buffer\n\t\t\tdata.MarshalGQL(&buf)\n\t\t\tresponse.Data = buf.Bytes()\n"
	mutationResult = "\t\t\tvar buf bytes.Buffer\n\t\t\tdata.MarshalGQL(&buf)\n\n\t\t\treturn &graphql.Response{\n\t\t\t\tData: buf.Bytes(),\n"
)

// pooledResponses marshals a query's and a mutation's result into a
// buffer of inline's pool (marshalResponse), which the transport hands
// back once it has written it. A subscription's events keep the buffer
// the executor reuses for them.
func pooledResponses(src []byte) ([]byte, error) {
	if q, m := bytes.Count(src, []byte(queryResult)), bytes.Count(src, []byte(mutationResult)); q != 1 || m != 1 {
		return nil, fmt.Errorf("%d query and %d mutation results marshalled in the form tools/gqlgen knows, want 1 each: update queryResult and mutationResult to codegen/generated!.gotpl", q, m)
	}
	src = bytes.Replace(src, []byte(queryResult), []byte("\t\t\tresponse.Data = marshalResponse(data)\n"), 1)
	return bytes.Replace(src, []byte(mutationResult), []byte("\t\t\treturn &graphql.Response{\n\t\t\t\tData: marshalResponse(data),\n"), 1), nil
}

// collecting is how an object's marshal collects its fields
// (codegen/object.gotpl).
const collecting = "graphql.CollectFields(ec.OperationContext, sel, "

// keptCollections makes every object collect its fields through
// collectFields, which keeps them across requests.
func keptCollections(src []byte) ([]byte, error) {
	if objects, n := bytes.Count(src, []byte(objectMade)), bytes.Count(src, []byte(collecting)); n < objects {
		return nil, fmt.Errorf("%d objects collect their fields in the form tools/gqlgen knows, of %d: update collecting to codegen/object.gotpl", n, objects)
	}
	out := bytes.ReplaceAll(src, []byte(collecting), []byte("collectFields(ec.OperationContext, sel, "))
	if bytes.Contains(out, []byte("graphql.CollectFields(")) {
		return nil, errors.New("graphql.CollectFields still called in a form tools/gqlgen does not know: update collecting")
	}
	return out, nil
}

// rewritePlain makes each plain field's function marshal its value
// straight, when it can; every one of plain must be found in the
// template's form.
func rewritePlain(src []byte, plain map[string]plainField) ([]byte, error) {
	done := 0
	out := plainResolve.ReplaceAllFunc(src, func(m []byte) []byte {
		g := plainResolve.FindSubmatch(m)
		p, ok := plain[string(g[1])]
		if !ok || p.fallible != (len(g[5]) == 0) {
			return m
		}
		done++
		return plainBody(string(g[1]), string(g[2]), string(g[3]), string(g[4]), string(g[6]), p)
	})
	if done != len(plain) {
		return nil, fmt.Errorf("%d of %d plain fields found in the form tools/gqlgen knows: update plainResolve to codegen/field.gotpl", done, len(plain))
	}
	return out, nil
}

// plainBody is the function of the plain field name on an object of type
// obj: value read, then marshalled. A leaf that cannot fail is
// marshalled at once. A leaf that did not fail, and an object that did
// not fail and is not nil, are marshalled straight too, the object under
// a field context of its own (its fields' errors name their paths);
// otherwise resolve, gqlgen's call, resolves the field again (the views'
// methods are pure) and reports what went wrong.
func plainBody(name, obj, resolve, value, marshal string, p plainField) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "func (ec *executionContext) %s(ctx context.Context, field graphql.CollectedField, obj %s) (ret graphql.Marshaler) {\n", name, obj)
	switch {
	case !p.object && !p.fallible:
		fmt.Fprintf(&b, "\treturn ec.%s(ctx, field.Selections, %s)\n}", marshal, value)
		return b.Bytes()
	case !p.object:
		fmt.Fprintf(&b, "\tif v, err := %s; err == nil {\n\t\treturn ec.%s(ctx, field.Selections, v)\n\t}\n", value, marshal)
	case p.fallible:
		fmt.Fprintf(&b, "\tif v, err := %s; err == nil && v != nil {\n", value)
	default:
		fmt.Fprintf(&b, "\tif v := %s; v != nil {\n", value)
	}
	if p.object {
		fmt.Fprintf(&b, "\t\tfc, _ := ec.fieldContext%s(ctx, field)\n\t\tfc.Result = v\n\t\treturn ec.%s(graphql.WithFieldContext(ctx, fc), field.Selections, v)\n\t}\n", name, marshal)
	}
	fmt.Fprintf(&b, "\t%s\n}", resolve)
	return b.Bytes()
}

func writeGo(path string, src []byte) error {
	formatted, err := format.Source(src)
	if err != nil {
		return fmt.Errorf("format %s: %w", path, err)
	}
	if err := os.WriteFile(path, formatted, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
