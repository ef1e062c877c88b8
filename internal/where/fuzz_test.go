package where_test

import (
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/where"
)

// FuzzParse checks that Parse never panics, that the canonical form of an
// accepted clause parses again to the same canonical form, and that
// compiling and matching whatever parses never panics either.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"",
		"POP > 1000 AND NAME LIKE 'A%'",
		"a = 1 or b = 2 and not c = 3",
		"(a + b) * c - -d || 'x' = 'y'",
		"x IN (1, 2.5, NULL, 'x') AND y NOT IN (DATE '2020-01-02')",
		"x NOT BETWEEN -1e3 AND .5e-2 OR x IS NOT NULL",
		`code LIKE 'A\_%' ESCAPE '\' AND "Quoted ""Name""" <> 'it''s'`,
		"SUBSTRING(name FROM 2 FOR 3) = SUBSTRING(name, 1, 2)",
		"TRIM(LEADING 'x' FROM name) = TRIM(name) AND TRIM('y' FROM name) = ''",
		"POSITION('a' IN name) > 0 AND CHAR_LENGTH(name) = LENGTH(code)",
		"CONCAT(a, b, c) = 'abc' AND ABS(x) + ROUND(y, 2) - FLOOR(z) * CEILING(w) / MOD(p, 3) > POWER(2, SQRT(4))",
		"CAST(x AS INTEGER) = 1 AND CAST(d AS DATE) < CURRENT_DATE AND t <= CURRENT_TIMESTAMP",
		"EXTRACT(YEAR FROM d) = 2020 AND d >= TIMESTAMP '2020-01-02 03:04:05.123'",
		"D + 1 > CURRENT_DATE - 30.5 AND D - D = 0 AND 2 + D < DATE '2021-01-01'",
		"NOT NOT (ACTIVE) AND (ACTIVE = TRUE OR ACTIVE = FALSE)",
		"((((a = 1))))",
		"a = 99999999999999999999 OR b = 1e308",
		"Ωmega = 'ünïcode' AND \"DATE\" IS NULL",
		"POP = 'abc",
		"POP IN (",
		"\xff = 1",
	} {
		f.Add(s)
	}
	schema := where.Schema{
		{Name: "POP", Type: where.Integer},
		{Name: "NAME", Type: where.String},
		{Name: "CODE", Type: where.String},
		{Name: "X", Type: where.Double},
		{Name: "D", Type: where.Date},
		{Name: "ACTIVE", Type: where.Boolean},
		{Name: "A", Type: where.Integer},
		{Name: "B", Type: where.Integer},
	}
	row := []any{int64(1200), "Avon", nil, 2.5, time.Date(2020, 1, 2, 0, 0, 0, 0, time.UTC), true, int64(-7), int64(0)}
	f.Fuzz(func(t *testing.T, clause string) {
		e, err := where.Parse(clause)
		if err != nil {
			return
		}
		s1 := e.String()
		e2, err := where.Parse(s1)
		if err != nil {
			t.Fatalf("canonical form of %q does not parse: %q: %v", clause, s1, err)
		}
		if s2 := e2.String(); s2 != s1 {
			t.Fatalf("canonical form unstable for %q:\n%q\n%q", clause, s1, s2)
		}
		p, err := e.Compile(schema)
		if err != nil {
			return
		}
		got := p.Match(row)
		p2, err := e2.Compile(schema)
		if err != nil {
			t.Fatalf("canonical %q does not compile: %v", s1, err)
		}
		if p2.Match(row) != got && !volatile(e) {
			t.Fatalf("canonical %q matches differently from %q", s1, clause)
		}
		p.Match(nil)
		p.Match([]any{nil, nil, nil, nil, nil, nil, nil, nil})
	})
}

// volatile reports whether a clause's result may change between two
// evaluations (it reads the clock).
func volatile(e *where.Expr) bool {
	s := e.String()
	return containsWord(s, "CURRENT_DATE") || containsWord(s, "CURRENT_TIMESTAMP")
}

func containsWord(s, w string) bool {
	for i := 0; i+len(w) <= len(s); i++ {
		if s[i:i+len(w)] == w {
			return true
		}
	}
	return false
}
