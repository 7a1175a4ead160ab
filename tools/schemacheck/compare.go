package main

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// Severity says what a change means for clients built against the old
// schema.
type Severity int

const (
	// Safe changes keep every existing operation valid with the same
	// results: additions, optional arguments, non-null output.
	Safe Severity = iota
	// Dangerous changes keep operations valid but may change what clients
	// see: a new enum value or union member to handle, a new default.
	Dangerous
	// Breaking changes can make an existing operation invalid or its
	// response unreadable by a client generated from the old schema.
	Breaking
)

func (s Severity) String() string {
	switch s {
	case Breaking:
		return "BREAKING"
	case Dangerous:
		return "DANGEROUS"
	}
	return "safe"
}

// Change is one difference between two schemas.
type Change struct {
	Severity Severity
	// Path names what changed: Type, Type.field, Type.field(arg:),
	// @directive.
	Path    string
	Message string
}

func (c Change) String() string {
	return fmt.Sprintf("%-9s %s: %s", c.Severity, c.Path, c.Message)
}

// Compare lists the changes from old to new, breaking ones first, then by
// path. Built-in types and directives and introspection fields are skipped.
func Compare(old, new *ast.Schema) []Change {
	d := &differ{old: old, new: new}
	d.roots()
	for _, name := range sortedKeys(old.Types) {
		ot := old.Types[name]
		if ot.BuiltIn {
			continue
		}
		nt, ok := new.Types[name]
		switch {
		case !ok:
			d.add(Breaking, name, "%s removed", kindName(ot.Kind))
		case ot.Kind != nt.Kind:
			d.add(Breaking, name, "changed from %s to %s", kindName(ot.Kind), kindName(nt.Kind))
		default:
			d.definition(ot, nt)
		}
	}
	for _, name := range sortedKeys(new.Types) {
		if nt := new.Types[name]; !nt.BuiltIn && old.Types[name] == nil {
			d.add(Safe, name, "%s added", kindName(nt.Kind))
		}
	}
	d.directives()
	slices.SortStableFunc(d.changes, func(a, b Change) int {
		return cmp.Or(cmp.Compare(b.Severity, a.Severity), cmp.Compare(a.Path, b.Path))
	})
	return d.changes
}

// HasBreaking reports whether any change is breaking.
func HasBreaking(cs []Change) bool {
	return slices.ContainsFunc(cs, func(c Change) bool { return c.Severity == Breaking })
}

type differ struct {
	old, new *ast.Schema
	changes  []Change
}

func (d *differ) add(s Severity, path, format string, args ...any) {
	d.changes = append(d.changes, Change{Severity: s, Path: path, Message: fmt.Sprintf(format, args...)})
}

func (d *differ) roots() {
	for _, r := range []struct {
		op       string
		old, new *ast.Definition
	}{{"query", d.old.Query, d.new.Query}, {"mutation", d.old.Mutation, d.new.Mutation}, {"subscription", d.old.Subscription, d.new.Subscription}} {
		switch {
		case r.old != nil && r.new == nil:
			d.add(Breaking, "schema", "%s root type removed", r.op)
		case r.old != nil && r.old.Name != r.new.Name:
			d.add(Breaking, "schema", "%s root type changed from %s to %s", r.op, r.old.Name, r.new.Name)
		case r.old == nil && r.new != nil:
			d.add(Safe, "schema", "%s root type %s added", r.op, r.new.Name)
		}
	}
}

func (d *differ) definition(ot, nt *ast.Definition) {
	switch ot.Kind {
	case ast.Object, ast.Interface:
		d.outputFields(ot, nt)
		d.interfaces(ot, nt)
	case ast.InputObject:
		d.inputFields(ot, nt)
	case ast.Union:
		eachChange(ot.Types, nt.Types, func(m string) {
			d.add(Breaking, ot.Name, "member %s removed from the union", m)
		}, func(m string) {
			d.add(Dangerous, ot.Name, "member %s added to the union: clients may meet a type they do not handle", m)
		})
	case ast.Enum:
		for _, v := range ot.EnumValues {
			if nt.EnumValues.ForName(v.Name) == nil {
				d.add(Breaking, ot.Name+"."+v.Name, "enum value removed")
			}
		}
		for _, v := range nt.EnumValues {
			if ov := ot.EnumValues.ForName(v.Name); ov == nil {
				d.add(Dangerous, nt.Name+"."+v.Name, "enum value added: clients may meet a value they do not handle")
			} else {
				d.deprecation(nt.Name+"."+v.Name, ov.Directives, v.Directives)
			}
		}
	}
}

// interfaces: an object or interface that stops implementing an interface
// breaks fragments spread on it.
func (d *differ) interfaces(ot, nt *ast.Definition) {
	eachChange(ot.Interfaces, nt.Interfaces, func(i string) {
		d.add(Breaking, ot.Name, "no longer implements %s", i)
	}, func(i string) {
		d.add(Safe, nt.Name, "now implements %s", i)
	})
}

// eachChange calls removed with each name of before missing from after,
// in before's order, then added with each name of after missing from before.
func eachChange(before, after []string, removed, added func(string)) {
	for _, n := range before {
		if !slices.Contains(after, n) {
			removed(n)
		}
	}
	for _, n := range after {
		if !slices.Contains(before, n) {
			added(n)
		}
	}
}

func (d *differ) outputFields(ot, nt *ast.Definition) {
	for _, of := range ot.Fields {
		if strings.HasPrefix(of.Name, "__") {
			continue
		}
		path := ot.Name + "." + of.Name
		nf := nt.Fields.ForName(of.Name)
		if nf == nil {
			d.add(Breaking, path, "field removed")
			continue
		}
		if !d.outputCompatible(of.Type, nf.Type) {
			why := ""
			if sameShape(of.Type, nf.Type) {
				why = " (non-null output made nullable)"
			}
			d.add(Breaking, path, "type changed from %s to %s%s", of.Type, nf.Type, why)
		} else if of.Type.String() != nf.Type.String() {
			d.add(Safe, path, "type changed from %s to %s", of.Type, nf.Type)
		}
		d.arguments(path, of.Arguments, nf.Arguments)
		d.deprecation(path, of.Directives, nf.Directives)
	}
	for _, nf := range nt.Fields {
		if !strings.HasPrefix(nf.Name, "__") && ot.Fields.ForName(nf.Name) == nil {
			d.add(Safe, nt.Name+"."+nf.Name, "field added")
		}
	}
}

func (d *differ) arguments(path string, oa, na ast.ArgumentDefinitionList) {
	for _, o := range oa {
		apath := path + "(" + o.Name + ":)"
		n := na.ForName(o.Name)
		if n == nil {
			d.add(Breaking, apath, "argument removed")
			continue
		}
		d.inputValue(apath, o.Type, n.Type, o.DefaultValue, n.DefaultValue)
		d.deprecation(apath, o.Directives, n.Directives)
	}
	for _, n := range na {
		if oa.ForName(n.Name) != nil {
			continue
		}
		apath := path + "(" + n.Name + ":)"
		if n.Type.NonNull && n.DefaultValue == nil {
			d.add(Breaking, apath, "required argument added")
		} else {
			d.add(Safe, apath, "optional argument added")
		}
	}
}

func (d *differ) inputFields(ot, nt *ast.Definition) {
	if o, n := ot.Directives.ForName("oneOf") != nil, nt.Directives.ForName("oneOf") != nil; o != n {
		if n {
			d.add(Breaking, ot.Name, "became @oneOf")
		} else {
			d.add(Safe, ot.Name, "no longer @oneOf")
		}
	}
	for _, of := range ot.Fields {
		path := ot.Name + "." + of.Name
		nf := nt.Fields.ForName(of.Name)
		if nf == nil {
			d.add(Breaking, path, "input field removed")
			continue
		}
		d.inputValue(path, of.Type, nf.Type, of.DefaultValue, nf.DefaultValue)
		d.deprecation(path, of.Directives, nf.Directives)
	}
	for _, nf := range nt.Fields {
		if ot.Fields.ForName(nf.Name) != nil {
			continue
		}
		path := nt.Name + "." + nf.Name
		if nf.Type.NonNull && nf.DefaultValue == nil {
			d.add(Breaking, path, "required input field added")
		} else {
			d.add(Safe, path, "optional input field added")
		}
	}
}

// inputValue compares an argument or input field.
func (d *differ) inputValue(path string, ot, nt *ast.Type, odef, ndef *ast.Value) {
	if !inputCompatible(ot, nt) {
		why := ""
		if sameShape(ot, nt) {
			why = " (nullable input made non-null)"
		}
		d.add(Breaking, path, "type changed from %s to %s%s", ot, nt, why)
	} else if ot.String() != nt.String() {
		d.add(Safe, path, "type changed from %s to %s", ot, nt)
	}
	switch {
	case odef != nil && ndef == nil && nt.NonNull:
		d.add(Breaking, path, "default value %s removed: the non-null value is now required", odef)
	case odef != nil && ndef == nil:
		d.add(Dangerous, path, "default value %s removed", odef)
	case odef == nil && ndef != nil:
		d.add(Safe, path, "default value %s added", ndef)
	case odef != nil && odef.String() != ndef.String():
		d.add(Dangerous, path, "default value changed from %s to %s", odef, ndef)
	}
}

func (d *differ) deprecation(path string, od, nd ast.DirectiveList) {
	if od.ForName("deprecated") == nil && nd.ForName("deprecated") != nil {
		d.add(Safe, path, "deprecated")
	}
}

func (d *differ) directives() {
	for _, name := range sortedKeys(d.old.Directives) {
		o := d.old.Directives[name]
		if o.Position != nil && o.Position.Src != nil && o.Position.Src.BuiltIn {
			continue
		}
		path := "@" + name
		n := d.new.Directives[name]
		if n == nil {
			d.add(Breaking, path, "directive removed")
			continue
		}
		for _, l := range o.Locations {
			if !slices.Contains(n.Locations, l) {
				d.add(Breaking, path, "location %s removed", l)
			}
		}
		if o.IsRepeatable && !n.IsRepeatable {
			d.add(Breaking, path, "no longer repeatable")
		}
		d.arguments(path, o.Arguments, n.Arguments)
	}
	for _, name := range sortedKeys(d.new.Directives) {
		if d.old.Directives[name] == nil {
			d.add(Safe, "@"+name, "directive added")
		}
	}
}

// outputCompatible reports whether a client that read a value of type o
// can read one of type n: the same list structure, non-null kept, and the
// same named type or, where o names an interface or union, one of its
// implementations or members.
func (d *differ) outputCompatible(o, n *ast.Type) bool {
	if o.NonNull && !n.NonNull {
		return false
	}
	if (o.Elem == nil) != (n.Elem == nil) {
		return false
	}
	if o.Elem != nil {
		return d.outputCompatible(o.Elem, n.Elem)
	}
	if o.NamedType == n.NamedType {
		return true
	}
	abstract := d.old.Types[o.NamedType]
	if abstract == nil || !abstract.IsAbstractType() {
		return false
	}
	for _, p := range d.new.PossibleTypes[o.NamedType] {
		if p.Name == n.NamedType {
			return true
		}
	}
	return false
}

// inputCompatible reports whether every value (literal or variable) a
// client could pass as type o is still accepted as type n: the same list
// structure and named type, and nothing nullable made non-null. (A T made
// [T] would accept a T literal, but not a variable declared T.)
func inputCompatible(o, n *ast.Type) bool {
	if !o.NonNull && n.NonNull {
		return false
	}
	if (o.Elem == nil) != (n.Elem == nil) {
		return false
	}
	if o.Elem != nil {
		return inputCompatible(o.Elem, n.Elem)
	}
	return o.NamedType == n.NamedType
}

// sameShape reports whether a and b differ at most in nullability.
func sameShape(a, b *ast.Type) bool {
	if (a.Elem == nil) != (b.Elem == nil) {
		return false
	}
	if a.Elem != nil {
		return sameShape(a.Elem, b.Elem)
	}
	return a.NamedType == b.NamedType
}

func kindName(k ast.DefinitionKind) string {
	switch k {
	case ast.Object:
		return "object type"
	case ast.Interface:
		return "interface"
	case ast.Union:
		return "union"
	case ast.Enum:
		return "enum"
	case ast.InputObject:
		return "input type"
	case ast.Scalar:
		return "scalar"
	}
	return strings.ToLower(string(k))
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
