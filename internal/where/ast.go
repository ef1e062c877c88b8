package where

import (
	"strconv"
	"strings"
	"time"
)

// node is one vertex of a parsed expression tree. Trees are immutable once
// built and may be shared between goroutines.
type node interface {
	// prec is the binding strength used to decide where String needs
	// parentheses; higher binds tighter.
	prec() int
	// write appends the canonical text of the node.
	write(b *strings.Builder)
	// position is the byte offset in the clause the node came from.
	position() int
}

// Binding strengths, loosest first.
const (
	precOr = iota + 1
	precAnd
	precNot
	precPredicate // comparison, IN, BETWEEN, LIKE, IS NULL
	precAdd       // + -
	precMul       // * /
	precConcat    // ||
	precUnary     // unary minus
	precPrimary   // literal, field, call, parenthesised expression
)

// litNode is a constant.
type litNode struct {
	pos int
	v   value
}

// fieldNode is a reference to a column by name.
type fieldNode struct {
	pos  int
	name string
}

// negNode is unary minus.
type negNode struct {
	pos int
	x   node
}

// binNode is an arithmetic, concatenation or comparison operator.
type binNode struct {
	pos  int
	op   binOp
	l, r node
}

// logicNode is a flattened chain of AND or OR.
type logicNode struct {
	pos int
	and bool
	xs  []node
}

// notNode is logical negation.
type notNode struct {
	pos int
	x   node
}

// inNode is x [NOT] IN (list).
type inNode struct {
	pos  int
	not  bool
	x    node
	list []node
}

// betweenNode is x [NOT] BETWEEN lo AND hi.
type betweenNode struct {
	pos       int
	not       bool
	x, lo, hi node
}

// likeNode is x [NOT] LIKE pattern [ESCAPE esc]; esc may be nil.
type likeNode struct {
	pos             int
	not             bool
	x, pattern, esc node
}

// isNullNode is x IS [NOT] NULL.
type isNullNode struct {
	pos int
	not bool
	x   node
}

// callNode is a function call. mod holds the keyword argument of the
// special forms: the TRIM side (BOTH, LEADING, TRAILING), the EXTRACT part
// or the CAST target type.
type callNode struct {
	pos  int
	fn   *funcDef
	mod  string
	args []node
}

// binOp is a binary operator.
type binOp uint8

const (
	opAdd binOp = iota
	opSub
	opMul
	opDiv
	opConcat
	opEq
	opNe
	opLt
	opLe
	opGt
	opGe
)

var binOpText = [...]string{
	opAdd: "+", opSub: "-", opMul: "*", opDiv: "/", opConcat: "||",
	opEq: "=", opNe: "<>", opLt: "<", opLe: "<=", opGt: ">", opGe: ">=",
}

func (o binOp) String() string { return binOpText[o] }

func (o binOp) isComparison() bool { return o >= opEq }

func (o binOp) prec() int {
	switch o {
	case opAdd, opSub:
		return precAdd
	case opMul, opDiv:
		return precMul
	case opConcat:
		return precConcat
	}
	return precPredicate
}

func (n *litNode) prec() int   { return precPrimary }
func (n *fieldNode) prec() int { return precPrimary }
func (n *negNode) prec() int   { return precUnary }
func (n *binNode) prec() int   { return n.op.prec() }
func (n *logicNode) prec() int {
	if n.and {
		return precAnd
	}
	return precOr
}
func (n *notNode) prec() int     { return precNot }
func (n *inNode) prec() int      { return precPredicate }
func (n *betweenNode) prec() int { return precPredicate }
func (n *likeNode) prec() int    { return precPredicate }
func (n *isNullNode) prec() int  { return precPredicate }
func (n *callNode) prec() int    { return precPrimary }

func (n *litNode) position() int     { return n.pos }
func (n *fieldNode) position() int   { return n.pos }
func (n *negNode) position() int     { return n.pos }
func (n *binNode) position() int     { return n.pos }
func (n *logicNode) position() int   { return n.pos }
func (n *notNode) position() int     { return n.pos }
func (n *inNode) position() int      { return n.pos }
func (n *betweenNode) position() int { return n.pos }
func (n *likeNode) position() int    { return n.pos }
func (n *isNullNode) position() int  { return n.pos }
func (n *callNode) position() int    { return n.pos }

// writeSub writes x, parenthesised when it binds more loosely than min.
func writeSub(b *strings.Builder, x node, min int) {
	if x.prec() < min {
		b.WriteByte('(')
		x.write(b)
		b.WriteByte(')')
		return
	}
	x.write(b)
}

func (n *litNode) write(b *strings.Builder) { b.WriteString(n.v.literal()) }

func (n *fieldNode) write(b *strings.Builder) { b.WriteString(quoteIdent(n.name)) }

func (n *negNode) write(b *strings.Builder) {
	b.WriteByte('-')
	if _, ok := n.x.(*negNode); ok {
		b.WriteByte(' ')
	} else if l, ok := n.x.(*litNode); ok && strings.HasPrefix(l.v.literal(), "-") {
		b.WriteByte(' ')
	}
	writeSub(b, n.x, precUnary)
}

func (n *binNode) write(b *strings.Builder) {
	p := n.op.prec()
	if n.op.isComparison() {
		writeSub(b, n.l, precAdd)
		b.WriteString(" " + n.op.String() + " ")
		writeSub(b, n.r, precAdd)
		return
	}
	writeSub(b, n.l, p)
	b.WriteString(" " + n.op.String() + " ")
	writeSub(b, n.r, p+1)
}

func (n *logicNode) write(b *strings.Builder) {
	sep, min := " OR ", precAnd
	if n.and {
		sep, min = " AND ", precNot
	}
	for i, x := range n.xs {
		if i > 0 {
			b.WriteString(sep)
		}
		writeSub(b, x, min)
	}
}

func (n *notNode) write(b *strings.Builder) {
	b.WriteString("NOT ")
	writeSub(b, n.x, precNot)
}

// writePredicate writes the operand of a predicate that NOT can negate (IN, BETWEEN, LIKE)
// and its keyword: "x NOT IN (".
func writePredicate(b *strings.Builder, x node, not bool, keyword string) {
	writeSub(b, x, precAdd)
	if not {
		b.WriteString(" NOT")
	}
	b.WriteString(keyword)
}

func (n *inNode) write(b *strings.Builder) {
	writePredicate(b, n.x, n.not, " IN (")
	for i, x := range n.list {
		if i > 0 {
			b.WriteString(", ")
		}
		x.write(b)
	}
	b.WriteByte(')')
}

func (n *betweenNode) write(b *strings.Builder) {
	writePredicate(b, n.x, n.not, " BETWEEN ")
	writeSub(b, n.lo, precAdd)
	b.WriteString(" AND ")
	writeSub(b, n.hi, precAdd)
}

func (n *likeNode) write(b *strings.Builder) {
	writePredicate(b, n.x, n.not, " LIKE ")
	writeSub(b, n.pattern, precAdd)
	if n.esc != nil {
		b.WriteString(" ESCAPE ")
		writeSub(b, n.esc, precAdd)
	}
}

func (n *isNullNode) write(b *strings.Builder) {
	writeSub(b, n.x, precAdd)
	if n.not {
		b.WriteString(" IS NOT NULL")
	} else {
		b.WriteString(" IS NULL")
	}
}

func (n *callNode) write(b *strings.Builder) {
	b.WriteString(n.fn.name)
	switch n.fn.form {
	case formNiladic:
		return
	case formSubstring:
		b.WriteByte('(')
		n.args[0].write(b)
		b.WriteString(" FROM ")
		n.args[1].write(b)
		if len(n.args) > 2 {
			b.WriteString(" FOR ")
			n.args[2].write(b)
		}
		b.WriteByte(')')
		return
	case formTrim:
		b.WriteByte('(')
		if n.mod != "BOTH" || len(n.args) > 1 {
			b.WriteString(n.mod + " ")
			if len(n.args) > 1 {
				writeSub(b, n.args[1], precAdd)
				b.WriteByte(' ')
			}
			b.WriteString("FROM ")
		}
		n.args[0].write(b)
		b.WriteByte(')')
		return
	case formPosition:
		b.WriteByte('(')
		writeSub(b, n.args[0], precAdd)
		b.WriteString(" IN ")
		writeSub(b, n.args[1], precAdd)
		b.WriteByte(')')
		return
	case formExtract:
		b.WriteString("(" + n.mod + " FROM ")
		n.args[0].write(b)
		b.WriteByte(')')
		return
	case formCast:
		b.WriteByte('(')
		n.args[0].write(b)
		b.WriteString(" AS " + n.mod + ")")
		return
	}
	b.WriteByte('(')
	for i, x := range n.args {
		if i > 0 {
			b.WriteString(", ")
		}
		x.write(b)
	}
	b.WriteByte(')')
}

// quoteIdent returns name as written in canonical form: bare when it is a
// plain identifier that is not reserved, otherwise "delimited".
func quoteIdent(name string) string {
	if isPlainIdent(name) && !reserved[strings.ToUpper(name)] {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

func isPlainIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if i == 0 && !isIdentStart(r) || !isIdentPart(r) {
			return false
		}
	}
	return true
}

// literal renders a constant in a form the lexer reads back to the same
// value.
func (v value) literal() string {
	switch v.k {
	case kindNull:
		return "NULL"
	case kindBool:
		if v.i != 0 {
			return "TRUE"
		}
		return "FALSE"
	case kindInt:
		return strconv.FormatInt(v.i, 10)
	case kindFloat:
		s := strconv.FormatFloat(v.f, 'g', -1, 64)
		if !strings.ContainsAny(s, ".eEn") { // n: NaN/Inf never reach here
			s += ".0"
		}
		return s
	case kindString:
		return "'" + strings.ReplaceAll(v.s, "'", "''") + "'"
	case kindDate:
		t := v.time()
		if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
			return "DATE '" + t.Format("2006-01-02") + "'"
		}
		return "TIMESTAMP '" + t.Format("2006-01-02 15:04:05.999999999") + "'"
	}
	return "NULL"
}

// formatTime is the text form of a date used by CAST and concatenation.
func formatTime(t time.Time) string {
	t = t.UTC()
	if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format("2006-01-02")
	}
	return t.Format("2006-01-02 15:04:05.999999999")
}
