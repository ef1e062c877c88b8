package proj

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ErrInvalid is wrapped by the error for a spatial reference given as text that is not a
// well-known text of a coordinate system ("foo", "WGS", "EPSG:4326", an unbalanced bracket):
// both engines refuse it before anything else reads it, and the REST API answers it with
// 400 "Invalid spatial reference", as ArcGIS does.
var ErrInvalid = errors.New("proj: invalid spatial reference")

// MaxWKTDepth is how deeply the elements of a WKT may nest. The deepest real texts (a WKT2
// BOUNDCRS of a projected system, with its transformation) nest about 6 levels.
const MaxWKTDepth = 32

// wktNode is one element of a well-known text: KEYWORD[value, value, …], where each value is
// a quoted string, a number, a bare word (an enumeration: north, Cartesian) or an element.
type wktNode struct {
	keyword string // as written
	values  []wktValue
}

// wktValue is one value of an element: exactly one of node, text (a quoted string or a bare
// word) and num is meaningful, as kind says.
type wktValue struct {
	kind wktKind
	node *wktNode
	text string
	num  float64
}

type wktKind int

const (
	wktString wktKind = iota // "quoted"
	wktWord                  // an enumeration: north, EAST, Cartesian
	wktNumber
	wktElement
)

// crsKeywords are the keywords a coordinate system's WKT starts with: WKT1 (OGC 01-009 and
// Esri's) and WKT2 (ISO 19162:2015 and 2019, long and short forms).
var crsKeywords = map[string]bool{
	"GEOGCS": true, "PROJCS": true, "GEOCCS": true, "VERT_CS": true, "VERTCS": true, "COMPD_CS": true,
	"LOCAL_CS": true, "FITTED_CS": true,
	"GEOGCRS": true, "GEOGRAPHICCRS": true, "GEODCRS": true, "GEODETICCRS": true, "PROJCRS": true,
	"PROJECTEDCRS": true, "VERTCRS": true, "VERTICALCRS": true, "COMPOUNDCRS": true, "BOUNDCRS": true,
	"ENGCRS": true, "ENGINEERINGCRS": true, "DERIVEDPROJCRS": true, "DERIVEDPROJECTEDCRS": true,
	"IMAGECRS": true, "PARAMETRICCRS": true, "TIMECRS": true,
}

// parseWKT reads a well-known text of a coordinate system, WKT1 or WKT2, into its tree. Text
// that is not one — a name, a code, a PROJ string, an element that is not a coordinate system,
// unbalanced brackets, anything after the closing bracket — is an error wrapping ErrInvalid.
// The grammar is the one both versions share: a keyword, an opening bracket ("[" or "("),
// values separated by commas, the matching closing bracket; strings in double quotes, a
// doubled quote standing for one; whitespace between tokens.
func parseWKT(text string) (*wktNode, error) {
	p := wktParser{s: text}
	p.space()
	n, err := p.element(0)
	if err != nil {
		return nil, err
	}
	p.space()
	if p.i < len(p.s) {
		return nil, p.fail("text after the end of the WKT")
	}
	if !crsKeywords[strings.ToUpper(n.keyword)] {
		return nil, fmt.Errorf("%w: %s is not the WKT of a coordinate system", ErrInvalid, quoteWKT(n.keyword))
	}
	return n, nil
}

type wktParser struct {
	s string
	i int
}

func (p *wktParser) fail(what string) error {
	return fmt.Errorf("%w: not a WKT: %s at offset %d", ErrInvalid, what, p.i)
}

func (p *wktParser) space() {
	for p.i < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.i]) >= 0 {
		p.i++
	}
}

// word reads a keyword or bare word: letters, digits and underscores, starting with a letter.
func (p *wktParser) word() string {
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		if c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || p.i > start && c >= '0' && c <= '9' {
			p.i++
			continue
		}
		break
	}
	return p.s[start:p.i]
}

func (p *wktParser) element(depth int) (*wktNode, error) {
	if depth >= MaxWKTDepth {
		return nil, p.fail(fmt.Sprintf("elements nested more than %d deep", MaxWKTDepth))
	}
	kw := p.word()
	if kw == "" {
		return nil, p.fail("a keyword expected")
	}
	p.space()
	if p.i >= len(p.s) || p.s[p.i] != '[' && p.s[p.i] != '(' {
		return nil, p.fail("an opening bracket expected after " + quoteWKT(kw))
	}
	closing := byte(']')
	if p.s[p.i] == '(' {
		closing = ')'
	}
	p.i++
	n := &wktNode{keyword: kw}
	for {
		p.space()
		v, err := p.value(depth)
		if err != nil {
			return nil, err
		}
		n.values = append(n.values, v)
		p.space()
		if p.i >= len(p.s) {
			return nil, p.fail("the text ends inside " + quoteWKT(kw))
		}
		switch p.s[p.i] {
		case ',':
			p.i++
			continue
		case closing:
			p.i++
			return n, nil
		}
		return nil, p.fail(fmt.Sprintf("%q or %q expected in %s", ',', closing, quoteWKT(kw)))
	}
}

func (p *wktParser) value(depth int) (wktValue, error) {
	if p.i >= len(p.s) {
		return wktValue{}, p.fail("a value expected")
	}
	switch c := p.s[p.i]; {
	case c == '"':
		p.i++
		start, doubled := p.i, false
		for {
			j := strings.IndexByte(p.s[p.i:], '"')
			if j < 0 {
				return wktValue{}, p.fail("a string without its closing quote")
			}
			p.i += j + 1
			if p.i < len(p.s) && p.s[p.i] == '"' { // "" is a quote inside the string
				doubled = true
				p.i++
				continue
			}
			text := p.s[start : p.i-1]
			if doubled {
				text = strings.ReplaceAll(text, `""`, `"`)
			}
			return wktValue{kind: wktString, text: text}, nil
		}
	case c == '+' || c == '-' || c == '.' || c >= '0' && c <= '9':
		start := p.i
		for p.i < len(p.s) && strings.IndexByte("+-.0123456789eE", p.s[p.i]) >= 0 {
			p.i++
		}
		f, err := strconv.ParseFloat(p.s[start:p.i], 64)
		if err != nil {
			p.i = start
			return wktValue{}, p.fail("a malformed number")
		}
		return wktValue{kind: wktNumber, num: f}, nil
	}
	start := p.i
	w := p.word()
	if w == "" {
		return wktValue{}, p.fail("a value expected")
	}
	p.space()
	if p.i < len(p.s) && (p.s[p.i] == '[' || p.s[p.i] == '(') {
		p.i = start
		n, err := p.element(depth + 1)
		if err != nil {
			return wktValue{}, err
		}
		return wktValue{kind: wktElement, node: n}, nil
	}
	return wktValue{kind: wktWord, text: w}, nil
}

// quoteWKT quotes a piece of a client's text for an error, cut to 40 characters.
func quoteWKT(s string) string {
	if len(s) > 40 {
		s = s[:40] + "…"
	}
	return strconv.Quote(s)
}

// is reports whether the element's keyword is one of keywords (upper case).
func (n *wktNode) is(keywords ...string) bool {
	for _, k := range keywords {
		if strings.EqualFold(n.keyword, k) {
			return true
		}
	}
	return false
}

// child returns the first child element with one of keywords, or nil.
func (n *wktNode) child(keywords ...string) *wktNode {
	for _, v := range n.values {
		if v.kind == wktElement && v.node.is(keywords...) {
			return v.node
		}
	}
	return nil
}

// children returns the child elements with one of keywords.
func (n *wktNode) children(keywords ...string) []*wktNode {
	var out []*wktNode
	for _, v := range n.values {
		if v.kind == wktElement && v.node.is(keywords...) {
			out = append(out, v.node)
		}
	}
	return out
}

// name is the element's first value when it is a string (the name of a system, datum,
// method, parameter), else "".
func (n *wktNode) name() string {
	if len(n.values) > 0 && n.values[0].kind == wktString {
		return n.values[0].text
	}
	return ""
}

// num is the i-th value as a number; ok is false when it is not one.
func (n *wktNode) num(i int) (float64, bool) {
	if i < len(n.values) && n.values[i].kind == wktNumber {
		return n.values[i].num, true
	}
	return 0, false
}

// word is the i-th value when it is a bare word, else "".
func (n *wktNode) word(i int) string {
	if i < len(n.values) && n.values[i].kind == wktWord {
		return n.values[i].text
	}
	return ""
}

// id returns the authority and code of the element's own AUTHORITY (WKT1) or ID (WKT2)
// ("EPSG", 3857); code 0 when it has none or the code is not a number.
func (n *wktNode) id() (string, int) {
	a := n.child("AUTHORITY", "ID")
	if a == nil || len(a.values) < 2 {
		return "", 0
	}
	var code int
	switch v := a.values[1]; v.kind {
	case wktNumber:
		code = int(v.num)
	case wktString:
		code, _ = strconv.Atoi(strings.TrimSpace(v.text))
	}
	return strings.ToUpper(a.name()), code
}
