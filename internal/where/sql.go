package where

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Dialect is a SQL dialect a clause can be translated into.
type Dialect int

// Dialects.
const (
	// SQLite (GeoPackage). Strings compare with the default BINARY
	// collation; LIKE is written as GLOB, which is case-sensitive whatever
	// PRAGMA case_sensitive_like says. Dates are not translated: a
	// GeoPackage stores them as text.
	SQLite Dialect = iota
	// PostgreSQL (PostGIS). Every placeholder carries an explicit cast;
	// strings order with COLLATE "C" (byte order, as Match); dates bind as
	// timestamptz, so the session time zone must be UTC.
	PostgreSQL
)

// SQLTarget tells SQL how to write a clause for one table.
type SQLTarget struct {
	Dialect Dialect
	// Schema types the table's columns, as for Compile.
	Schema Schema
	// Column returns the SQL expression of Schema[i]: a quoted column
	// name. User text never reaches it: only positions in Schema do. Its
	// SQL type must fit the field's Type (the caller casts, e.g. numeric
	// to float8 or char(n) to text, when it does not).
	Column func(i int) string
	// Param registers a bind value and returns its placeholder (`?` for
	// SQLite, `$n` for PostgreSQL). It is called in text order, only for
	// the values the final text uses. Values are int64, float64 and
	// string (SQLite: also JSON text of a long IN list); PostgreSQL also
	// gets bool, int32, time.Time (UTC) and, for IN lists, []int64,
	// []float64, []string and []time.Time. The translation writes the
	// SQL cast after a PostgreSQL placeholder itself.
	Param func(v any) string
}

// errInexact marks a part that SQL cannot express with Match's exact
// semantics; it is left out (TRUE inside an AND) or makes its whole
// OR / NOT left out.
var errInexact = errors.New("where: not exactly translatable")

// SQL translates the clause into a SQL boolean expression for t, every
// literal a bind parameter (t.Param) and every field t.Column, so no text
// of the clause reaches the SQL.
//
// Where the translation is exact (exact is true) the expression is TRUE
// for exactly the rows Predicate.Match keeps, with the same three-valued
// logic, case-sensitive LIKE, byte-order string comparison, numeric
// coercion and NULL results for a division by zero. Parts SQL cannot
// write with those semantics (README.md lists them: UPPER/LOWER, ROUND,
// POWER, SQRT, date arithmetic, dates in SQLite, ...) are left out: a
// left-out term of an AND becomes TRUE, and an OR or NOT over a left-out
// part is left out whole. The result is then looser than the clause and
// exact is false: the caller must test the rows it returns with the
// Predicate. sql is "" when nothing is left (no WHERE needed).
//
// Errors are Compile's: a clause that does not fit the schema.
func (e *Expr) SQL(t SQLTarget) (sql string, exact bool, err error) {
	if t.Dialect != SQLite && t.Dialect != PostgreSQL {
		return "", false, fmt.Errorf("where: unknown SQL dialect %d", t.Dialect)
	}
	if t.Column == nil || t.Param == nil {
		return "", false, errors.New("where: SQLTarget needs Column and Param")
	}
	p, err := e.Compile(t.Schema)
	if err != nil {
		return "", false, err
	}
	g := &sqlGen{c: &compiler{schema: t.Schema}, t: t}
	switch {
	case p.MatchesAll():
		return "", true, nil
	case p.MatchesNone():
		return g.boolLit(false), true, nil
	}
	sql, exact, err = g.cond(e.root)
	if errors.Is(err, errInexact) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	return g.bindAll(sql), exact, nil
}

// sqlGen writes SQL with a marker (\x00index\x00) for each value, so a
// part it leaves out leaves no parameter behind; bindAll then registers
// the values that remain, in text order.
type sqlGen struct {
	c    *compiler
	t    SQLTarget
	vals []any
}

func (g *sqlGen) bindAll(sql string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(sql, 0)
		if i < 0 {
			b.WriteString(sql)
			return b.String()
		}
		j := i + 1 + strings.IndexByte(sql[i+1:], 0)
		n, _ := strconv.Atoi(sql[i+1 : j])
		b.WriteString(sql[:i])
		b.WriteString(g.t.Param(g.vals[n]))
		sql = sql[j+1:]
	}
}

// frag is a translated scalar with its static kind.
type frag struct {
	s string
	k kind
}

func (g *sqlGen) pg() bool { return g.t.Dialect == PostgreSQL }

func (g *sqlGen) boolLit(b bool) string {
	switch {
	case g.pg() && b:
		return "TRUE"
	case g.pg():
		return "FALSE"
	case b:
		return "1"
	}
	return "0"
}

func (g *sqlGen) triLit(t tri) string {
	switch t {
	case triTrue:
		return g.boolLit(true)
	case triFalse:
		return g.boolLit(false)
	}
	if g.pg() {
		return "NULL::boolean"
	}
	return "NULL"
}

// pgType is the PostgreSQL type a kind is bound as.
func pgType(k kind) string {
	switch k {
	case kindInt:
		return "int8"
	case kindFloat:
		return "float8"
	case kindString:
		return "text"
	case kindDate:
		return "timestamptz"
	case kindBool:
		return "boolean"
	}
	return ""
}

// param adds a bind argument and returns its placeholder.
func (g *sqlGen) param(arg any, pgt string) string {
	g.vals = append(g.vals, arg)
	p := "\x00" + strconv.Itoa(len(g.vals)-1) + "\x00"
	if g.pg() && pgt != "" {
		p += "::" + pgt
	}
	return p
}

// bind writes a constant of static kind k.
func (g *sqlGen) bind(v value, k kind) (frag, error) {
	if v.k == kindNull {
		if g.pg() && pgType(k) != "" {
			return frag{"NULL::" + pgType(k), k}, nil
		}
		return frag{"NULL", k}, nil
	}
	switch v.k {
	case kindInt:
		return frag{g.param(v.i, "int8"), kindInt}, nil
	case kindFloat:
		return frag{g.param(v.f, "float8"), kindFloat}, nil
	case kindString:
		if g.pg() && strings.IndexByte(v.s, 0) >= 0 {
			return frag{}, errInexact // PostgreSQL text cannot hold NUL
		}
		return frag{g.param(v.s, "text"), kindString}, nil
	case kindDate:
		if !g.pg() {
			return frag{}, errInexact
		}
		return frag{g.param(v.time(), "timestamptz"), kindDate}, nil
	case kindBool:
		if g.pg() {
			return frag{g.param(v.i != 0, "boolean"), kindBool}, nil
		}
		return frag{g.param(v.i, ""), kindBool}, nil
	}
	return frag{}, errInexact
}

func hasField(n node) bool {
	found := false
	walk(n, func(n node) {
		if _, ok := n.(*fieldNode); ok {
			found = true
		}
	})
	return found
}

// constant reports the value of n when it does not depend on the row
// (CURRENT_DATE and CURRENT_TIMESTAMP are read now, once per statement as
// a database would).
func (g *sqlGen) constant(n node) (value, kind, bool, error) {
	cs, k, err := g.c.scalar(n)
	if err != nil {
		return value{}, 0, false, err
	}
	if v, ok := isConst(cs); ok {
		return v, k, true, nil
	}
	if hasField(n) {
		return value{}, k, false, nil
	}
	return cs.eval(nil), k, true, nil
}

// toFloat writes a numeric fragment as a double, as Match does when one
// operand of an operator is a double.
func (g *sqlGen) toFloat(f frag) frag {
	if f.k != kindInt {
		return f
	}
	if g.pg() {
		return frag{"(" + f.s + ")::float8", kindFloat}
	}
	return frag{"CAST(" + f.s + " AS REAL)", kindFloat}
}

// pgNumeric writes an integer fragment as numeric, so PostgreSQL integer
// arithmetic neither overflows int4/int8 nor errs.
func pgNumeric(f frag) string { return "(" + f.s + ")::numeric" }

func (g *sqlGen) scalar(n node) (frag, error) {
	v, k, ok, err := g.constant(n)
	if err != nil {
		return frag{}, err
	}
	if ok {
		return g.bind(v, k)
	}
	switch n := n.(type) {
	case *fieldNode:
		idx, ft, _ := g.c.schema.lookup(n.name)
		k := ft.kind()
		if k == kindDate && !g.pg() {
			return frag{}, errInexact
		}
		return frag{g.t.Column(idx), k}, nil
	case *negNode:
		x, err := g.scalar(n.x)
		if err != nil {
			return frag{}, err
		}
		if x.k == kindInt && g.pg() {
			return frag{"(-" + pgNumeric(x) + ")", kindInt}, nil
		}
		return frag{"(-" + x.s + ")", x.k}, nil
	case *binNode:
		if !n.op.isComparison() {
			return g.arith(n, k)
		}
	case *callNode:
		return g.call(n, k)
	}
	c, exact, err := g.cond(n)
	if err != nil {
		return frag{}, err
	}
	if !exact {
		return frag{}, errInexact
	}
	return frag{"(" + c + ")", kindBool}, nil
}

func (g *sqlGen) arith(n *binNode, k kind) (frag, error) {
	l, err := g.scalar(n.l)
	if err != nil {
		return frag{}, err
	}
	r, err := g.scalar(n.r)
	if err != nil {
		return frag{}, err
	}
	switch {
	case n.op == opConcat:
		// Numbers other than integers and dates print differently.
		if (l.k != kindString && l.k != kindInt) || (r.k != kindString && r.k != kindInt) {
			return frag{}, errInexact
		}
		if g.pg() {
			return frag{"((" + l.s + ")::text || (" + r.s + ")::text)", kindString}, nil
		}
		return frag{"(" + l.s + " || " + r.s + ")", kindString}, nil
	case k == kindDate || l.k == kindDate || r.k == kindDate:
		return frag{}, errInexact
	case l.k == kindInt && r.k == kindInt:
		if !g.pg() {
			// SQLite redoes overflowing integer arithmetic in floating
			// point and gives NULL for a division by zero, as Match.
			return frag{"(" + l.s + " " + n.op.String() + " " + r.s + ")", kindInt}, nil
		}
		if n.op == opDiv {
			return frag{"div(" + pgNumeric(l) + ", NULLIF(" + pgNumeric(r) + ", 0))", kindInt}, nil
		}
		return frag{"(" + pgNumeric(l) + " " + n.op.String() + " " + pgNumeric(r) + ")", kindInt}, nil
	}
	l, r = g.toFloat(l), g.toFloat(r)
	if n.op == opDiv {
		if g.pg() {
			return frag{"(" + l.s + " / NULLIF(" + r.s + ", 0))", kindFloat}, nil
		}
		return frag{"(" + l.s + " / " + r.s + ")", kindFloat}, nil
	}
	return frag{"(" + l.s + " " + n.op.String() + " " + r.s + ")", kindFloat}, nil
}

// constInt returns the value of n when it is a constant integer.
func (g *sqlGen) constInt(n node) (int64, bool, error) {
	v, _, ok, err := g.constant(n)
	if err != nil || !ok || v.k != kindInt {
		return 0, false, err
	}
	return v.i, true, nil
}

func (g *sqlGen) call(n *callNode, k kind) (frag, error) {
	switch n.fn.id {
	case fnSubstring:
		return g.substring(n)
	case fnCurrentDate, fnCurrentTimestamp, fnRound, fnPower, fnSqrt:
		// CURRENT_* without fields is a constant (handled by scalar);
		// ROUND, POWER and SQRT round or fail differently in databases.
		return frag{}, errInexact
	}
	args := make([]frag, len(n.args))
	for i, a := range n.args {
		f, err := g.scalar(a)
		if err != nil {
			return frag{}, err
		}
		args[i] = f
	}
	a0 := args[0]
	switch n.fn.id {
	case fnCharLength:
		if g.pg() {
			return frag{"char_length(" + a0.s + ")", kindInt}, nil
		}
		return frag{"length(" + a0.s + ")", kindInt}, nil
	case fnTrim:
		cut := frag{s: "' '"}
		if len(args) > 1 {
			cut = args[1]
		}
		if g.pg() {
			return frag{"trim(" + n.mod + " " + cut.s + " FROM " + a0.s + ")", kindString}, nil
		}
		fn := map[string]string{"LEADING": "ltrim", "TRAILING": "rtrim"}[n.mod]
		if fn == "" {
			fn = "trim"
		}
		return frag{fn + "(" + a0.s + ", " + cut.s + ")", kindString}, nil
	case fnPosition:
		if g.pg() {
			return frag{"position(" + a0.s + " IN " + args[1].s + ")", kindInt}, nil
		}
		return frag{"instr(" + args[1].s + ", " + a0.s + ")", kindInt}, nil
	case fnConcat:
		parts := make([]string, len(args))
		for i, a := range args {
			if a.k != kindString && a.k != kindInt && a.k != kindNull {
				return frag{}, errInexact
			}
			parts[i] = "COALESCE((" + a.s + ")" + map[bool]string{true: "::text", false: ""}[g.pg()] + ", '')"
		}
		return frag{"(" + strings.Join(parts, " || ") + ")", kindString}, nil
	case fnAbs:
		if a0.k == kindInt && g.pg() {
			return frag{"abs(" + pgNumeric(a0) + ")", kindInt}, nil
		}
		return frag{"abs(" + a0.s + ")", a0.k}, nil
	case fnCeiling, fnFloor:
		if a0.k == kindInt {
			return a0, nil
		}
		if !g.pg() {
			return frag{}, errInexact // math functions are optional in SQLite
		}
		fn := map[fnID]string{fnCeiling: "ceil", fnFloor: "floor"}[n.fn.id]
		return frag{fn + "(" + a0.s + ")", kindFloat}, nil
	case fnMod:
		if a0.k != kindInt || args[1].k != kindInt {
			return frag{}, errInexact
		}
		if g.pg() {
			return frag{"mod(" + pgNumeric(a0) + ", NULLIF(" + pgNumeric(args[1]) + ", 0))", kindInt}, nil
		}
		return frag{"(" + a0.s + " % NULLIF(" + args[1].s + ", 0))", kindInt}, nil
	case fnSign:
		return frag{"(CASE WHEN " + a0.s + " > 0 THEN 1 WHEN " + a0.s + " < 0 THEN -1 WHEN " + a0.s + " = 0 THEN 0 END)", kindInt}, nil
	case fnExtract:
		if !g.pg() || a0.k != kindDate {
			return frag{}, errInexact
		}
		x := "extract(" + n.mod + " FROM " + a0.s + ")"
		if n.mod == "SECOND" {
			x = "floor(" + x + ")"
		}
		return frag{"(" + x + ")::int8", kindInt}, nil
	case fnCast:
		switch {
		case n.mod == "FLOAT" && (a0.k == kindInt || a0.k == kindFloat):
			return g.toFloat(a0), nil
		case n.mod == "INTEGER" && a0.k == kindInt, n.mod == "CHAR" && a0.k == kindString:
			return a0, nil
		case n.mod == "CHAR" && a0.k == kindInt:
			if g.pg() {
				return frag{"(" + a0.s + ")::text", kindString}, nil
			}
			return frag{"CAST(" + a0.s + " AS TEXT)", kindString}, nil
		}
		return frag{}, errInexact
	}
	// UPPER and LOWER: Match maps all of Unicode; SQLite maps ASCII only
	// and PostgreSQL follows the database's locale.
	return frag{}, errInexact
}

// substring translates SUBSTRING with constant bounds, normalised so that
// both dialects see a start of at least 1 and a length of at least 0.
func (g *sqlGen) substring(n *callNode) (frag, error) {
	start, ok, err := g.constInt(n.args[1])
	if err != nil || !ok {
		return frag{}, errors.Join(err, errInexact)
	}
	length, hasLen := int64(-1), len(n.args) > 2
	if hasLen {
		if length, ok, err = g.constInt(n.args[2]); err != nil || !ok {
			return frag{}, errors.Join(err, errInexact)
		}
		if length < 0 {
			return frag{}, errInexact // NULL in Match, an error in PostgreSQL
		}
	}
	if start < 1 {
		if hasLen {
			length = max(0, length+start-1)
		}
		start = 1
	}
	const lim = math.MaxInt32
	if start > lim || length > lim {
		return frag{}, errInexact
	}
	s, err := g.scalar(n.args[0])
	if err != nil {
		return frag{}, err
	}
	if g.pg() {
		x := "substring(" + s.s + " FROM " + g.param(int32(start), "int4")
		if hasLen {
			x += " FOR " + g.param(int32(length), "int4")
		}
		return frag{x + ")", kindString}, nil
	}
	x := "substr(" + s.s + ", " + g.param(start, "")
	if hasLen {
		x += ", " + g.param(length, "")
	}
	return frag{x + ")", kindString}, nil
}

// cond translates a condition. exact false means the text is looser than
// the node (TRUE for every row the node keeps, maybe more); errInexact
// means nothing could be written.
func (g *sqlGen) cond(n node) (string, bool, error) {
	cc, err := g.c.cond(n)
	if err != nil {
		return "", false, err
	}
	if k, ok := cc.(*constCond); ok {
		return g.triLit(k.t), true, nil
	}
	if !hasField(n) { // CURRENT_DATE and friends: decide now
		return g.triLit(cc.test(nil)), true, nil
	}
	switch n := n.(type) {
	case *logicNode:
		return g.logic(n)
	case *notNode:
		s, exact, err := g.cond(n.x)
		if err != nil {
			return "", false, err
		}
		if !exact {
			return "", false, errInexact
		}
		return "(NOT " + s + ")", true, nil
	}
	s, err := g.leaf(n)
	return s, err == nil, err
}

func (g *sqlGen) logic(n *logicNode) (string, bool, error) {
	op := " OR "
	if n.and {
		op = " AND "
	}
	exact := true
	parts := make([]string, 0, len(n.xs))
	for _, x := range n.xs {
		s, ex, err := g.cond(x)
		switch {
		case errors.Is(err, errInexact) && n.and:
			exact = false // TRUE: the AND gets looser
			continue
		case err != nil:
			return "", false, err // an OR over a left-out part is left out
		}
		exact = exact && ex
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		return "", false, errInexact
	}
	return "(" + strings.Join(parts, op) + ")", exact, nil
}

// leaf translates a predicate exactly, or fails with errInexact.
func (g *sqlGen) leaf(n node) (string, error) {
	switch n := n.(type) {
	case *binNode:
		if n.op.isComparison() {
			return g.compare(n.op, n.l, n.r)
		}
	case *betweenNode:
		lo, err := g.compare(opGe, n.x, n.lo)
		if err != nil {
			return "", err
		}
		hi, err := g.compare(opLe, n.x, n.hi)
		if err != nil {
			return "", err
		}
		s := "(" + lo + " AND " + hi + ")"
		if n.not {
			s = "(NOT " + s + ")"
		}
		return s, nil
	case *inNode:
		return g.in(n)
	case *likeNode:
		return g.like(n)
	case *isNullNode:
		x, err := g.scalar(n.x)
		if err != nil {
			return "", err
		}
		if n.not {
			return "(" + x.s + " IS NOT NULL)", nil
		}
		return "(" + x.s + " IS NULL)", nil
	}
	x, err := g.scalar(n)
	if err != nil {
		return "", err
	}
	if x.k != kindBool {
		return "", errInexact
	}
	return x.s, nil
}

// operands translates the two sides of a comparison and brings them to a
// common SQL type as Match compares them.
func (g *sqlGen) operands(ln, rn node) (frag, frag, error) {
	_, lk, err := g.c.scalar(ln)
	if err != nil {
		return frag{}, frag{}, err
	}
	_, rk, err := g.c.scalar(rn)
	if err != nil {
		return frag{}, frag{}, err
	}
	side := func(n node, k, other kind) (frag, error) {
		if k == kindString && other == kindDate {
			// A constant string compared with a date reads as a date.
			v, _, ok, err := g.constant(n)
			if err != nil || !ok {
				return frag{}, errors.Join(err, errInexact)
			}
			if v.k == kindNull {
				return g.bind(v, kindDate)
			}
			t, ok := parseDateText(v.s)
			if !ok {
				return frag{}, errInexact
			}
			return g.bind(dateValue(t), kindDate)
		}
		return g.scalar(n)
	}
	l, err := side(ln, lk, rk)
	if err != nil {
		return frag{}, frag{}, err
	}
	r, err := side(rn, rk, lk)
	if err != nil {
		return frag{}, frag{}, err
	}
	if l.k == kindFloat || r.k == kindFloat {
		l, r = g.toFloat(l), g.toFloat(r)
	}
	return l, r, nil
}

func (g *sqlGen) compare(op binOp, ln, rn node) (string, error) {
	l, r, err := g.operands(ln, rn)
	if err != nil {
		return "", err
	}
	rs := r.s
	if g.pg() && l.k == kindString && op != opEq && op != opNe {
		rs = "(" + rs + ") COLLATE \"C\""
	}
	return "(" + l.s + " " + op.String() + " " + rs + ")", nil
}

func (g *sqlGen) in(n *inNode) (string, error) {
	var s string
	var err error
	if !hasField(&logicNode{xs: n.list}) {
		s, err = g.inConst(n)
	} else {
		s, err = g.inList(n)
	}
	if err != nil {
		return "", err
	}
	if n.not {
		s = "(NOT " + s + ")"
	}
	return s, nil
}

// inList writes x IN (items with fields) as a chain of equalities, which
// has the same three-valued result.
func (g *sqlGen) inList(n *inNode) (string, error) {
	parts := make([]string, len(n.list))
	for i, it := range n.list {
		s, err := g.compare(opEq, n.x, it)
		if err != nil {
			return "", err
		}
		parts[i] = s
	}
	return "(" + strings.Join(parts, " OR ") + ")", nil
}

// sqliteInlineIN is the longest constant IN list SQLite gets as one
// placeholder per item; longer lists go as one JSON array.
const sqliteInlineIN = 200

// inConst writes x IN (constants) with the list as one array parameter
// (PostgreSQL) or as placeholders or a JSON array (SQLite). A NULL in the
// list turns a miss into UNKNOWN, written "OR NULL".
func (g *sqlGen) inConst(n *inNode) (string, error) {
	_, xk, err := g.c.scalar(n.x)
	if err != nil {
		return "", err
	}
	if xk == kindBool {
		return g.inList(n)
	}
	vals := make([]value, 0, len(n.list))
	hasNull, allInt := false, xk == kindInt
	for _, it := range n.list {
		v, _, _, err := g.constant(it)
		if err != nil {
			return "", err
		}
		if v.k == kindString && xk == kindDate {
			t, ok := parseDateText(v.s)
			if !ok {
				return "", errInexact
			}
			v = dateValue(t)
		}
		switch {
		case v.k == kindNull:
			hasNull = true
			continue
		case v.k == kindFloat:
			allInt = false
		}
		vals = append(vals, v)
	}
	x, err := g.scalar(n.x)
	if err != nil {
		return "", err
	}
	k := xk
	if isNumKind(xk) {
		if k = kindInt; !allInt {
			k = kindFloat
			x = g.toFloat(x)
		}
	}
	var s string
	switch {
	case g.pg():
		var arr any
		switch k {
		case kindInt:
			a := make([]int64, len(vals))
			for i, v := range vals {
				a[i] = v.i
			}
			arr = a
		case kindFloat:
			a := make([]float64, len(vals))
			for i, v := range vals {
				a[i] = v.num()
			}
			arr = a
		case kindString:
			a := make([]string, len(vals))
			for i, v := range vals {
				if strings.IndexByte(v.s, 0) >= 0 {
					return "", errInexact
				}
				a[i] = v.s
			}
			arr = a
		case kindDate:
			a := make([]time.Time, len(vals))
			for i, v := range vals {
				a[i] = v.time()
			}
			arr = a
		default:
			return "", errInexact
		}
		s = "(" + x.s + " = ANY(" + g.param(arr, pgType(k)+"[]") + "))"
	case k == kindDate:
		return "", errInexact
	case len(vals) <= sqliteInlineIN:
		ph := make([]string, len(vals))
		for i, v := range vals {
			if k == kindFloat {
				ph[i] = g.param(v.num(), "")
			} else {
				ph[i] = g.param(anyOf(v), "")
			}
		}
		s = "(" + x.s + " IN (" + strings.Join(ph, ", ") + "))"
	default:
		a := make([]any, len(vals))
		for i, v := range vals {
			if k == kindFloat {
				a[i] = v.num()
			} else {
				a[i] = anyOf(v)
			}
		}
		js, err := json.Marshal(a)
		if err != nil {
			return "", errInexact
		}
		s = "(" + x.s + " IN (SELECT value FROM json_each(" + g.param(string(js), "") + ")))"
	}
	if len(vals) == 0 {
		s = g.boolLit(false)
	}
	if hasNull {
		s = "(" + s + " OR NULL)"
	}
	return s, nil
}

// like translates LIKE with a constant pattern and escape: PostgreSQL gets
// the pattern rewritten with '!' as escape character, SQLite a GLOB
// pattern (GLOB is case-sensitive, as Match).
func (g *sqlGen) like(n *likeNode) (string, error) {
	pv, _, ok, err := g.constant(n.pattern)
	if err != nil || !ok {
		return "", errors.Join(err, errInexact)
	}
	esc := rune(-1)
	if n.esc != nil {
		ev, _, ok, err := g.constant(n.esc)
		if err != nil || !ok {
			return "", errors.Join(err, errInexact)
		}
		esc, _ = utf8.DecodeRuneInString(ev.s)
	}
	x, err := g.scalar(n.x)
	if err != nil {
		return "", err
	}
	pat, never := g.likePattern(pv.s, esc)
	var s string
	switch {
	case never:
		// Match: an escape at the very end matches nothing (FALSE for a
		// string, UNKNOWN for NULL).
		s = "(CASE WHEN " + x.s + " IS NULL THEN NULL ELSE " + g.boolLit(false) + " END)"
	case g.pg():
		s = "(" + x.s + " LIKE " + g.param(pat, "text") + " ESCAPE '!')"
	default:
		s = "(" + x.s + " GLOB " + g.param(pat, "") + ")"
	}
	if n.not {
		s = "(NOT " + s + ")"
	}
	return s, nil
}

// likePattern rewrites a LIKE pattern of Match's rules for the dialect.
// never reports a pattern ending in its escape character.
func (g *sqlGen) likePattern(p string, esc rune) (string, bool) {
	var b strings.Builder
	lit := func(r rune) {
		switch {
		case g.pg() && (r == '!' || r == '%' || r == '_'):
			b.WriteByte('!')
			b.WriteRune(r)
		case !g.pg() && (r == '*' || r == '?' || r == '['):
			b.WriteByte('[')
			b.WriteRune(r)
			b.WriteByte(']')
		default:
			b.WriteRune(r)
		}
	}
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRuneInString(p[i:])
		i += size
		switch {
		case esc >= 0 && r == esc:
			if i >= len(p) {
				return "", true
			}
			r, size = utf8.DecodeRuneInString(p[i:])
			i += size
			lit(r)
		case r == '%' && g.pg(), r == '_' && g.pg():
			b.WriteRune(r)
		case r == '%':
			b.WriteByte('*')
		case r == '_':
			b.WriteByte('?')
		default:
			lit(r)
		}
	}
	return b.String(), false
}
