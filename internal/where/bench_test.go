package where_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/where"
)

var benchSchema = where.Schema{
	{Name: "ID", Type: where.Integer},
	{Name: "NAME", Type: where.String},
	{Name: "POP", Type: where.Integer},
	{Name: "AREA", Type: where.Double},
}

// benchRows alternates matching and non-matching rows.
var benchRows = [][]any{
	{int64(1), "Avon", int64(5000), 12.5},
	{int64(2), "Bath", int64(800), 3.25},
	{int64(3), "Aldershot", int64(1200), 9.0},
	{int64(4), nil, int64(4000), nil},
}

func benchMatch(b *testing.B, clause string) {
	e, err := where.Parse(clause)
	if err != nil {
		b.Fatal(err)
	}
	p, err := e.Compile(benchSchema)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	n := 0
	for i := 0; b.Loop(); i++ {
		if p.Match(benchRows[i&3]) {
			n++
		}
	}
	_ = n
}

func BenchmarkMatchSimple(b *testing.B) {
	benchMatch(b, "POP > 1000 AND NAME LIKE 'A%'")
}

func BenchmarkMatchCompare(b *testing.B) {
	benchMatch(b, "POP > 1000")
}

func BenchmarkMatchOrChain(b *testing.B) {
	benchMatch(b, "NAME = 'x' OR NAME = 'y' OR AREA > 100 OR POP BETWEEN 1 AND 900")
}

func BenchmarkMatchLikeGeneral(b *testing.B) {
	benchMatch(b, "NAME LIKE '%l_e%s%'")
}

func BenchmarkMatchArithmetic(b *testing.B) {
	benchMatch(b, "POP / AREA > 100 AND -POP < 0")
}

func BenchmarkMatchFunction(b *testing.B) {
	benchMatch(b, "UPPER(NAME) = 'AVON'")
}

func BenchmarkMatchInSet1000(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("POP IN (")
	for i := range 1000 {
		fmt.Fprintf(&sb, "%d,", i*7)
	}
	sb.WriteString("5000)")
	benchMatch(b, sb.String())
}

func BenchmarkMatchInStrings(b *testing.B) {
	benchMatch(b, "NAME IN ('Avon', 'Bath', 'Cardiff', 'Dover', 'Exeter', 'Frome', 'Goole', 'Hull')")
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := where.Parse("POP > 1000 AND NAME LIKE 'A%' OR AREA BETWEEN 1 AND 2.5 AND UPPER(CODE) IN ('A', 'B')"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		e, err := where.Parse("POP > 1000 AND NAME LIKE 'A%' OR AREA BETWEEN 1 AND 2.5")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Compile(benchSchema); err != nil {
			b.Fatal(err)
		}
	}
}
