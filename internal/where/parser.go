package where

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Limits on what Parse accepts. They bound parse time, memory and
// recursion depth for hostile input.
const (
	// MaxClauseLen is the longest clause accepted, in bytes (64 KiB).
	MaxClauseLen = 64 << 10
	// MaxDepth bounds how deeply expressions nest: each parenthesis,
	// NOT, unary minus, function call and each operator of an
	// arithmetic/concatenation chain adds a level. AND/OR chains of any
	// length count as one level.
	MaxDepth = 256
	// MaxInList is the most items one IN list may hold.
	MaxInList = 100000
	// MaxLikePattern is the longest constant LIKE pattern, in bytes,
	// checked when a clause is compiled. A database is given the pattern
	// rewritten (SQLite's GLOB escapes a character in three bytes), and
	// SQLite refuses patterns over 50,000 bytes; no search needs more.
	MaxLikePattern = 10_000
)

// reserved words may not be used as bare field names; quote them
// ("DATE") to do so. Canonical output quotes them too.
var reserved = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "IN": true, "IS": true, "NULL": true,
	"LIKE": true, "ESCAPE": true, "BETWEEN": true, "TRUE": true, "FALSE": true,
	"DATE": true, "TIMESTAMP": true, "CURRENT_DATE": true, "CURRENT_TIMESTAMP": true,
	"FROM": true, "FOR": true, "AS": true, "BOTH": true, "LEADING": true, "TRAILING": true,
}

// bail carries a parse error out of the recursive descent.
type bail struct{ err *SyntaxError }

type parser struct {
	src   string
	lx    lexer
	tok   token  // current token
	ahead *token // one token of lookahead, when peeked
	depth int
}

// Parse parses a where clause. An empty or all-blank clause is valid and
// matches every row. Errors are *SyntaxError.
func Parse(clause string) (*Expr, error) {
	return parse(clause, MaxClauseLen)
}

// parse is Parse with the length limit as a parameter, so tests can reach
// the other limits.
func parse(clause string, maxLen int) (e *Expr, err error) {
	if len(clause) > maxLen {
		return nil, limitErr(maxLen, fmt.Sprintf("clause is %d bytes long; the limit is %d", len(clause), maxLen))
	}
	if strings.TrimSpace(clause) == "" {
		return &Expr{}, nil
	}
	p := &parser{src: clause, lx: lexer{src: clause}}
	defer func() {
		if r := recover(); r != nil {
			b, ok := r.(bail)
			if !ok {
				panic(r)
			}
			e, err = nil, b.err
		}
	}()
	p.advance()
	root := p.parseOr()
	if p.tok.kind != tokEOF {
		p.failf(p.tok.pos, "expected end of clause but found %s", p.tok.describe(p.src))
	}
	return newExpr(root), nil
}

func (p *parser) fail(err *SyntaxError) { panic(bail{err}) }

func (p *parser) failf(pos int, format string, args ...any) {
	p.fail(syntaxErr(pos, fmt.Sprintf(format, args...)))
}

func (p *parser) advance() {
	if p.ahead != nil {
		p.tok, p.ahead = *p.ahead, nil
		return
	}
	t, err := p.lx.next()
	if err != nil {
		p.fail(err.(*SyntaxError))
	}
	p.tok = t
}

func (p *parser) peek() token {
	if p.ahead == nil {
		t, err := p.lx.next()
		if err != nil {
			p.fail(err.(*SyntaxError))
		}
		p.ahead = &t
	}
	return *p.ahead
}

// isWord reports whether the current token is the bare keyword kw.
func (p *parser) isWord(kw string) bool { return p.tok.kind == tokWord && p.tok.upper == kw }

func (p *parser) isOp(op string) bool { return p.tok.kind == tokOp && p.tok.text == op }

// expectOp consumes op or fails.
func (p *parser) expectOp(op string) {
	if !p.isOp(op) {
		p.failf(p.tok.pos, "expected '%s' but found %s", op, p.tok.describe(p.src))
	}
	p.advance()
}

// expectWord consumes keyword kw or fails.
func (p *parser) expectWord(kw string) {
	if !p.isWord(kw) {
		p.failf(p.tok.pos, "expected %s but found %s", kw, p.tok.describe(p.src))
	}
	p.advance()
}

// enter records one more level of nesting.
func (p *parser) enter(pos int) {
	p.depth++
	if p.depth > MaxDepth {
		p.fail(limitErr(pos, fmt.Sprintf("expression nests deeper than %d levels", MaxDepth)))
	}
}

func (p *parser) leave() { p.depth-- }

// chain checks an operator chain of length n at the current depth.
func (p *parser) chain(n, pos int) {
	if p.depth+n > MaxDepth {
		p.fail(limitErr(pos, fmt.Sprintf("expression nests deeper than %d levels", MaxDepth)))
	}
}

// parseOr: and { OR and }
func (p *parser) parseOr() node {
	p.enter(p.tok.pos)
	defer p.leave()
	return p.parseLogic(false)
}

// parseAnd: not { AND not }
func (p *parser) parseAnd() node { return p.parseLogic(true) }

// parseLogic parses one chain of the grammar's OR level (and false) or AND level (and true),
// flattened into one logicNode; a single term is returned as it is.
func (p *parser) parseLogic(and bool) node {
	kw, term := "OR", p.parseAnd
	if and {
		kw, term = "AND", p.parseNot
	}
	pos := p.tok.pos
	x := term()
	if !p.isWord(kw) {
		return x
	}
	xs := appendFlat(nil, x, and)
	for p.isWord(kw) {
		p.advance()
		xs = appendFlat(xs, term(), and)
	}
	return &logicNode{pos: pos, and: and, xs: xs}
}

// appendFlat appends x to xs, splicing in the terms of a nested chain of
// the same operator.
func appendFlat(xs []node, x node, and bool) []node {
	if l, ok := x.(*logicNode); ok && l.and == and {
		return append(xs, l.xs...)
	}
	return append(xs, x)
}

// parseNot: NOT not | predicate
func (p *parser) parseNot() node {
	if !p.isWord("NOT") {
		return p.parsePredicate()
	}
	pos := p.tok.pos
	p.enter(pos)
	defer p.leave()
	p.advance()
	return &notNode{pos: pos, x: p.parseNot()}
}

var compOps = map[string]binOp{
	"=": opEq, "<>": opNe, "!=": opNe, "<": opLt, "<=": opLe, ">": opGt, ">=": opGe,
}

// parsePredicate: additive [ compOp additive | [NOT] IN (...) |
// [NOT] BETWEEN additive AND additive | [NOT] LIKE additive [ESCAPE additive] |
// IS [NOT] NULL ]
func (p *parser) parsePredicate() node {
	pos := p.tok.pos
	x := p.parseAdd()
	if p.tok.kind == tokOp {
		if op, ok := compOps[p.tok.text]; ok {
			p.advance()
			return &binNode{pos: pos, op: op, l: x, r: p.parseAdd()}
		}
		return x
	}
	if p.tok.kind != tokWord {
		return x
	}
	if p.isWord("IS") {
		p.advance()
		not := false
		if p.isWord("NOT") {
			not = true
			p.advance()
		}
		p.expectWord("NULL")
		return &isNullNode{pos: pos, not: not, x: x}
	}
	not := false
	if p.isWord("NOT") {
		not = true
		p.advance()
		if !p.isWord("IN") && !p.isWord("BETWEEN") && !p.isWord("LIKE") {
			p.failf(p.tok.pos, "expected IN, BETWEEN or LIKE after NOT but found %s", p.tok.describe(p.src))
		}
	}
	switch p.tok.upper {
	case "IN":
		p.advance()
		p.expectOp("(")
		var list []node
		for {
			if len(list) == MaxInList {
				p.fail(limitErr(p.tok.pos, fmt.Sprintf("IN list has more than %d items", MaxInList)))
			}
			list = append(list, p.parseOr())
			if !p.isOp(",") {
				break
			}
			p.advance()
		}
		p.expectOp(")")
		return &inNode{pos: pos, not: not, x: x, list: list}
	case "BETWEEN":
		p.advance()
		lo := p.parseAdd()
		p.expectWord("AND")
		hi := p.parseAdd()
		return &betweenNode{pos: pos, not: not, x: x, lo: lo, hi: hi}
	case "LIKE":
		p.advance()
		n := &likeNode{pos: pos, not: not, x: x, pattern: p.parseAdd()}
		if p.isWord("ESCAPE") {
			p.advance()
			n.esc = p.parseAdd()
		}
		return n
	}
	return x
}

// parseAdd: mul { (+|-) mul }
func (p *parser) parseAdd() node { return p.parseChain(p.parseMul, opAdd, opSub) }

// parseMul: concat { (*|/) concat }
func (p *parser) parseMul() node { return p.parseChain(p.parseConcat, opMul, opDiv) }

// parseConcat: unary { || unary }
func (p *parser) parseConcat() node { return p.parseChain(p.parseUnary, opConcat) }

// parseChain parses operand { op operand } for the left-associative operators ops.
func (p *parser) parseChain(operand func() node, ops ...binOp) node {
	x := operand()
	for n := 1; ; n++ {
		i := slices.IndexFunc(ops, func(op binOp) bool { return p.isOp(binOpText[op]) })
		if i < 0 {
			return x
		}
		p.chain(n, p.tok.pos)
		p.advance()
		x = &binNode{pos: x.position(), op: ops[i], l: x, r: operand()}
	}
}

// parseUnary: - unary | + unary | primary
func (p *parser) parseUnary() node {
	if p.isOp("-") || p.isOp("+") {
		pos := p.tok.pos
		neg := p.tok.text == "-"
		p.enter(pos)
		defer p.leave()
		p.advance()
		x := p.parseUnary()
		if !neg {
			return x
		}
		return &negNode{pos: pos, x: x}
	}
	return p.parsePrimary()
}

func (p *parser) parsePrimary() node {
	t := p.tok
	switch t.kind {
	case tokInt:
		p.advance()
		if i, err := strconv.ParseInt(t.text, 10, 64); err == nil {
			return &litNode{pos: t.pos, v: intValue(i)}
		}
		return &litNode{pos: t.pos, v: floatValue(p.parseFloat(t))}
	case tokFloat:
		p.advance()
		return &litNode{pos: t.pos, v: floatValue(p.parseFloat(t))}
	case tokString:
		p.advance()
		return &litNode{pos: t.pos, v: strValue(t.text)}
	case tokQuoted:
		p.advance()
		return &fieldNode{pos: t.pos, name: t.text}
	case tokOp:
		if t.text == "(" {
			p.advance()
			x := p.parseOr()
			p.expectOp(")")
			return x
		}
	case tokWord:
		return p.parseWord()
	}
	p.failf(t.pos, "expected expression but found %s", t.describe(p.src))
	return nil
}

func (p *parser) parseFloat(t token) float64 {
	f, err := strconv.ParseFloat(t.text, 64)
	if err != nil && (math.IsInf(f, 0) || math.IsNaN(f)) {
		p.failf(t.pos, "number %s is out of range", quoteForMsg(t.text))
	}
	return f
}

// parseWord handles a primary that starts with a bare word: NULL, TRUE,
// FALSE, a date literal, a function call or a field name.
func (p *parser) parseWord() node {
	t := p.tok
	switch t.upper {
	case "NULL":
		p.advance()
		return &litNode{pos: t.pos, v: nullValue}
	case "TRUE", "FALSE":
		p.advance()
		return &litNode{pos: t.pos, v: boolValue(t.upper == "TRUE")}
	case "DATE", "TIMESTAMP":
		if p.peek().kind == tokString {
			p.advance()
			s := p.tok
			p.advance()
			d, ok := parseDateText(s.text)
			if !ok {
				p.failf(s.pos, "invalid %s literal %s", t.upper, quoteForMsg(s.text))
			}
			return &litNode{pos: t.pos, v: dateValue(d)}
		}
	}
	if fn := lookupFunc(t.upper); fn != nil {
		if fn.form == formNiladic {
			p.advance()
			if p.isOp("(") && p.peek().kind == tokOp && p.peek().text == ")" {
				p.advance()
				p.advance()
			}
			return &callNode{pos: t.pos, fn: fn}
		}
		if p.peek().kind == tokOp && p.peek().text == "(" {
			return p.parseCall(fn)
		}
	} else if p.peek().kind == tokOp && p.peek().text == "(" {
		p.failf(t.pos, "unknown function %s", quoteForMsg(t.text))
	}
	if reserved[t.upper] {
		p.failf(t.pos, "expected expression but found %s", t.describe(p.src))
	}
	p.advance()
	return &fieldNode{pos: t.pos, name: t.text}
}

// parseCall parses the argument list of fn; the current token is its name.
func (p *parser) parseCall(fn *funcDef) node {
	name := p.tok
	p.enter(name.pos)
	defer p.leave()
	p.advance() // name
	p.advance() // (
	n := &callNode{pos: name.pos, fn: fn}
	switch fn.form {
	case formSubstring:
		n.args = append(n.args, p.parseOr())
		if p.isOp(",") {
			p.advance()
			n.args = append(n.args, p.parseOr())
			if p.isOp(",") {
				p.advance()
				n.args = append(n.args, p.parseOr())
			}
		} else {
			p.expectWord("FROM")
			n.args = append(n.args, p.parseOr())
			if p.isWord("FOR") {
				p.advance()
				n.args = append(n.args, p.parseOr())
			}
		}
	case formTrim:
		p.parseTrim(n)
	case formPosition:
		n.args = append(n.args, p.parseAdd())
		p.expectWord("IN")
		n.args = append(n.args, p.parseAdd())
	case formExtract:
		if p.tok.kind != tokWord || !extractParts[p.tok.upper] {
			p.failf(p.tok.pos, "expected YEAR, MONTH, DAY, HOUR, MINUTE or SECOND but found %s", p.tok.describe(p.src))
		}
		n.mod = p.tok.upper
		p.advance()
		p.expectWord("FROM")
		n.args = append(n.args, p.parseOr())
	case formCast:
		n.args = append(n.args, p.parseOr())
		p.expectWord("AS")
		target := ""
		if p.tok.kind == tokWord {
			target = castTypes[p.tok.upper]
		}
		if target == "" {
			p.failf(p.tok.pos, "expected INTEGER, FLOAT, CHAR, DATE or TIMESTAMP but found %s", p.tok.describe(p.src))
		}
		n.mod = target
		p.advance()
	default:
		if !p.isOp(")") {
			for {
				if fn.max >= 0 && len(n.args) == fn.max {
					p.failf(p.tok.pos, "too many arguments to %s: it takes %s", fn.name, fn.arity())
				}
				n.args = append(n.args, p.parseOr())
				if !p.isOp(",") {
					break
				}
				p.advance()
			}
		}
		if len(n.args) < fn.min {
			p.failf(p.tok.pos, "too few arguments to %s: it takes %s", fn.name, fn.arity())
		}
	}
	p.expectOp(")")
	return n
}

// parseTrim parses TRIM([[BOTH|LEADING|TRAILING] [chars] FROM] s).
// args are [s] or [s, chars]; mod is the side.
func (p *parser) parseTrim(n *callNode) {
	n.mod = "BOTH"
	// BOTH, LEADING and TRAILING are reserved, so here they can only be
	// the side.
	if p.tok.kind == tokWord && (p.tok.upper == "BOTH" || p.tok.upper == "LEADING" || p.tok.upper == "TRAILING") {
		n.mod = p.tok.upper
		p.advance()
		if p.isWord("FROM") {
			p.advance()
			n.args = []node{p.parseOr()}
			return
		}
		chars := p.parseAdd()
		p.expectWord("FROM")
		n.args = []node{p.parseOr(), chars}
		return
	}
	first := p.parseOr()
	if p.isWord("FROM") {
		p.advance()
		n.args = []node{p.parseOr(), first}
		return
	}
	n.args = []node{first}
}

var extractParts = map[string]bool{
	"YEAR": true, "MONTH": true, "DAY": true, "HOUR": true, "MINUTE": true, "SECOND": true,
}

// castTypes maps accepted CAST target names to their canonical name.
var castTypes = map[string]string{
	"INTEGER": "INTEGER", "INT": "INTEGER", "SMALLINT": "INTEGER", "BIGINT": "INTEGER",
	"FLOAT": "FLOAT", "DOUBLE": "FLOAT", "REAL": "FLOAT",
	"CHAR": "CHAR", "VARCHAR": "CHAR", "TEXT": "CHAR",
	"DATE": "DATE", "TIMESTAMP": "TIMESTAMP",
}

// dateLayouts are the accepted forms of date and timestamp text, all read
// as UTC.
var dateLayouts = []string{
	"2006-01-02",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02T15:04:05.999999999Z07:00",
}

// parseDateText reads a date or timestamp literal's text. Years run from 0001 as in SQL (and
// PostgreSQL): year 0000, which Go's proleptic calendar accepts, is not a date.
func parseDateText(s string) (time.Time, bool) {
	s = strings.TrimSpace(s)
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			if t.Year() < 1 {
				return time.Time{}, false
			}
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}
