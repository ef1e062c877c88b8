package where

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"
)

// scalar is a compiled expression producing a value.
type scalar interface {
	eval(row []any) value
}

// cond is a compiled expression producing a truth value.
type cond interface {
	test(row []any) tri
}

type compiler struct {
	schema Schema
}

// cell returns row[i], or nil when the row is too short.
func cell(row []any, i int) any {
	if i < len(row) {
		return row[i]
	}
	return nil
}

// --- scalars ---

type constScalar struct{ v value }

func (c *constScalar) eval([]any) value { return c.v }

type fieldScalar struct{ idx int }

func (f *fieldScalar) eval(row []any) value { return fromAny(cell(row, f.idx)) }

type negScalar struct{ x scalar }

func (n *negScalar) eval(row []any) value {
	v := n.x.eval(row)
	switch v.k {
	case kindInt:
		if v.i == math.MinInt64 {
			return floatValue(-float64(v.i))
		}
		return intValue(-v.i)
	case kindFloat:
		return floatValue(-v.f)
	}
	return nullValue
}

type arithScalar struct {
	op   binOp
	l, r scalar
}

func (a *arithScalar) eval(row []any) value { return arith(a.op, a.l.eval(row), a.r.eval(row)) }

// arith applies + - * / or ||. Integer arithmetic that overflows is
// redone in floating point; division by zero gives NULL; integer division
// truncates toward zero.
func arith(op binOp, a, b value) value {
	if a.k == kindNull || b.k == kindNull {
		return nullValue
	}
	if op == opConcat {
		return strValue(toText(a) + toText(b))
	}
	if a.k == kindInt && b.k == kindInt {
		x, y := a.i, b.i
		switch op {
		case opAdd:
			if r := x + y; (r > x) == (y > 0) {
				return intValue(r)
			}
		case opSub:
			if r := x - y; (r < x) == (y > 0) {
				return intValue(r)
			}
		case opMul:
			if x == 0 || y == 0 {
				return intValue(0)
			}
			if r := x * y; r/y == x && !(x == -1 && y == math.MinInt64) && !(y == -1 && x == math.MinInt64) {
				return intValue(r)
			}
		case opDiv:
			if y == 0 {
				return nullValue
			}
			if !(x == math.MinInt64 && y == -1) {
				return intValue(x / y)
			}
		}
	}
	if a.k == kindDate || b.k == kindDate {
		return dateArith(op, a, b)
	}
	if !a.isNum() || !b.isNum() {
		return nullValue
	}
	x, y := a.num(), b.num()
	switch op {
	case opAdd:
		return floatResult(x + y)
	case opSub:
		return floatResult(x - y)
	case opMul:
		return floatResult(x * y)
	}
	if y == 0 {
		return nullValue
	}
	return floatResult(x / y)
}

// dateArithKind types date arithmetic: date ± days is a date, days + date
// is a date, and date - date is the difference in days (Double). ok is
// false when neither operand is a date.
func dateArithKind(op binOp, lk, rk kind) (kind, bool) {
	switch {
	case lk == kindDate && rk == kindDate && op == opSub:
		return kindFloat, true
	case lk == kindDate && (isNumKind(rk) || rk == kindNull) && (op == opAdd || op == opSub):
		return kindDate, true
	case rk == kindDate && (isNumKind(lk) || lk == kindNull) && op == opAdd:
		return kindDate, true
	case lk == kindDate && rk == kindNull && op == opSub:
		return kindDate, true
	}
	return 0, false
}

// dateArith computes date ± days and date - date (in days).
func dateArith(op binOp, a, b value) value {
	if a.k == kindDate && b.k == kindDate {
		if op != opSub {
			return nullValue
		}
		return floatValue(float64(a.i-b.i)/86400 + float64(a.ns-b.ns)/86400e9)
	}
	if b.k == kindDate {
		if op != opAdd {
			return nullValue
		}
		a, b = b, a
	}
	if !b.isNum() {
		return nullValue
	}
	secs := b.num() * 86400
	if op == opSub {
		secs = -secs
	}
	if math.IsNaN(secs) || math.Abs(secs) > 1e15 {
		return nullValue
	}
	whole := math.Floor(secs)
	ns := int64(a.ns) + int64(math.Round((secs-whole)*1e9))
	sec := a.i + int64(whole) + ns/1e9
	return value{k: kindDate, i: sec, ns: int32(ns % 1e9)}
}

type callScalar struct {
	fn   *funcDef
	mod  string
	args []scalar
}

func (c *callScalar) eval(row []any) value {
	var buf [maxCallArgs]value
	for i, a := range c.args {
		buf[i] = a.eval(row)
	}
	var now time.Time
	if c.fn.volatile {
		now = time.Now()
	}
	return apply(c.fn.id, c.mod, buf[:len(c.args)], now)
}

// condScalar exposes a condition as a Boolean value.
type condScalar struct{ c cond }

func (c *condScalar) eval(row []any) value {
	switch c.c.test(row) {
	case triTrue:
		return boolValue(true)
	case triFalse:
		return boolValue(false)
	}
	return nullValue
}

// --- conditions ---

type constCond struct{ t tri }

func (c *constCond) test([]any) tri { return c.t }

type andCond struct{ xs []cond }

func (a *andCond) test(row []any) tri { return kleene(a.xs, row, triFalse) }

type orCond struct{ xs []cond }

func (o *orCond) test(row []any) tri { return kleene(o.xs, row, triTrue) }

// kleene is the three-valued AND (decisive false) or OR (decisive true) of xs: the decisive
// value as soon as one term has it, else unknown if a term is unknown, else the other value.
func kleene(xs []cond, row []any, decisive tri) tri {
	res := decisive.not()
	for _, x := range xs {
		switch x.test(row) {
		case decisive:
			return decisive
		case triUnknown:
			res = triUnknown
		}
	}
	return res
}

type notCond struct{ x cond }

func (n *notCond) test(row []any) tri { return n.x.test(row).not() }

// boolCond tests a Boolean-valued scalar such as a Boolean field.
type boolCond struct{ x scalar }

func (b *boolCond) test(row []any) tri {
	v := b.x.eval(row)
	if v.k != kindBool {
		return triUnknown
	}
	return triOf(v.i != 0)
}

type cmpCond struct {
	op   binOp
	l, r scalar
}

func (c *cmpCond) test(row []any) tri { return compareTri(c.op, c.l.eval(row), c.r.eval(row)) }

// cmpFieldNum compares a field with a numeric constant without building a
// value for the common cell types.
type cmpFieldNum struct {
	idx   int
	op    binOp
	isInt bool
	i     int64
	f     float64
	v     value
}

func (c *cmpFieldNum) test(row []any) tri {
	switch x := cell(row, c.idx).(type) {
	case int64:
		if c.isInt {
			return cmpResult(c.op, cmp.Compare(x, c.i))
		}
		return cmpResult(c.op, cmp.Compare(float64(x), c.f))
	case float64:
		if x != x {
			return triUnknown
		}
		return cmpResult(c.op, cmp.Compare(x, c.f))
	case nil:
		return triUnknown
	}
	return compareTri(c.op, fromAny(cell(row, c.idx)), c.v)
}

type cmpFieldStr struct {
	idx int
	op  binOp
	s   string
}

func (c *cmpFieldStr) test(row []any) tri {
	switch x := cell(row, c.idx).(type) {
	case string:
		if c.op == opEq {
			return triOf(x == c.s)
		}
		return cmpResult(c.op, strings.Compare(x, c.s))
	case nil:
		return triUnknown
	}
	return compareTri(c.op, fromAny(cell(row, c.idx)), strValue(c.s))
}

type cmpFieldDate struct {
	idx int
	op  binOp
	t   time.Time
}

func (c *cmpFieldDate) test(row []any) tri {
	if x, ok := cell(row, c.idx).(time.Time); ok {
		return cmpResult(c.op, x.Compare(c.t))
	}
	return compareTri(c.op, fromAny(cell(row, c.idx)), dateValue(c.t))
}

type isNullCond struct{ x scalar }

func (n *isNullCond) test(row []any) tri { return triOf(n.x.eval(row).k == kindNull) }

// dateKey identifies an instant for hashing.
type dateKey struct {
	sec  int64
	nsec int32
}

// inSet is x IN (constants), answered by hashing.
type inSet struct {
	x       scalar
	idx     int // field index when x is a plain field, else -1
	ints    map[int64]struct{}
	floats  map[float64]struct{}
	strs    map[string]struct{}
	dates   map[dateKey]struct{}
	hasNull bool // the list holds NULL: a miss is unknown, not false
}

func (s *inSet) test(row []any) tri {
	var found bool
	if s.idx >= 0 {
		switch x := cell(row, s.idx).(type) {
		case string:
			if s.strs != nil {
				_, found = s.strs[x]
				return s.result(found)
			}
		case int64:
			if s.ints != nil {
				_, found = s.ints[x]
				return s.result(found)
			}
		case nil:
			return triUnknown
		}
	}
	var v value
	if s.idx >= 0 {
		v = fromAny(cell(row, s.idx))
	} else {
		v = s.x.eval(row)
	}
	switch v.k {
	case kindNull:
		return triUnknown
	case kindString:
		_, found = s.strs[v.s]
	case kindInt:
		if s.ints != nil {
			_, found = s.ints[v.i]
		} else {
			_, found = s.floats[float64(v.i)]
		}
	case kindFloat:
		if s.floats != nil {
			_, found = s.floats[v.f]
		} else if i := int64(v.f); float64(i) == v.f && v.f < 9.2e18 && v.f > -9.2e18 {
			_, found = s.ints[i]
		}
	case kindDate:
		_, found = s.dates[dateKey{v.i, v.ns}]
	}
	return s.result(found)
}

func (s *inSet) result(found bool) tri {
	if found {
		return triTrue
	}
	if s.hasNull {
		return triUnknown
	}
	return triFalse
}

// inList is x IN (expressions), tested item by item.
type inList struct {
	x     scalar
	items []scalar
}

func (l *inList) test(row []any) tri {
	v := l.x.eval(row)
	if v.k == kindNull {
		return triUnknown
	}
	res := triFalse
	for _, it := range l.items {
		switch compareTri(opEq, v, it.eval(row)) {
		case triTrue:
			return triTrue
		case triUnknown:
			res = triUnknown
		}
	}
	return res
}

// likeField is field LIKE 'constant pattern'.
type likeField struct {
	idx int
	m   *likeMatcher
}

func (l *likeField) test(row []any) tri {
	switch x := cell(row, l.idx).(type) {
	case string:
		return triOf(l.m.match(x))
	case nil:
		return triUnknown
	}
	v := fromAny(cell(row, l.idx))
	if v.k != kindString {
		return triUnknown
	}
	return triOf(l.m.match(v.s))
}

// likeConst is expression LIKE 'constant pattern'.
type likeConst struct {
	x scalar
	m *likeMatcher
}

func (l *likeConst) test(row []any) tri {
	v := l.x.eval(row)
	if v.k != kindString {
		return triUnknown
	}
	return triOf(l.m.match(v.s))
}

// likeDyn is LIKE with a pattern or escape computed per row.
type likeDyn struct {
	x, pat, esc scalar // esc may be nil
}

func (l *likeDyn) test(row []any) tri {
	v, p := l.x.eval(row), l.pat.eval(row)
	if v.k != kindString || p.k != kindString {
		return triUnknown
	}
	esc := rune(-1)
	if l.esc != nil {
		e := l.esc.eval(row)
		if e.k != kindString || utf8.RuneCountInString(e.s) != 1 {
			return triUnknown
		}
		esc, _ = utf8.DecodeRuneInString(e.s)
	}
	return triOf(newLikeMatcher(p.s, esc).match(v.s))
}

// --- compilation ---

func isConst(s scalar) (value, bool) {
	if c, ok := s.(*constScalar); ok {
		return c.v, true
	}
	return value{}, false
}

func isNumKind(k kind) bool { return k == kindInt || k == kindFloat }

// scalar compiles n as a value-producing expression and returns its
// static type (kindNull when it is always NULL).
func (c *compiler) scalar(n node) (scalar, kind, error) {
	switch n := n.(type) {
	case *litNode:
		return &constScalar{n.v}, n.v.k, nil
	case *fieldNode:
		idx, ft, ok := c.schema.lookup(n.name)
		if !ok {
			return nil, 0, &FieldError{Pos: n.pos, Field: n.name}
		}
		return &fieldScalar{idx}, ft.kind(), nil
	case *negNode:
		x, k, err := c.scalar(n.x)
		if err != nil {
			return nil, 0, err
		}
		if k != kindNull && !isNumKind(k) {
			return nil, 0, typeErr(n.pos, "cannot negate a %s", kindName(k))
		}
		return fold(&negScalar{x}, k), k, nil
	case *binNode:
		if !n.op.isComparison() {
			return c.arith(n)
		}
	case *callNode:
		return c.call(n)
	}
	cc, err := c.cond(n)
	if err != nil {
		return nil, 0, err
	}
	if k, ok := cc.(*constCond); ok {
		return &constScalar{(&condScalar{k}).eval(nil)}, kindBool, nil
	}
	return &condScalar{cc}, kindBool, nil
}

// fold evaluates s now when all its inputs are constants.
func fold(s scalar, k kind) scalar {
	constant := false
	switch s := s.(type) {
	case *negScalar:
		_, constant = isConst(s.x)
	case *arithScalar:
		_, lc := isConst(s.l)
		_, rc := isConst(s.r)
		constant = lc && rc
	case *callScalar:
		constant = !s.fn.volatile
		for _, a := range s.args {
			if _, ok := isConst(a); !ok {
				constant = false
			}
		}
	}
	if !constant {
		return s
	}
	return &constScalar{s.eval(nil)}
}

func (c *compiler) arith(n *binNode) (scalar, kind, error) {
	l, lk, err := c.scalar(n.l)
	if err != nil {
		return nil, 0, err
	}
	r, rk, err := c.scalar(n.r)
	if err != nil {
		return nil, 0, err
	}
	var k kind
	if n.op == opConcat {
		if lk == kindBool || rk == kindBool {
			return nil, 0, typeErr(n.pos, "cannot concatenate a Boolean")
		}
		k = kindString
	} else if dk, ok := dateArithKind(n.op, lk, rk); ok {
		k = dk
	} else {
		for _, x := range [...]struct {
			k   kind
			pos int
		}{{lk, n.l.position()}, {rk, n.r.position()}} {
			if x.k != kindNull && !isNumKind(x.k) {
				return nil, 0, typeErr(x.pos, "operator %s needs numbers, not %s", n.op, kindName(x.k))
			}
		}
		k = kindInt
		if lk == kindFloat || rk == kindFloat {
			k = kindFloat
		}
	}
	if lk == kindNull || rk == kindNull {
		return &constScalar{nullValue}, kindNull, nil
	}
	return fold(&arithScalar{op: n.op, l: l, r: r}, k), k, nil
}

func (c *compiler) call(n *callNode) (scalar, kind, error) {
	args := make([]scalar, len(n.args))
	kinds := make([]kind, len(n.args))
	for i, a := range n.args {
		s, k, err := c.scalar(a)
		if err != nil {
			return nil, 0, err
		}
		args[i], kinds[i] = s, k
	}
	k, bad, msg := n.fn.check(n.mod, kinds)
	if msg != "" {
		pos := n.pos
		if bad < len(n.args) {
			pos = n.args[bad].position()
		}
		return nil, 0, typeErr(pos, "%s: %s", n.fn.name, msg)
	}
	return fold(&callScalar{fn: n.fn, mod: n.mod, args: args}, k), k, nil
}

// cond compiles n as a condition.
func (c *compiler) cond(n node) (cond, error) {
	switch n := n.(type) {
	case *logicNode:
		return c.logic(n)
	case *notNode:
		x, err := c.cond(n.x)
		if err != nil {
			return nil, err
		}
		if k, ok := x.(*constCond); ok {
			return &constCond{k.t.not()}, nil
		}
		return &notCond{x}, nil
	case *binNode:
		if n.op.isComparison() {
			return c.compare(n.pos, n.op, n.l, n.r)
		}
	case *inNode:
		return c.in(n)
	case *betweenNode:
		lo, err := c.compare(n.pos, opGe, n.x, n.lo)
		if err != nil {
			return nil, err
		}
		hi, err := c.compare(n.pos, opLe, n.x, n.hi)
		if err != nil {
			return nil, err
		}
		var x cond = &andCond{[]cond{lo, hi}}
		if n.not {
			x = &notCond{x}
		}
		return x, nil
	case *likeNode:
		return c.like(n)
	case *isNullNode:
		x, _, err := c.scalar(n.x)
		if err != nil {
			return nil, err
		}
		var t cond = &isNullCond{x}
		if v, ok := isConst(x); ok {
			t = &constCond{triOf(v.k == kindNull)}
		}
		if n.not {
			return negate(t), nil
		}
		return t, nil
	}
	s, k, err := c.scalar(n)
	if err != nil {
		return nil, err
	}
	if k != kindBool && k != kindNull {
		return nil, typeErr(n.position(), "expected a condition but found a %s expression", kindName(k))
	}
	if v, ok := isConst(s); ok {
		if v.k == kindBool {
			return &constCond{triOf(v.i != 0)}, nil
		}
		return &constCond{triUnknown}, nil
	}
	return &boolCond{s}, nil
}

func negate(x cond) cond {
	if k, ok := x.(*constCond); ok {
		return &constCond{k.t.not()}
	}
	return &notCond{x}
}

func (c *compiler) logic(n *logicNode) (cond, error) {
	// In an AND chain a FALSE term decides and TRUE terms are no-ops; in
	// an OR chain the reverse.
	decide, neutral := triFalse, triTrue
	if !n.and {
		decide, neutral = triTrue, triFalse
	}
	var xs []cond
	decided := false
	for _, sub := range n.xs {
		x, err := c.cond(sub)
		if err != nil {
			return nil, err
		}
		if k, ok := x.(*constCond); ok && (k.t == decide || k.t == neutral) {
			decided = decided || k.t == decide
			continue
		}
		xs = append(xs, x)
	}
	if decided {
		return &constCond{decide}, nil
	}
	switch len(xs) {
	case 0:
		return &constCond{neutral}, nil
	case 1:
		return xs[0], nil
	}
	if n.and {
		return &andCond{xs}, nil
	}
	return &orCond{xs}, nil
}

// comparable checks that kinds a and b may be compared. When one side is
// a constant string and the other a date, the string is read as a date.
func (c *compiler) comparable(pos int, a scalar, ak kind, b scalar, bk kind) (scalar, scalar, error) {
	switch {
	case ak == kindNull || bk == kindNull || ak == bk:
		return a, b, nil
	case isNumKind(ak) && isNumKind(bk):
		return a, b, nil
	case ak == kindDate && bk == kindString:
		b2, err := dateFromString(pos, b)
		return a, b2, err
	case ak == kindString && bk == kindDate:
		a2, err := dateFromString(pos, a)
		return a2, b, err
	}
	return nil, nil, typeErr(pos, "cannot compare %s with %s", kindName(ak), kindName(bk))
}

func dateFromString(pos int, s scalar) (scalar, error) {
	v, ok := isConst(s)
	if !ok {
		return nil, typeErr(pos, "cannot compare Date with a computed String; use a DATE literal")
	}
	if v.k == kindNull {
		return s, nil
	}
	t, ok := parseDateText(v.s)
	if !ok {
		return nil, typeErr(pos, "cannot compare Date with %s: not a date", quoteForMsg(v.s))
	}
	return &constScalar{dateValue(t)}, nil
}

func (c *compiler) compare(pos int, op binOp, ln, rn node) (cond, error) {
	l, lk, err := c.scalar(ln)
	if err != nil {
		return nil, err
	}
	r, rk, err := c.scalar(rn)
	if err != nil {
		return nil, err
	}
	if l, r, err = c.comparable(pos, l, lk, r, rk); err != nil {
		return nil, err
	}
	if lk == kindNull || rk == kindNull {
		return &constCond{triUnknown}, nil
	}
	lv, lc := isConst(l)
	rv, rc := isConst(r)
	switch {
	case lc && rc:
		return &constCond{compareTri(op, lv, rv)}, nil
	case lc:
		if f, ok := r.(*fieldScalar); ok {
			return fieldCmp(f.idx, op.flip(), lv), nil
		}
	case rc:
		if f, ok := l.(*fieldScalar); ok {
			return fieldCmp(f.idx, op, rv), nil
		}
	}
	return &cmpCond{op: op, l: l, r: r}, nil
}

// fieldCmp builds the specialised field-versus-constant comparison.
func fieldCmp(idx int, op binOp, v value) cond {
	switch v.k {
	case kindInt:
		return &cmpFieldNum{idx: idx, op: op, isInt: true, i: v.i, f: float64(v.i), v: v}
	case kindFloat:
		return &cmpFieldNum{idx: idx, op: op, f: v.f, v: v}
	case kindString:
		return &cmpFieldStr{idx: idx, op: op, s: v.s}
	case kindDate:
		return &cmpFieldDate{idx: idx, op: op, t: v.time()}
	}
	return &cmpCond{op: op, l: &fieldScalar{idx}, r: &constScalar{v}}
}

func (c *compiler) in(n *inNode) (cond, error) {
	x, xk, err := c.scalar(n.x)
	if err != nil {
		return nil, err
	}
	items := make([]scalar, len(n.list))
	allConst := true
	for i, it := range n.list {
		s, k, err := c.scalar(it)
		if err != nil {
			return nil, err
		}
		if xk == kindString && k == kindDate {
			// The list cannot convert the tested value for each item.
			return nil, typeErr(it.position(), "cannot compare String with Date")
		}
		if _, s, err = c.comparable(it.position(), x, xk, s, k); err != nil {
			return nil, err
		}
		if _, ok := isConst(s); !ok {
			allConst = false
		}
		items[i] = s
	}
	var t cond
	switch {
	case xk == kindNull:
		t = &constCond{triUnknown}
	case allConst && xk != kindBool:
		t = buildSet(x, xk, items)
	default:
		t = &inList{x: x, items: items}
	}
	if n.not {
		return negate(t), nil
	}
	return t, nil
}

// buildSet hashes the constant items of an IN list.
func buildSet(x scalar, xk kind, items []scalar) cond {
	s := &inSet{x: x, idx: -1}
	if f, ok := x.(*fieldScalar); ok {
		s.idx = f.idx
	}
	allInt := xk == kindInt
	for _, it := range items {
		if v, _ := isConst(it); v.k == kindFloat {
			allInt = false
		}
	}
	switch {
	case xk == kindString:
		s.strs = make(map[string]struct{}, len(items))
	case xk == kindDate:
		s.dates = make(map[dateKey]struct{}, len(items))
	case allInt:
		s.ints = make(map[int64]struct{}, len(items))
	default:
		s.floats = make(map[float64]struct{}, len(items))
	}
	for _, it := range items {
		v, _ := isConst(it)
		switch {
		case v.k == kindNull:
			s.hasNull = true
		case s.strs != nil:
			s.strs[v.s] = struct{}{}
		case s.dates != nil:
			s.dates[dateKey{v.i, v.ns}] = struct{}{}
		case s.ints != nil:
			s.ints[v.i] = struct{}{}
		default:
			s.floats[v.num()] = struct{}{}
		}
	}
	if v, ok := isConst(x); ok {
		return &constCond{s.test([]any{anyOf(v)})}
	}
	return s
}

// anyOf converts a value back to a row cell.
func anyOf(v value) any {
	switch v.k {
	case kindInt:
		return v.i
	case kindFloat:
		return v.f
	case kindString:
		return v.s
	case kindDate:
		return v.time()
	case kindBool:
		return v.i != 0
	}
	return nil
}

func (c *compiler) like(n *likeNode) (cond, error) {
	x, xk, err := c.scalar(n.x)
	if err != nil {
		return nil, err
	}
	p, pk, err := c.scalar(n.pattern)
	if err != nil {
		return nil, err
	}
	if xk != kindNull && xk != kindString {
		return nil, typeErr(n.x.position(), "LIKE needs a String, not %s", kindName(xk))
	}
	if pk != kindNull && pk != kindString {
		return nil, typeErr(n.pattern.position(), "LIKE pattern must be a String, not %s", kindName(pk))
	}
	var e scalar
	ek := kindString
	if n.esc != nil {
		if e, ek, err = c.scalar(n.esc); err != nil {
			return nil, err
		}
		if ek != kindNull && ek != kindString {
			return nil, typeErr(n.esc.position(), "ESCAPE must be a String, not %s", kindName(ek))
		}
	}
	negated := func(t cond) cond {
		if n.not {
			return negate(t)
		}
		return t
	}
	if xk == kindNull || pk == kindNull || ek == kindNull {
		return &constCond{triUnknown}, nil
	}
	pv, pc := isConst(p)
	if pc && pv.k == kindNull {
		return &constCond{triUnknown}, nil
	}
	esc, ec := rune(-1), true
	if e != nil {
		var ev value
		if ev, ec = isConst(e); ec {
			if ev.k == kindNull {
				return &constCond{triUnknown}, nil
			}
			if utf8.RuneCountInString(ev.s) != 1 {
				return nil, typeErr(n.esc.position(), "ESCAPE must be exactly one character")
			}
			esc, _ = utf8.DecodeRuneInString(ev.s)
		}
	}
	if !pc || !ec {
		return negated(&likeDyn{x: x, pat: p, esc: e}), nil
	}
	if len(pv.s) > MaxLikePattern {
		return nil, limitErr(n.pattern.position(), fmt.Sprintf("a LIKE pattern of %d bytes is longer than the limit of %d bytes", len(pv.s), MaxLikePattern))
	}
	m := newLikeMatcher(pv.s, esc)
	if v, ok := isConst(x); ok {
		if v.k == kindNull {
			return &constCond{triUnknown}, nil
		}
		return negated(&constCond{triOf(m.match(v.s))}), nil
	}
	if f, ok := x.(*fieldScalar); ok {
		return negated(&likeField{idx: f.idx, m: m}), nil
	}
	return negated(&likeConst{x: x, m: m}), nil
}
