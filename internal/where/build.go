package where

import (
	"fmt"
	"strings"
)

// In returns the clause `field IN (v1, v2, …)` for Go values (int64,
// float64, string, time.Time; nil is NULL), exactly as Parse reads its
// canonical text. Callers that select rows by values they hold (related
// records, attachments) build their filter with it rather than with text,
// so the values reach a provider as parameters like any other literal.
// It fails when the clause would be longer than MaxClauseLen: split the
// values into chunks.
func In(field string, values []any) (*Expr, error) {
	if len(values) == 0 {
		return nil, fmt.Errorf("where: IN needs at least one value")
	}
	var b strings.Builder
	b.WriteString(quoteIdent(field))
	b.WriteString(" IN (")
	for i, v := range values {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(fromAny(v).literal())
	}
	b.WriteByte(')')
	return Parse(b.String())
}
