package gisxml

import (
	"reflect"
	"sync"
)

// Kind tells how a schema type is represented in Go.
type Kind int

// The kinds of schema types.
const (
	KindComplex Kind = iota // a struct (or an interface for a polymorphic type)
	KindArray               // a named slice, one element per item
	KindEnum                // a string type
)

// TypeDef describes one schema type.
type TypeDef struct {
	Name     string       // schema name: "PointN", "gisUnits", "ArrayOfInt"
	Kind     Kind         //
	Base     string       // schema name of the extension base, "" if none
	Abstract bool         //
	Go       reflect.Type // the struct holding the type's own and inherited fields (nil for a field-less abstract type); the slice type of an array; the string type of an enum
	Iface    reflect.Type // the interface that slots of this type hold, when the type is polymorphic
	Values   []string     // enumeration values
	// Arrays only: the item element's name, its schema type and whether it may be nil.
	Item         string
	ItemType     string
	ItemNillable bool
}

// OperationDef describes one operation: its request and response elements.
type OperationDef struct {
	Name     string
	Request  reflect.Type // struct named Name
	Response reflect.Type // struct named Name+"Response"
	Catalog  bool         // a Catalog-service operation rather than a MapServer one
}

// Schema is the indexed schema.
type Schema struct {
	Types      []TypeDef
	Operations []OperationDef
	byName     map[string]*TypeDef
	byGo       map[reflect.Type]*TypeDef
	byIface    map[reflect.Type]*TypeDef
	ops        map[string]*OperationDef
}

// Load returns the schema, built once and shared read-only.
var Load = sync.OnceValue(func() *Schema {
	s := &Schema{Types: schemaTypes(), Operations: schemaOperations(),
		byName: map[string]*TypeDef{}, byGo: map[reflect.Type]*TypeDef{}, byIface: map[reflect.Type]*TypeDef{}, ops: map[string]*OperationDef{}}
	for i := range s.Types {
		t := &s.Types[i]
		s.byName[t.Name] = t
		if t.Go != nil {
			s.byGo[t.Go] = t
		}
		if t.Iface != nil {
			s.byIface[t.Iface] = t
		}
	}
	for i := range s.Operations {
		s.ops[s.Operations[i].Name] = &s.Operations[i]
	}
	return s
})

// Type returns the schema type of the given name.
func (s *Schema) Type(name string) (*TypeDef, bool) { t, ok := s.byName[name]; return t, ok }

// TypeOfGo returns the schema type a Go struct, slice or enum type represents.
func (s *Schema) TypeOfGo(t reflect.Type) (*TypeDef, bool) { d, ok := s.byGo[t]; return d, ok }

// TypeOfIface returns the polymorphic schema type whose slots hold the interface t.
func (s *Schema) TypeOfIface(t reflect.Type) (*TypeDef, bool) { d, ok := s.byIface[t]; return d, ok }

// Operation returns the operation of the given name.
func (s *Schema) Operation(name string) (*OperationDef, bool) { o, ok := s.ops[name]; return o, ok }

// DerivesFrom reports whether the schema type name is base or derived from it.
func (s *Schema) DerivesFrom(name, base string) bool {
	for n := name; n != ""; {
		if n == base {
			return true
		}
		t, ok := s.byName[n]
		if !ok {
			return false
		}
		n = t.Base
	}
	return false
}
