package where_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/where"
)

// A constant LIKE pattern over MaxLikePattern bytes is refused when the clause is compiled, as a
// limit (SQLite refused its GLOB form over 50,000 bytes with an error that was a 500); one of
// MaxLikePattern bytes, and a pattern computed per row, are accepted.
func TestLikePatternLimit(t *testing.T) {
	for _, c := range []struct {
		clause string
		ok     bool
	}{
		{"NAME LIKE '" + strings.Repeat("%", where.MaxLikePattern) + "'", true},
		{"NAME LIKE '" + strings.Repeat("%", 50_010) + "'", false},
		{"NAME LIKE '" + strings.Repeat("a", where.MaxLikePattern/2) + "' || '" + strings.Repeat("b", where.MaxLikePattern/2+1) + "'", false},
		{"NAME LIKE NAME || '%'", true},
	} {
		e, err := where.Parse(c.clause)
		if err != nil {
			t.Fatalf("Parse %.40q: %v", c.clause, err)
		}
		_, err = e.Compile(schema)
		if c.ok != (err == nil) || (!c.ok && (!errors.Is(err, where.ErrLimit) || !strings.Contains(err.Error(), "longer than the limit of 10000 bytes"))) {
			t.Errorf("%.40q (%d bytes): %v", c.clause, len(c.clause), err)
		}
	}
}
