// Package where implements the where-clause language of QueryFilter.WhereClause
// and LayerDescription.DefinitionExpression: a SQL-92 style boolean
// expression over a layer's fields.
//
// Clause text is never handed to a database. Parse reads a clause with a
// grammar of its own into an expression tree, Compile binds field names to
// column positions and type-checks the tree against a Schema, and the
// resulting Predicate is evaluated in Go against one row at a time:
//
//	e, err := where.Parse("POP > 1000 AND NAME LIKE 'A%'")
//	...
//	p, err := e.Compile(where.Schema{{Name: "NAME", Type: where.String}, {Name: "POP", Type: where.Integer}})
//	...
//	if p.Match([]any{"Avon", int64(5000)}) { ... }
//
// The grammar, the functions and the semantic choices (three-valued logic,
// case-sensitive string comparison, numeric coercion) are described in
// README.md; Syntax reports the same facts for GetSQLSyntaxInfo.
//
// Database providers translate the parsed tree with (*Expr).SQL into
// parameterised SQL (SQLite or PostgreSQL) that keeps Match's semantics
// exactly, or into a looser SQL filter they finish with Match.
package where

import (
	"strings"
)

// Expr is a parsed where clause. It is immutable and safe for concurrent
// use. The zero Expr, like the one Parse returns for a blank clause,
// matches every row.
type Expr struct {
	root node // nil: match everything
}

func newExpr(root node) *Expr { return &Expr{root: root} }

// String returns the clause in canonical form: keywords in upper case,
// single spaces, the minimum of parentheses, != written as <>, and field
// names delimited only when they must be. Parsing the result yields an
// equivalent expression with the same String. A blank clause gives "".
func (e *Expr) String() string {
	if e == nil || e.root == nil {
		return ""
	}
	var b strings.Builder
	e.root.write(&b)
	return b.String()
}

// IsEmpty reports whether the clause was blank and so matches every row.
func (e *Expr) IsEmpty() bool { return e == nil || e.root == nil }

// Fields returns the names of the fields the clause refers to, in order of
// first appearance, each once (compared case-insensitively), as written.
// Callers may use it to load only the columns the clause needs.
func (e *Expr) Fields() []string {
	if e == nil || e.root == nil {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	walk(e.root, func(n node) {
		if f, ok := n.(*fieldNode); ok {
			k := strings.ToUpper(f.name)
			if !seen[k] {
				seen[k] = true
				out = append(out, f.name)
			}
		}
	})
	return out
}

// And returns the conjunction of the given expressions; nil and empty ones
// are skipped. It is how a layer's definition expression is combined with
// a query's where clause.
func And(exprs ...*Expr) *Expr {
	var xs []node
	for _, e := range exprs {
		if e.IsEmpty() {
			continue
		}
		xs = appendFlat(xs, e.root, true)
	}
	switch len(xs) {
	case 0:
		return &Expr{}
	case 1:
		return &Expr{root: xs[0]}
	}
	// A nested OR binds more loosely than AND; String parenthesises it.
	return &Expr{root: &logicNode{pos: xs[0].position(), and: true, xs: xs}}
}

// walk calls f for n and every node below it, parents first.
func walk(n node, f func(node)) {
	f(n)
	switch n := n.(type) {
	case *negNode:
		walk(n.x, f)
	case *binNode:
		walk(n.l, f)
		walk(n.r, f)
	case *logicNode:
		for _, x := range n.xs {
			walk(x, f)
		}
	case *notNode:
		walk(n.x, f)
	case *inNode:
		walk(n.x, f)
		for _, x := range n.list {
			walk(x, f)
		}
	case *betweenNode:
		walk(n.x, f)
		walk(n.lo, f)
		walk(n.hi, f)
	case *likeNode:
		walk(n.x, f)
		walk(n.pattern, f)
		if n.esc != nil {
			walk(n.esc, f)
		}
	case *isNullNode:
		walk(n.x, f)
	case *callNode:
		for _, x := range n.args {
			walk(x, f)
		}
	}
}

// FieldType is the type of a field as the compiler sees it, and the Go
// type Match expects in that field's row cell.
type FieldType int

// Field types.
const (
	Integer FieldType = iota // int64 (other Go integer types are accepted too)
	Double                   // float64 (float32 accepted; NaN reads as NULL)
	String                   // string
	Date                     // time.Time, compared as an instant
	Boolean                  // bool
)

func (t FieldType) String() string {
	switch t {
	case Integer:
		return "Integer"
	case Double:
		return "Double"
	case String:
		return "String"
	case Date:
		return "Date"
	case Boolean:
		return "Boolean"
	}
	return "FieldType(?)"
}

func (t FieldType) kind() kind {
	switch t {
	case Integer:
		return kindInt
	case Double:
		return kindFloat
	case String:
		return kindString
	case Date:
		return kindDate
	case Boolean:
		return kindBool
	}
	return kindNull
}

// Field names and types one column.
type Field struct {
	Name string
	Type FieldType
}

// Schema lists the columns of the rows a Predicate will see: the field at
// Schema[i] is row[i]. Names are matched case-insensitively; if two
// fields differ only in case, the one spelled exactly as in the clause
// wins.
type Schema []Field

func (s Schema) lookup(name string) (int, FieldType, bool) {
	found := -1
	for i, f := range s {
		if f.Name == name {
			return i, f.Type, true
		}
		if found < 0 && strings.EqualFold(f.Name, name) {
			found = i
		}
	}
	if found < 0 {
		return 0, 0, false
	}
	return found, s[found].Type, true
}

// Predicate is a compiled clause. It is immutable and safe for concurrent
// use.
type Predicate struct {
	root cond // nil: match everything
}

// Compile binds the clause's field names to positions in s and checks
// types. Errors are *FieldError for a name s does not have and *TypeError
// for operands that do not fit (a String compared with a number, LIKE on
// a number, a bad ESCAPE, ...).
func (e *Expr) Compile(s Schema) (*Predicate, error) {
	if e.IsEmpty() {
		return &Predicate{}, nil
	}
	c := &compiler{schema: s}
	root, err := c.cond(e.root)
	if err != nil {
		return nil, err
	}
	if k, ok := root.(*constCond); ok && k.t == triTrue {
		root = nil
	}
	return &Predicate{root: root}, nil
}

// Match reports whether the row satisfies the clause: only TRUE matches;
// FALSE and UNKNOWN (from NULLs) do not. row[i] holds the value of
// Schema[i]: nil for NULL, or int64, float64, string, time.Time or bool.
// Cells of other types read as NULL, and a row shorter than the schema
// reads NULL for the missing cells. A nil *Predicate matches every row.
func (p *Predicate) Match(row []any) bool {
	return p == nil || p.root == nil || p.root.test(row) == triTrue
}

// MatchesAll reports whether the predicate is known to match every row
// (a blank clause or one that is constantly true), so callers may skip
// evaluation.
func (p *Predicate) MatchesAll() bool { return p == nil || p.root == nil }

// MatchesNone reports whether the predicate can never match (for example
// "1 = 0" or "X = NULL").
func (p *Predicate) MatchesNone() bool {
	if p == nil {
		return false
	}
	k, ok := p.root.(*constCond)
	return ok && k.t != triTrue
}
