package where

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokKind classifies a token.
type tokKind uint8

const (
	tokEOF    tokKind = iota
	tokWord           // bare word: keyword or identifier
	tokQuoted         // "delimited identifier"
	tokInt            // 123
	tokFloat          // 1.5, 1e3, .5
	tokString         // 'text'
	tokOp             // punctuation: ( ) , + - * / || = <> != < <= > >=
)

// token is one lexeme. text is the decoded value: the identifier or string
// contents with doubled quotes undone, the number as written, or the
// operator. upper is the upper-cased word, set only for tokWord.
type token struct {
	kind  tokKind
	pos   int // byte offset of the first byte
	end   int // byte offset just past the last byte
	text  string
	upper string
}

// lexer turns a clause into tokens on demand.
type lexer struct {
	src string
	pos int
}

func isIdentStart(r rune) bool {
	return r == '_' || unicode.IsLetter(r)
}

func isIdentPart(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r)
}

func isSpace(b byte) bool {
	return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' || b == '\v'
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }

// next returns the next token or a *SyntaxError.
func (l *lexer) next() (token, error) {
	for l.pos < len(l.src) && isSpace(l.src[l.pos]) {
		l.pos++
	}
	start := l.pos
	if start >= len(l.src) {
		return token{kind: tokEOF, pos: start, end: start}, nil
	}
	c := l.src[start]
	switch {
	case c == '\'':
		s, err := l.quoted('\'')
		if err != nil {
			return token{}, err
		}
		return token{kind: tokString, pos: start, end: l.pos, text: s}, nil
	case c == '"':
		s, err := l.quoted('"')
		if err != nil {
			return token{}, err
		}
		if s == "" {
			return token{}, syntaxErr(start, "empty delimited identifier")
		}
		return token{kind: tokQuoted, pos: start, end: l.pos, text: s}, nil
	case isDigit(c) || (c == '.' && start+1 < len(l.src) && isDigit(l.src[start+1])):
		return l.number()
	}
	switch c {
	case '(', ')', ',', '+', '-', '*', '/', '=':
		return l.operator(start, ""), nil
	case '<':
		return l.operator(start, "=>"), nil
	case '>':
		return l.operator(start, "="), nil
	case '|':
		if strings.HasPrefix(l.src[start:], "||") {
			return l.operator(start, "|"), nil
		}
	case '!':
		if strings.HasPrefix(l.src[start:], "!=") {
			return l.operator(start, "="), nil
		}
	}
	r, size := utf8.DecodeRuneInString(l.src[start:])
	if r == utf8.RuneError && size <= 1 {
		return token{}, syntaxErr(start, "invalid UTF-8 byte")
	}
	if isIdentStart(r) {
		l.pos += size
		for l.pos < len(l.src) {
			r, size := utf8.DecodeRuneInString(l.src[l.pos:])
			if !isIdentPart(r) || (r == utf8.RuneError && size <= 1) {
				break
			}
			l.pos += size
		}
		w := l.src[start:l.pos]
		return token{kind: tokWord, pos: start, end: l.pos, text: w, upper: strings.ToUpper(w)}, nil
	}
	return token{}, syntaxErr(start, "unexpected character "+quoteForMsg(string(r)))
}

// quoted scans a literal delimited by q, where a doubled q stands for one.
func (l *lexer) quoted(q byte) (string, error) {
	start := l.pos
	l.pos++ // opening quote
	var b strings.Builder
	seg := l.pos
	for l.pos < len(l.src) {
		if l.src[l.pos] != q {
			l.pos++
			continue
		}
		if l.pos+1 < len(l.src) && l.src[l.pos+1] == q {
			b.WriteString(l.src[seg : l.pos+1])
			l.pos += 2
			seg = l.pos
			continue
		}
		if b.Len() == 0 {
			s := l.src[seg:l.pos]
			l.pos++
			return s, nil
		}
		b.WriteString(l.src[seg:l.pos])
		l.pos++
		return b.String(), nil
	}
	what := "string literal"
	if q == '"' {
		what = "delimited identifier"
	}
	return "", syntaxErr(start, "unterminated "+what)
}

// number scans an integer or decimal literal, with an optional exponent.
func (l *lexer) number() (token, error) {
	start := l.pos
	kind := tokInt
	for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
		l.pos++
	}
	if l.pos < len(l.src) && l.src[l.pos] == '.' {
		kind = tokFloat
		l.pos++
		for l.pos < len(l.src) && isDigit(l.src[l.pos]) {
			l.pos++
		}
	}
	if l.pos < len(l.src) && (l.src[l.pos] == 'e' || l.src[l.pos] == 'E') {
		p := l.pos + 1
		if p < len(l.src) && (l.src[p] == '+' || l.src[p] == '-') {
			p++
		}
		if p >= len(l.src) || !isDigit(l.src[p]) {
			return token{}, syntaxErr(l.pos, "malformed exponent in number")
		}
		for p < len(l.src) && isDigit(l.src[p]) {
			p++
		}
		l.pos = p
		kind = tokFloat
	}
	if l.pos < len(l.src) {
		r, _ := utf8.DecodeRuneInString(l.src[l.pos:])
		if isIdentPart(r) || r == '.' {
			return token{}, syntaxErr(start, "malformed number "+quoteForMsg(l.src[start:l.pos+1]))
		}
	}
	return token{kind: kind, pos: start, end: l.pos, text: l.src[start:l.pos]}, nil
}

// quoteForMsg quotes s for an error message, shortening long text.
func quoteForMsg(s string) string { return "'" + shorten(s) + "'" }

// shorten cuts s to at most 32 bytes, marking the cut with "...".
func shorten(s string) string {
	const max = 32
	if len(s) > max {
		cut := max
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	return s
}

// describe names a token for an error message.
func (t token) describe(src string) string {
	switch t.kind {
	case tokEOF:
		return "end of clause"
	case tokString:
		return "string " + shorten(src[t.pos:t.end])
	}
	return quoteForMsg(src[t.pos:t.end])
}

// operator reads the operator that starts at start: its first character and, when one of
// second follows, that too.
func (l *lexer) operator(start int, second string) token {
	l.pos = start + 1
	if l.pos < len(l.src) && strings.IndexByte(second, l.src[l.pos]) >= 0 {
		l.pos++
	}
	return token{kind: tokOp, pos: start, end: l.pos, text: l.src[start:l.pos]}
}
