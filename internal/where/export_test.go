package where

import (
	"strconv"
	"strings"
)

// InListClause returns "column IN (0,1,…,n-1)": a clause with an IN list of n integers, for the
// tests of the IN-list limit inside and outside the package.
func InListClause(column string, n int) string {
	var b strings.Builder
	b.WriteString(column + " IN (")
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(i))
	}
	b.WriteString(")")
	return b.String()
}
