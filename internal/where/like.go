package where

import (
	"strings"
	"unicode/utf8"
)

// likeShape selects the matching strategy of a compiled pattern.
type likeShape uint8

const (
	likeExact    likeShape = iota // no wildcards
	likePrefix                    // lit%
	likeSuffix                    // %lit
	likeContains                  // %lit%
	likeAll                       // % (matches any non-NULL string)
	likeGeneral                   // anything else
	likeNever                     // malformed: escape at the end
)

// likeTok is one element of a general pattern.
type likeTok struct {
	kind byte   // 'l' literal, '_' one character, '%' any run
	lit  string // for 'l'
}

// likeMatcher is a compiled LIKE pattern. It is immutable.
type likeMatcher struct {
	shape likeShape
	lit   string
	toks  []likeTok
}

// newLikeMatcher compiles pattern. esc is the escape character or -1.
// Wildcards are % (any run, possibly empty) and _ (one character);
// matching is case-sensitive. An escape character makes the next
// character literal; an escape at the very end makes the pattern match
// nothing.
func newLikeMatcher(pattern string, esc rune) *likeMatcher {
	var toks []likeTok
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			toks = append(toks, likeTok{kind: 'l', lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(pattern); {
		r, size := utf8.DecodeRuneInString(pattern[i:])
		switch {
		case esc >= 0 && r == esc:
			i += size
			if i >= len(pattern) {
				return &likeMatcher{shape: likeNever}
			}
			_, n := utf8.DecodeRuneInString(pattern[i:])
			lit.WriteString(pattern[i : i+n])
			i += n
			continue
		case r == '%':
			flush()
			if len(toks) == 0 || toks[len(toks)-1].kind != '%' {
				toks = append(toks, likeTok{kind: '%'})
			}
		case r == '_':
			flush()
			toks = append(toks, likeTok{kind: '_'})
		default:
			lit.WriteString(pattern[i : i+size])
		}
		i += size
	}
	flush()
	m := &likeMatcher{shape: likeGeneral, toks: toks}
	switch {
	case len(toks) == 0:
		m.shape, m.lit = likeExact, ""
	case len(toks) == 1 && toks[0].kind == 'l':
		m.shape, m.lit = likeExact, toks[0].lit
	case len(toks) == 1 && toks[0].kind == '%':
		m.shape = likeAll
	case len(toks) == 2 && toks[0].kind == 'l' && toks[1].kind == '%':
		m.shape, m.lit = likePrefix, toks[0].lit
	case len(toks) == 2 && toks[0].kind == '%' && toks[1].kind == 'l':
		m.shape, m.lit = likeSuffix, toks[1].lit
	case len(toks) == 3 && toks[0].kind == '%' && toks[1].kind == 'l' && toks[2].kind == '%':
		m.shape, m.lit = likeContains, toks[1].lit
	}
	return m
}

// match reports whether s matches the pattern.
func (m *likeMatcher) match(s string) bool {
	switch m.shape {
	case likeExact:
		return s == m.lit
	case likePrefix:
		return strings.HasPrefix(s, m.lit)
	case likeSuffix:
		return strings.HasSuffix(s, m.lit)
	case likeContains:
		return strings.Contains(s, m.lit)
	case likeAll:
		return true
	case likeNever:
		return false
	}
	return matchToks(m.toks, s)
}

// matchToks is the classic wildcard match with one backtracking point:
// every token other than % consumes a fixed sequence, so on a mismatch it
// is enough to let the most recent % absorb one more character. It runs
// in O(len(toks) * len(s)) time and never recurses.
func matchToks(toks []likeTok, s string) bool {
	ti, si := 0, 0
	starT, starS := -1, 0
	for {
		if ti < len(toks) {
			switch t := toks[ti]; t.kind {
			case '%':
				starT, starS = ti, si
				ti++
				continue
			case '_':
				if si < len(s) {
					_, n := utf8.DecodeRuneInString(s[si:])
					si += n
					ti++
					continue
				}
			default:
				if strings.HasPrefix(s[si:], t.lit) {
					si += len(t.lit)
					ti++
					continue
				}
			}
		} else if si == len(s) {
			return true
		}
		if starT < 0 || starS >= len(s) {
			return false
		}
		_, n := utf8.DecodeRuneInString(s[starS:])
		starS += n
		ti, si = starT+1, starS
	}
}
