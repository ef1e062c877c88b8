// Command gen writes the Go message types of the gis XML schema from the field listing in
// internal/gisxml/schema. It is run by `go generate ./internal/gisxml`.
//
// Mapping rules (the codec and the WSDL writer in internal/soap rely on them):
//
//   - A complex type becomes a struct of the same name whose fields carry a `gis` tag:
//     `gis:"Element,type[,opt][,many][,nillable][,default=v]"`. The type is `xs:…` for built-ins
//     or the schema name of a gis type.
//   - A type that is extended by others, or is abstract, is polymorphic: its slots hold an
//     interface. An abstract type T is the interface T; its own fields (if any) live in the struct
//     TFields. A concrete type T with subtypes is the struct T plus the interface TKind.
//   - A derived type embeds the struct of its nearest ancestor that has fields, so base fields come
//     first on the wire, as XSD extension requires.
//   - A type named ArrayOfX with one field is a named slice of its item.
//   - An enumeration becomes a string type with one constant per value.
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
	"sort"
	"strings"
	"unicode"
)

type field struct {
	name     string
	typ      string // "xs:int" or schema type name (no prefix)
	opt      bool
	many     bool
	nillable bool
	def      string
	hasDef   bool
}

type typeDef struct {
	name     string
	base     string
	abstract bool
	fields   []field
	enum     []string
	isEnum   bool
	isElem   bool
}

func main() {
	in := flag.String("in", "schema/mapserver-10.7.txt", "schema listing")
	out := flag.String("out", "types_gen.go", "output Go file")
	flag.Parse()

	s, err := parse(*in)
	if err != nil {
		log.Fatal(err)
	}
	src, err := s.generate()
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}

type schema struct {
	types    map[string]*typeDef
	order    []string // types and enums, in listing order
	elements []*typeDef
	children map[string][]string
	goNames  map[string]string // schema name → Go name (for enums, abstract interfaces)
}

func parse(path string) (*schema, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	s := &schema{types: map[string]*typeDef{}, children: map[string][]string{}, goNames: map[string]string{}}
	var cur *typeDef
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := sc.Text()
		if strings.HasPrefix(text, "#") || strings.TrimSpace(text) == "" {
			continue
		}
		if strings.HasPrefix(text, "  ") {
			if cur == nil {
				return nil, fmt.Errorf("%s:%d: field outside a type", path, line)
			}
			fl, err := parseField(strings.TrimSpace(text))
			if err != nil {
				return nil, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			cur.fields = append(cur.fields, fl)
			continue
		}
		words := strings.Fields(text)
		switch words[0] {
		case "ELEMENT":
			cur = &typeDef{name: words[1], isElem: true}
			s.elements = append(s.elements, cur)
		case "TYPE":
			name := words[1]
			if _, dup := s.types[name]; dup {
				cur = &typeDef{name: name} // duplicate listing: read and drop
				continue
			}
			cur = &typeDef{name: name}
			for i := 2; i < len(words); i++ {
				switch words[i] {
				case "extends":
					cur.base = strings.TrimPrefix(words[i+1], "e:")
					i++
				case "abstract":
					cur.abstract = true
				}
			}
			s.types[name] = cur
			s.order = append(s.order, name)
		case "ENUM":
			name := words[1]
			colon := strings.Index(text, " : ")
			vals := strings.Fields(text[colon+3:])
			cur = nil
			if _, dup := s.types[name]; dup {
				continue
			}
			s.types[name] = &typeDef{name: name, isEnum: true, enum: vals}
			s.order = append(s.order, name)
		default:
			return nil, fmt.Errorf("%s:%d: unknown line %q", path, line, text)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, n := range s.order {
		if b := s.types[n].base; b != "" {
			s.children[b] = append(s.children[b], n)
		}
	}
	return s, nil
}

func parseField(text string) (field, error) {
	colon := strings.Index(text, ":")
	if colon < 0 {
		return field{}, fmt.Errorf("bad field %q", text)
	}
	fl := field{name: text[:colon]}
	rest := strings.TrimSpace(text[colon+1:])
	flags := ""
	if i := strings.Index(rest, "["); i >= 0 {
		flags = strings.Trim(rest[i:], "[]")
		rest = strings.TrimSpace(rest[:i])
	}
	fl.typ = strings.TrimPrefix(rest, "e:")
	for _, f := range strings.Split(flags, ",") {
		switch {
		case f == "opt":
			fl.opt = true
		case f == "max=unbounded":
			fl.many = true
		case f == "nillable":
			fl.nillable = true
		case strings.HasPrefix(f, "default="):
			fl.def, fl.hasDef = strings.TrimPrefix(f, "default="), true
		}
	}
	return fl, nil
}

func (s *schema) polymorphic(name string) bool {
	t := s.types[name]
	return t != nil && !t.isEnum && (t.abstract || len(s.children[name]) > 0)
}

func (s *schema) isArray(name string) bool {
	t := s.types[name]
	return t != nil && !t.isEnum && strings.HasPrefix(name, "ArrayOf") && len(t.fields) == 1 && t.base == "" && len(s.children[name]) == 0
}

// structName is the Go struct that holds name's own fields ("" when there is none).
func (s *schema) structName(name string) string {
	t := s.types[name]
	if t.abstract {
		if len(t.fields) == 0 {
			return ""
		}
		return name + "Fields"
	}
	return name
}

// embedOf is the struct a type embeds: its nearest ancestor with a fields struct.
func (s *schema) embedOf(name string) string {
	for b := s.types[name].base; b != ""; b = s.types[b].base {
		if sn := s.structName(b); sn != "" {
			return sn
		}
	}
	return ""
}

func (s *schema) ifaceName(name string) string {
	if s.types[name].abstract {
		return name
	}
	return name + "Kind"
}

func (s *schema) enumGoName(name string) string {
	if g, ok := s.goNames[name]; ok {
		return g
	}
	g := strings.TrimPrefix(name, "gis")
	if _, clash := s.types[g]; clash {
		g += "Enum"
	}
	s.goNames[name] = g
	return g
}

var builtins = map[string]string{
	"xs:string": "string", "xs:boolean": "bool", "xs:double": "float64", "xs:int": "int",
	"xs:short": "int16", "xs:long": "int64", "xs:unsignedByte": "uint8", "xs:base64Binary": "[]byte",
	"xs:dateTime": "time.Time", "xs:anyType": "any", "xs:float": "float32",
}

// goType is the Go type of a slot holding one value of schema type typ.
func (s *schema) goType(typ string, opt bool) string {
	if g, ok := builtins[typ]; ok {
		if opt && g != "[]byte" && g != "any" {
			return "*" + g
		}
		return g
	}
	t := s.types[typ]
	if t == nil {
		log.Fatalf("unknown type %q", typ)
	}
	switch {
	case t.isEnum:
		if opt {
			return "*" + s.enumGoName(typ)
		}
		return s.enumGoName(typ)
	case s.polymorphic(typ):
		return s.ifaceName(typ)
	case s.isArray(typ):
		return typ
	default:
		return "*" + typ
	}
}

func tag(f field) string {
	parts := []string{f.name, f.typ}
	if strings.HasPrefix(f.typ, "xs:") {
		parts[1] = f.typ
	}
	if f.opt {
		parts = append(parts, "opt")
	}
	if f.many {
		parts = append(parts, "many")
	}
	if f.nillable {
		parts = append(parts, "nillable")
	}
	if f.hasDef {
		parts = append(parts, "default="+f.def)
	}
	return "`gis:\"" + strings.Join(parts, ",") + "\"`"
}

func (s *schema) fieldLine(f field) string {
	typ := s.goType(f.typ, f.opt)
	if f.many && !strings.HasPrefix(typ, "[]") {
		typ = "[]" + strings.TrimPrefix(typ, "*")
		if t := s.types[f.typ]; t != nil && !t.isEnum && !s.polymorphic(f.typ) && !s.isArray(f.typ) {
			typ = "[]*" + f.typ
		}
	}
	return fmt.Sprintf("\t%s %s %s\n", f.name, typ, tag(f))
}

func constName(enumGo, v string) string {
	n := v
	if strings.HasPrefix(v, "gis") {
		n = strings.TrimPrefix(v, "gis")
	} else {
		n = enumGo + exportName(v)
	}
	return n
}

func exportName(v string) string {
	var b strings.Builder
	up := true
	for _, r := range v {
		if r == '-' || r == '_' || r == ' ' {
			up = true
			continue
		}
		if up {
			b.WriteRune(unicode.ToUpper(r))
			up = false
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func (s *schema) generate() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("// Code generated by internal/gisxml/internal/gen from schema/mapserver-10.7.txt. DO NOT EDIT.\n\n")
	b.WriteString("package gisxml\n\nimport (\n\t\"reflect\"\n\t\"time\"\n)\n\nvar _ time.Time\n\n")

	// Enumerations.
	usedConsts := map[string]string{}
	for _, n := range s.order {
		t := s.types[n]
		if !t.isEnum {
			continue
		}
		g := s.enumGoName(n)
		fmt.Fprintf(&b, "// %s is the schema enumeration %s.\ntype %s string\n\n", g, n, g)
		b.WriteString("// Values of " + g + ".\nconst (\n")
		for _, v := range t.enum {
			c := constName(g, v)
			if _, clash := s.types[c]; clash || usedConsts[c] != "" {
				c = g + strings.TrimPrefix(c, g)
				if usedConsts[c] != "" {
					c = g + exportName(strings.TrimPrefix(v, "gis"))
				}
			}
			usedConsts[c] = n
			fmt.Fprintf(&b, "\t%s %s = %q\n", c, g, v)
		}
		b.WriteString(")\n\n")
	}

	// Complex types.
	for _, n := range s.order {
		t := s.types[n]
		if t.isEnum {
			continue
		}
		if s.isArray(n) {
			f := t.fields[0]
			item := s.goType(f.typ, false)
			if f.nillable && strings.HasPrefix(item, "*") {
				item = "*" + strings.TrimPrefix(item, "*")
			}
			fmt.Fprintf(&b, "// %s is the schema array %s: zero or more <%s> elements.\ntype %s []%s\n\n", n, n, f.name, n, item)
			continue
		}
		if s.polymorphic(n) {
			iface := s.ifaceName(n)
			fmt.Fprintf(&b, "// %s holds any value of schema type %s or a type derived from it.\n", iface, n)
			fmt.Fprintf(&b, "type %s interface {\n\tGisType() string\n", iface)
			if sn := s.structName(n); sn != "" {
				fmt.Fprintf(&b, "\t%sPart() *%s\n", n, sn)
			} else {
				fmt.Fprintf(&b, "\tis%s()\n", n)
			}
			b.WriteString("}\n\n")
		}
		sn := s.structName(n)
		if sn == "" {
			continue
		}
		if t.abstract {
			fmt.Fprintf(&b, "// %s holds the fields of the abstract schema type %s.\n", sn, n)
		} else {
			fmt.Fprintf(&b, "// %s is the schema type %s.\n", sn, n)
		}
		fmt.Fprintf(&b, "type %s struct {\n", sn)
		if e := s.embedOf(n); e != "" {
			fmt.Fprintf(&b, "\t%s\n", e)
		}
		for _, f := range t.fields {
			b.WriteString(s.fieldLine(f))
		}
		b.WriteString("}\n\n")
		if !t.abstract {
			fmt.Fprintf(&b, "// GisType returns the schema name %q.\nfunc (*%s) GisType() string { return %q }\n\n", n, n, n)
		}
		if s.polymorphic(n) {
			fmt.Fprintf(&b, "// %sPart returns the %s fields of any value derived from it.\nfunc (v *%s) %sPart() *%s { return v }\n\n", n, n, sn, n, sn)
		}
		if !t.abstract {
			// Marker methods for field-less abstract ancestors.
			for a := t.base; a != ""; a = s.types[a].base {
				if s.polymorphic(a) && s.structName(a) == "" {
					fmt.Fprintf(&b, "func (*%s) is%s() {}\n", n, a)
				}
			}
			b.WriteString("\n")
		}
	}

	// Request and response elements.
	for _, e := range s.elements {
		fmt.Fprintf(&b, "// %s is the message element %s.\ntype %s struct {\n", e.name, e.name, e.name)
		for _, f := range e.fields {
			b.WriteString(s.fieldLine(f))
		}
		b.WriteString("}\n\n")
	}

	// The schema table.
	b.WriteString("// schemaTypes lists every schema type in listing order.\nfunc schemaTypes() []TypeDef {\n\treturn []TypeDef{\n")
	for _, n := range s.order {
		t := s.types[n]
		switch {
		case t.isEnum:
			fmt.Fprintf(&b, "\t\t{Name: %q, Kind: KindEnum, Go: reflect.TypeFor[%s](), Values: %#v},\n", n, s.enumGoName(n), t.enum)
		case s.isArray(n):
			f := t.fields[0]
			fmt.Fprintf(&b, "\t\t{Name: %q, Kind: KindArray, Go: reflect.TypeFor[%s](), Item: %q, ItemType: %q, ItemNillable: %v},\n", n, n, f.name, f.typ, f.nillable)
		default:
			goT := "nil"
			if sn := s.structName(n); sn != "" {
				goT = "reflect.TypeFor[" + sn + "]()"
			}
			iface := "nil"
			if s.polymorphic(n) {
				iface = "reflect.TypeFor[" + s.ifaceName(n) + "]()"
			}
			fmt.Fprintf(&b, "\t\t{Name: %q, Kind: KindComplex, Base: %q, Abstract: %v, Go: %s, Iface: %s},\n", n, t.base, t.abstract, goT, iface)
		}
	}
	b.WriteString("\t}\n}\n\n")

	catalog := map[string]bool{"GetServiceDescriptions": true, "GetServiceDescriptionsEx": true, "GetFolders": true,
		"GetMessageVersion": true, "GetMessageFormats": true, "GetTokenServiceURL": true, "RequiresTokens": true}
	names := []string{}
	for _, e := range s.elements {
		if !strings.HasSuffix(e.name, "Response") {
			names = append(names, e.name)
		}
	}
	b.WriteString("// schemaOperations lists every operation in listing order.\nfunc schemaOperations() []OperationDef {\n\treturn []OperationDef{\n")
	for _, n := range names {
		fmt.Fprintf(&b, "\t\t{Name: %q, Request: reflect.TypeFor[%s](), Response: reflect.TypeFor[%sResponse](), Catalog: %v},\n", n, n, n, catalog[n])
	}
	b.WriteString("\t}\n}\n")
	_ = sort.Strings
	src, err := format.Source(b.Bytes())
	if err != nil {
		os.WriteFile("/tmp/gisxml_bad.go", b.Bytes(), 0o644)
		return nil, fmt.Errorf("format: %w", err)
	}
	return src, nil
}
