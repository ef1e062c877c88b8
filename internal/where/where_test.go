package where_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mapfarm/mapfarm/internal/where"
)

// schema and rows are the small dataset the table tests run against.
var schema = where.Schema{
	{Name: "ID", Type: where.Integer},
	{Name: "NAME", Type: where.String},
	{Name: "POP", Type: where.Integer},
	{Name: "AREA", Type: where.Double},
	{Name: "CODE", Type: where.String},
	{Name: "FOUNDED", Type: where.Date},
	{Name: "ACTIVE", Type: where.Boolean},
}

func day(y int, m time.Month, d, h, mi, s int) time.Time {
	return time.Date(y, m, d, h, mi, s, 0, time.UTC)
}

var rows = [][]any{
	{int64(1), "Avon", int64(5000), 12.5, "A1", day(1900, 5, 1, 0, 0, 0), true},
	{int64(2), "Bath", int64(800), 3.25, "B2", day(1850, 1, 15, 0, 0, 0), false},
	{int64(3), "avalon", int64(1200), nil, "A_3", day(2001, 12, 31, 23, 59, 59), true},
	{int64(4), "Cardiff", nil, 140.0, nil, nil, nil},
	{int64(5), "Ælfwood", int64(300), 0.5, "Æ%", day(2020, 2, 29, 0, 0, 0), true},
	{int64(6), nil, int64(1000), 10.0, "C100", day(1999, 6, 30, 12, 0, 0), false},
	{int64(7), "O'Brien", int64(2500), 7.75, "D'4", day(2010, 1, 1, 0, 0, 0), true},
	{int64(8), "Dover", int64(-50), -1.5, "  pad  ", day(1066, 10, 14, 0, 0, 0), false},
	{int64(9), "ava", int64(1001), 1001.0, "a%b", day(2000, 1, 1, 0, 0, 0), true},
	{int64(10), "", int64(0), 0.0, "", day(1970, 1, 1, 0, 0, 0), false},
}

// matching returns the IDs of the rows p matches.
func matching(p *where.Predicate) []int {
	ids := []int{}
	for _, r := range rows {
		if p.Match(r) {
			ids = append(ids, int(r[0].(int64)))
		}
	}
	return ids
}

func ids(xs ...int) []int { return xs }

var all = ids(1, 2, 3, 4, 5, 6, 7, 8, 9, 10)

func TestMatch(t *testing.T) {
	tests := []struct {
		clause string
		want   []int
	}{
		{"", all},
		{"   \t\n", all},
		{"POP > 1000", ids(1, 3, 7, 9)},
		{"POP >= 1000", ids(1, 3, 6, 7, 9)},
		{"POP < 0", ids(8)},
		{"POP <> 1000", ids(1, 2, 3, 5, 7, 8, 9, 10)},
		{"POP != 1000", ids(1, 2, 3, 5, 7, 8, 9, 10)},
		{"pop = 1000", ids(6)},
		{"NAME = 'Avon'", ids(1)},
		{"NAME = 'avon'", ids()},
		{"UPPER(NAME) = 'AVON'", ids(1)},
		{"LOWER(NAME) LIKE 'av%'", ids(1, 3, 9)},
		{"NAME LIKE 'A%'", ids(1)},
		{"NAME LIKE '%n'", ids(1, 3, 7)},
		{"NAME LIKE '_a%'", ids(2, 4)},
		{"NAME LIKE '%'", ids(1, 2, 3, 4, 5, 7, 8, 9, 10)},
		{"NAME NOT LIKE '%a%'", ids(1, 5, 7, 8, 10)},
		{`CODE LIKE 'A\_%' ESCAPE '\'`, ids(3)},
		{"CODE LIKE '%!%%' ESCAPE '!'", ids(5, 9)},
		{"CODE LIKE '__'", ids(1, 2, 5)},
		{"NAME LIKE 'a%a%'", ids(3, 9)},
		{"NAME LIKE '%v_l%'", ids(3)},
		{"NAME IS NULL", ids(6)},
		{"NAME IS NOT NULL", ids(1, 2, 3, 4, 5, 7, 8, 9, 10)},
		{"POP IS NULL OR AREA IS NULL", ids(3, 4)},
		{"POP IN (800, 1000, 5000)", ids(1, 2, 6)},
		{"POP NOT IN (800, 1000, 5000)", ids(3, 5, 7, 8, 9, 10)},
		{"POP IN (800, NULL)", ids(2)},
		{"POP NOT IN (800, NULL)", ids()},
		{"NAME IN ('Avon', 'Bath', 'nope')", ids(1, 2)},
		{"AREA IN (12.5, 10)", ids(1, 6)},
		{"POP IN (1000.0, 300)", ids(5, 6)},
		{"POP IN (-50)", ids(8)},
		{"POP BETWEEN 800 AND 1200", ids(2, 3, 6, 9)},
		{"POP NOT BETWEEN 800 AND 1200", ids(1, 5, 7, 8, 10)},
		{"AREA BETWEEN 0 AND 10", ids(2, 5, 6, 7, 10)},
		{"NOT POP > 1000", ids(2, 5, 6, 8, 10)},
		{"NOT (POP > 1000 OR NAME = 'Bath')", ids(5, 8, 10)},
		{"POP > 1000 AND NAME LIKE 'A%'", ids(1)},
		{"POP > 1000 OR AREA > 100", ids(1, 3, 4, 7, 9)},
		{"POP = 800 OR POP = 300 AND AREA > 1", ids(2)},
		{"(POP = 800 OR POP = 300) AND AREA > 0.4", ids(2, 5)},
		{"POP + 1 = 1001", ids(6)},
		{"POP * 2 > 5000", ids(1)},
		{"POP / 3 = 333", ids(6, 9)},
		{"POP / 3.0 > 333.4", ids(1, 3, 7, 9)},
		{"POP / 0 IS NULL", all},
		{"-POP > 0", ids(8)},
		{"- -POP = 800", ids(2)},
		{"POP - AREA > 999", ids(1, 7)},
		{"2 * (POP + 50) = 1700", ids(2)},
		{"NAME || CODE = 'AvonA1'", ids(1)},
		{"NAME || ID = 'Bath2'", ids(2)},
		{"CONCAT(NAME, '-', CODE) = 'Bath-B2'", ids(2)},
		{"CHAR_LENGTH(NAME) = 4", ids(1, 2)},
		{"LENGTH(NAME) = 7", ids(4, 5, 7)},
		{"SUBSTRING(NAME FROM 1 FOR 2) = 'av'", ids(3, 9)},
		{"SUBSTRING(NAME, 2) = 'ath'", ids(2)},
		{"SUBSTRING(NAME FROM 0 FOR 3) = 'Av'", ids(1)},
		{"TRIM(CODE) = 'pad'", ids(8)},
		{"TRIM(LEADING ' ' FROM CODE) = 'pad  '", ids(8)},
		{"TRIM(TRAILING 'f' FROM NAME) = 'Cardi'", ids(4)},
		{"TRIM(BOTH FROM CODE) = 'pad'", ids(8)},
		{"TRIM('A' FROM CODE) = '1'", ids(1)},
		{"POSITION('v' IN NAME) = 2", ids(1, 3, 9)},
		{"POSITION('wood' IN NAME) = 4", ids(5)},
		{"ABS(POP) = 50", ids(8)},
		{"ROUND(AREA) = 13", ids(1)},
		{"ROUND(AREA, 1) = 3.3", ids(2)},
		{"ROUND(POP, -3) = 1000", ids(2, 3, 6, 9)},
		{"FLOOR(AREA) = -2", ids(8)},
		{"CEILING(AREA) = 8", ids(7)},
		{"CEIL(AREA) = 8", ids(7)},
		{"MOD(POP, 7) = 0", ids(9, 10)},
		{"POWER(POP, 2) = 1000000", ids(6)},
		{"SQRT(POP) = 0", ids(10)},
		{"SIGN(AREA) = -1", ids(8)},
		{"EXTRACT(YEAR FROM FOUNDED) = 2020", ids(5)},
		{"EXTRACT(MONTH FROM FOUNDED) = 1", ids(2, 7, 9, 10)},
		{"EXTRACT(HOUR FROM FOUNDED) = 12", ids(6)},
		{"EXTRACT(SECOND FROM FOUNDED) = 59", ids(3)},
		{"FOUNDED > DATE '2000-01-01'", ids(3, 5, 7)},
		{"FOUNDED >= TIMESTAMP '2000-01-01 00:00:00'", ids(3, 5, 7, 9)},
		{"FOUNDED < date '1900-05-01'", ids(2, 8)},
		{"FOUNDED = '2020-02-29'", ids(5)},
		{"FOUNDED BETWEEN DATE '1999-01-01' AND DATE '2001-12-31'", ids(6, 9)},
		{"FOUNDED IN (DATE '2020-02-29', DATE '1970-01-01')", ids(5, 10)},
		{"FOUNDED = DATE '1999-06-30 12:00:00'", ids(6)},
		{"FOUNDED + 1 = DATE '2020-03-01'", ids(5)},
		{"1 + FOUNDED = DATE '2020-03-01'", ids(5)},
		{"FOUNDED - 0.5 = DATE '1999-06-30'", ids(6)},
		{"DATE '2020-03-01' - FOUNDED = 1", ids(5)},
		{"FOUNDED - DATE '1999-06-30' = 0.5", ids(6)},
		{"FOUNDED < CURRENT_DATE + 1", ids(1, 2, 3, 5, 6, 7, 8, 9, 10)},
		{"CURRENT_DATE > FOUNDED", ids(1, 2, 3, 5, 6, 7, 8, 9, 10)},
		{"CURRENT_TIMESTAMP() > FOUNDED AND POP > 2000", ids(1, 7)},
		{"CAST(FOUNDED AS DATE) = DATE '1999-06-30'", ids(6)},
		{"ACTIVE", ids(1, 3, 5, 7, 9)},
		{"NOT ACTIVE", ids(2, 6, 8, 10)},
		{"ACTIVE = TRUE AND POP > 1000", ids(1, 3, 7, 9)},
		{"ACTIVE = FALSE", ids(2, 6, 8, 10)},
		{"ACTIVE IS NULL", ids(4)},
		{"NAME = 'O''Brien'", ids(7)},
		{`"NAME" = 'Bath'`, ids(2)},
		{`"name" = 'Bath'`, ids(2)},
		{"1 = 1", all},
		{"1 = 0", ids()},
		{"TRUE", all},
		{"NULL", ids()},
		{"POP = NULL", ids()},
		{"NOT (POP = NULL)", ids()},
		{"NULL IS NULL AND ID < 3", ids(1, 2)},
		{"NAME LIKE UPPER(NULL)", ids()},
		{"NAME NOT LIKE UPPER(NULL)", ids()},
		{"UPPER(NULL) NOT LIKE 'a'", ids()},
		{"NAME NOT LIKE 'a' ESCAPE LOWER(NULL)", ids()},
		{"FOUNDED = UPPER(NULL) OR ID = 1", ids(1)},
		{"ID / 0 IN (1, 2) OR ID = 2", ids(2)},
		{"NOT (ID IN (1, 1 / 0))", ids()},
		{"CAST(POP AS CHAR) = '800'", ids(2)},
		{"CAST(AREA AS INTEGER) = 7", ids(7)},
		{"CAST('12' AS INTEGER) = ID + 7", ids(5)},
		{"CAST(CODE AS INTEGER) IS NULL", all},
		{"NAME > 'C'", ids(3, 4, 5, 7, 8, 9)},
		{"1e3 = POP", ids(6)},
		{".5 = AREA", ids(5)},
		{"1.5E-1 * 10 = -AREA", ids(8)},
		{"POP = 1000 OR NAME IS NULL", ids(6)},
		{"POP > AREA", ids(1, 2, 5, 6, 7)},
		{"CODE = ''", ids(10)},
		{"NAME LIKE 'O''%'", ids(7)},
		{"UPPER(CODE) IN ('A1', 'B2', 'A%B')", ids(1, 2, 9)},
		{"POP IN (ID * 100, 5000)", ids(1)},
		{"ID BETWEEN 3 AND 5 AND NOT ACTIVE", ids()},
		{"(ID = 1) = TRUE", ids(1)},
		{"ID = 1 OR ID = 2 OR ID = 3 AND (ID = 3 OR ID = 4)", ids(1, 2, 3)},
		{"NOT NOT ID = 4", ids(4)},
		// No name holds a wildcard, so every non-NULL name matches itself.
		{"NAME LIKE NAME", ids(1, 2, 3, 4, 5, 7, 8, 9, 10)},
		{"CODE LIKE CODE", ids(1, 2, 3, 5, 6, 7, 8, 9, 10)},
	}
	if len(tests) < 60 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tc := range tests {
		t.Run(tc.clause, func(t *testing.T) {
			e, err := where.Parse(tc.clause)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			p, err := e.Compile(schema)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			if got := matching(p); !slices.Equal(got, tc.want) {
				t.Errorf("matched %v, want %v", got, tc.want)
			}
			// The canonical form means the same thing and is stable.
			canon := e.String()
			e2, err := where.Parse(canon)
			if err != nil {
				t.Fatalf("reparse %q: %v", canon, err)
			}
			if e2.String() != canon {
				t.Errorf("String not stable: %q then %q", canon, e2.String())
			}
			p2, err := e2.Compile(schema)
			if err != nil {
				t.Fatalf("Compile canonical %q: %v", canon, err)
			}
			if got := matching(p2); !slices.Equal(got, tc.want) {
				t.Errorf("canonical %q matched %v, want %v", canon, got, tc.want)
			}
		})
	}
}

func TestSyntaxErrors(t *testing.T) {
	tests := []struct {
		clause string
		pos    int
		msg    string
	}{
		{"POP >", 5, "expected expression but found end of clause"},
		{"(POP > 1 AND NAME = 'x'", 23, "expected ')' but found end of clause"},
		{"POSITION('a' IN NAME AND 1) = 1", 21, "expected ')' but found 'AND'"},
		{"POP = 'abc", 6, "unterminated string literal"},
		{"POP = 1 +", 9, "expected expression but found end of clause"},
		{"NAME LIKE 'a' ESCAPE", 20, "expected expression but found end of clause"},
		{"POP NOT 5", 8, "expected IN, BETWEEN or LIKE after NOT but found '5'"},
		{"POP IS 5", 7, "expected NULL but found '5'"},
		{"POP = 1 POP", 8, "expected end of clause but found 'POP'"},
		{"FOO(1) = 1", 0, "unknown function 'FOO'"},
		{"POP = #", 6, "unexpected character '#'"},
		{"DATE '2020-13-01' = FOUNDED", 5, "invalid DATE literal '2020-13-01'"},
		{"DATE '0000-02-29' = FOUNDED", 5, "invalid DATE literal '0000-02-29'"},
		{"FOUNDED > TIMESTAMP '0000-01-01 00:00:00'", 20, "invalid TIMESTAMP literal '0000-01-01 00:00:00'"},
		{"POP = 1e", 7, "malformed exponent in number"},
		{`"" = 1`, 0, "empty delimited identifier"},
		{`"NAME = 1`, 0, "unterminated delimited identifier"},
		{"POP BETWEEN 1 OR 2", 14, "expected AND but found 'OR'"},
		{"AND = 1", 0, "expected expression but found 'AND'"},
		{"POP = 1e999", 6, "number '1e999' is out of range"},
		{"CAST(POP AS BLOB) = 1", 12, "expected INTEGER, FLOAT, CHAR, DATE or TIMESTAMP but found 'BLOB'"},
		{"UPPER(NAME, 'x') = 'A'", 12, "too many arguments to UPPER: it takes 1 argument(s)"},
		{"MOD(POP) = 1", 7, "too few arguments to MOD: it takes 2 argument(s)"},
		{"EXTRACT(WEEK FROM FOUNDED) = 1", 8, "expected YEAR, MONTH, DAY, HOUR, MINUTE or SECOND but found 'WEEK'"},
		{"POP IN ()", 8, "expected expression but found ')'"},
		{"POP IN 1", 7, "expected '(' but found '1'"},
		{"POP = 12abc", 6, "malformed number '12a'"},
		{"POP | 1", 4, "unexpected character '|'"},
		{"NAME = 'x' AND", 14, "expected expression but found end of clause"},
		{"POP = 1)", 7, "expected end of clause but found ')'"},
		{"NAME = \xff", 7, "invalid UTF-8 byte"},
		{"SUBSTRING(NAME 1)", 15, "expected FROM but found '1'"},
		{"NAME 'x'", 5, "expected end of clause but found string 'x'"},
		{"POP = 1 OR NAME IN ('a' 'this is a rather long string literal')", 24,
			"expected ')' but found string 'this is a rather long string li..."},
	}
	for _, tc := range tests {
		t.Run(tc.clause, func(t *testing.T) {
			_, err := where.Parse(tc.clause)
			var se *where.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("got %v (%T), want *SyntaxError", err, err)
			}
			if se.Pos != tc.pos || se.Msg != tc.msg {
				t.Errorf("got pos %d msg %q, want pos %d msg %q", se.Pos, se.Msg, tc.pos, tc.msg)
			}
			want := fmt.Sprintf("where: syntax error at position %d: %s", tc.pos, tc.msg)
			if err.Error() != want {
				t.Errorf("Error() = %q, want %q", err.Error(), want)
			}
			if errors.Is(err, where.ErrLimit) {
				t.Errorf("plain syntax error unwraps to ErrLimit")
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		clause string
		field  string // for *FieldError
		pos    int
	}{
		{"FOO = 1", "FOO", 0},
		{"POP = 1 AND Bar > 2", "Bar", 12},
		{`"POP " = 1`, "POP ", 0},
		{"POP IN (1, UPPER(nope))", "nope", 17},
		{"NAME = 1", "", 0},
		{"POP LIKE 'a%'", "", 0},
		{"NAME + 1 = 2", "", 0},
		{"POP = 1 AND UPPER(POP) = 'x'", "", 18},
		{"NAME LIKE 'a' ESCAPE 'ab'", "", 21},
		{"POP", "", 0},
		{"FOUNDED = 'notadate'", "", 0},
		{"POP IN (1, 'x')", "", 11},
		{"ACTIVE + 1 = 2", "", 0},
		{"FOUNDED = 5", "", 0},
		{"NAME BETWEEN 1 AND 2", "", 0},
		{"NOT NAME", "", 4},
		{"-NAME = 'x'", "", 0},
		{"EXTRACT(YEAR FROM NAME) = 1", "", 18},
		{"FOUNDED * 2 > 1", "", 0},
		{"1 - FOUNDED > 1", "", 4},
		{"FOUNDED + FOUNDED > 1", "", 0},
	}
	for _, tc := range tests {
		t.Run(tc.clause, func(t *testing.T) {
			e, err := where.Parse(tc.clause)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			_, err = e.Compile(schema)
			if tc.field != "" {
				var fe *where.FieldError
				if !errors.As(err, &fe) {
					t.Fatalf("got %v (%T), want *FieldError", err, err)
				}
				if fe.Field != tc.field || fe.Pos != tc.pos {
					t.Errorf("got field %q pos %d, want %q pos %d", fe.Field, fe.Pos, tc.field, tc.pos)
				}
				return
			}
			var te *where.TypeError
			if !errors.As(err, &te) {
				t.Fatalf("got %v (%T), want *TypeError", err, err)
			}
			if te.Pos != tc.pos {
				t.Errorf("got pos %d (%v), want %d", te.Pos, err, tc.pos)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name   string
		clause string
		ok     bool
	}{
		{"long clause", "POP = 1 OR " + strings.Repeat(" ", where.MaxClauseLen), false},
		{"max length", strings.Repeat(" ", where.MaxClauseLen-7) + "POP = 1", true},
		{"deep parens", strings.Repeat("(", 300) + "POP = 1" + strings.Repeat(")", 300), false},
		{"ok parens", strings.Repeat("(", 200) + "POP = 1" + strings.Repeat(")", 200), true},
		{"deep NOT", strings.Repeat("NOT ", 1000) + "POP = 1", false},
		{"deep minus", strings.Repeat("-", 1000) + "POP = 1", false},
		{"long chain", "POP = 1" + strings.Repeat(" + 1", 300), false},
		{"deep calls", strings.Repeat("ABS(", 300) + "POP" + strings.Repeat(")", 300) + " = 1", false},
		{"unclosed parens", strings.Repeat("(", 60000), false},
		{"long OR chain", "POP = 1" + strings.Repeat(" OR POP = 1", 5000), true},
		{"IN list as long as fits", where.InListClause("POP", 12000), true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e, err := where.Parse(tc.clause)
			if tc.ok {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if _, err := e.Compile(schema); err != nil {
					t.Fatalf("Compile: %v", err)
				}
				return
			}
			if !errors.Is(err, where.ErrLimit) {
				t.Fatalf("got %v, want ErrLimit", err)
			}
			var se *where.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("limit error is %T, want *SyntaxError", err)
			}
		})
	}
}

func TestBigInListMatches(t *testing.T) {
	var b strings.Builder
	b.WriteString("ID IN (")
	for i := range 9000 {
		fmt.Fprintf(&b, "%d,", i*2+1) // odd numbers
	}
	b.WriteString("-1)")
	e, err := where.Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	p, err := e.Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := matching(p), ids(1, 3, 5, 7, 9); !slices.Equal(got, want) {
		t.Errorf("matched %v, want %v", got, want)
	}
}

func TestFields(t *testing.T) {
	e, err := where.Parse(`pop > 1 AND NAME LIKE 'x' OR "Pop" = 2 AND UPPER(code) IN (name, 'A')`)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := e.Fields(), []string{"pop", "NAME", "code"}; !slices.Equal(got, want) {
		t.Errorf("Fields() = %q, want %q", got, want)
	}
	empty, _ := where.Parse("")
	if f := empty.Fields(); len(f) != 0 {
		t.Errorf("empty Fields() = %q", f)
	}
}

func TestCanonicalString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"pop>1 and name like 'A%'", "pop > 1 AND name LIKE 'A%'"},
		{"a != 1", "a <> 1"},
		{"(a = 1 or b = 2) and c = 3", "(a = 1 OR b = 2) AND c = 3"},
		{"a = 1 or (b = 2 and c = 3)", "a = 1 OR b = 2 AND c = 3"},
		{"(a = 1 and b = 2) and c = 3", "a = 1 AND b = 2 AND c = 3"},
		{"a - (b - c) = a - b - c", "a - (b - c) = a - b - c"},
		{"a * (b + c) = (a * b) + c", "a * (b + c) = a * b + c"},
		{"- (-a) = +a", "- -a = a"},
		{"-(a + b) = 1", "-(a + b) = 1"},
		{`"like" = 'it''s'`, `"like" = 'it''s'`},
		{`"select" = 1`, `select = 1`},
		{`"DATE" = date '2020-01-02 00:00:00'`, `"DATE" = DATE '2020-01-02'`},
		{"t = timestamp '2020-01-02T03:04:05Z'", "t = TIMESTAMP '2020-01-02 03:04:05'"},
		{`"two words" = 1.50`, `"two words" = 1.5`},
		{"x = 3.0", "x = 3.0"},
		{"x = 1e21", "x = 1e+21"},
		{"x = 99999999999999999999", "x = 1e+20"},
		{"substring(s, 2, 3) = 'x'", "SUBSTRING(s FROM 2 FOR 3) = 'x'"},
		{"trim(both ' ' from s) = trim(s)", "TRIM(BOTH ' ' FROM s) = TRIM(s)"},
		{"length(s) = 1", "CHAR_LENGTH(s) = 1"},
		{"cast(x as int) = 1", "CAST(x AS INTEGER) = 1"},
		{"current_date() > d", "CURRENT_DATE > d"},
		{"(a = 1) = (b = 2)", "(a = 1) = (b = 2)"},
		{"not (a = 1)", "NOT a = 1"},
		{"a || b || c = 'x'", "a || b || c = 'x'"},
		{"x IN (1, 2 + 3, y)", "x IN (1, 2 + 3, y)"},
		{"x between -1 and 1 + 2", "x BETWEEN -1 AND 1 + 2"},
		{"ROUND = 1", "ROUND = 1"},
		{"trim(both -'' from 0) = ''", "TRIM(BOTH -'' FROM 0) = ''"},
		{"trim(leading -1 || 'x' from s) = 'a'", "TRIM(LEADING -1 || 'x' FROM s) = 'a'"},
		{"trim(x = 1 from s) = 'a'", "TRIM(BOTH (x = 1) FROM s) = 'a'"},
	}
	for _, tc := range tests {
		e, err := where.Parse(tc.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tc.in, err)
			continue
		}
		if got := e.String(); got != tc.want {
			t.Errorf("Parse(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestAnd(t *testing.T) {
	def, _ := where.Parse("POP > 500 OR POP IS NULL")
	q, _ := where.Parse("NAME LIKE 'C%' OR NAME LIKE 'B%'")
	e := where.And(def, nil, q, &where.Expr{})
	if got, want := e.String(), "(POP > 500 OR POP IS NULL) AND (NAME LIKE 'C%' OR NAME LIKE 'B%')"; got != want {
		t.Errorf("And = %q, want %q", got, want)
	}
	p, err := e.Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := matching(p), ids(2, 4); !slices.Equal(got, want) {
		t.Errorf("matched %v, want %v", got, want)
	}
	if !where.And().IsEmpty() {
		t.Error("And() is not empty")
	}
}

func TestMatchesAllNone(t *testing.T) {
	for clause, want := range map[string][2]bool{
		"":                  {true, false},
		"1 = 1":             {true, false},
		"1 = 1 OR POP > 1":  {true, false},
		"POP > 1":           {false, false},
		"1 = 0":             {false, true},
		"POP = NULL":        {false, true},
		"1 = 0 AND POP > 1": {false, true},
	} {
		e, err := where.Parse(clause)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Compile(schema)
		if err != nil {
			t.Fatal(err)
		}
		if got := [2]bool{p.MatchesAll(), p.MatchesNone()}; got != want {
			t.Errorf("%q: MatchesAll, MatchesNone = %v, want %v", clause, got, want)
		}
	}
}

func TestRowCellTypes(t *testing.T) {
	s := where.Schema{{Name: "I", Type: where.Integer}, {Name: "F", Type: where.Double}, {Name: "S", Type: where.String}}
	e, _ := where.Parse("I = 5 AND F < 2 AND S = 'x'")
	p, err := e.Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range [][]any{
		{5, float32(1.5), "x"},
		{int32(5), 1.5, []byte("x")},
		{uint8(5), int64(1), "x"},
	} {
		if !p.Match(row) {
			t.Errorf("%#v did not match", row)
		}
	}
	for _, row := range [][]any{
		{5, 1.5},                      // short row: S is NULL
		{struct{}{}, 1.5, "x"},        // unknown type: NULL
		{5, float32(2.5), "x"},        // false
		{int64(5), 1.5, "X"},          // case-sensitive
		{int64(5), nanFloat(), "x"},   // NaN is NULL
		{"5", float64(1.5), "x"},      // string in an integer column is not a number
		{nil, nil, nil},               // all NULL
		{int64(6), float64(1.5), "x"}, // false
	} {
		if p.Match(row) {
			t.Errorf("%#v matched", row)
		}
	}
}

func nanFloat() float64 {
	z := 0.0
	return z / z
}

func TestSyntaxInfo(t *testing.T) {
	s := where.Syntax()
	if !s.StringComparisonCase || s.IdentifierCase {
		t.Errorf("case flags: %+v", s)
	}
	has := func(list []string, x string) bool { return slices.Contains(list, x) }
	for _, f := range []string{"UPPER", "LOWER", "CHAR_LENGTH", "SUBSTRING", "TRIM", "POSITION", "CONCAT"} {
		if !has(s.StringFunctions, f) {
			t.Errorf("StringFunctions lacks %s", f)
		}
	}
	for _, f := range []string{"ABS", "ROUND", "FLOOR", "CEILING", "MOD", "POWER"} {
		if !has(s.NumericFunctions, f) {
			t.Errorf("NumericFunctions lacks %s", f)
		}
	}
	for _, f := range []string{"CURRENT_DATE", "CURRENT_TIMESTAMP", "EXTRACT"} {
		if !has(s.DateFunctions, f) {
			t.Errorf("DateFunctions lacks %s", f)
		}
	}
	for _, k := range []string{"AND", "LIKE", "ESCAPE", "BETWEEN", "LEADING", "YEAR", "CAST"} {
		if !has(s.Keywords, k) {
			t.Errorf("Keywords lacks %s", k)
		}
	}
	special := map[string]string{}
	for _, p := range s.SpecialCharacters {
		special[p.Key] = p.Value
	}
	if special["esriSQL_WildcardManyMatch"] != "%" || special["esriSQL_WildcardSingleMatch"] != "_" ||
		special["esriSQL_DelimitedIdentifierPrefix"] != `"` {
		t.Errorf("SpecialCharacters = %v", s.SpecialCharacters)
	}
	// Every advertised function and alias really parses and compiles.
	for _, f := range s.Functions {
		names := append([]string{f.Name}, f.Aliases...)
		for _, n := range names {
			clause := exampleCall(n, f)
			e, err := where.Parse(clause)
			if err != nil {
				t.Errorf("%s: %q: %v", f.Name, clause, err)
				continue
			}
			if _, err := e.Compile(schema); err != nil {
				t.Errorf("%s: %q: %v", f.Name, clause, err)
			}
		}
	}
	// Every advertised predicate works.
	for _, c := range []string{"ID = 1", "ID <> 1", "ID < 1", "ID > 1", "ID <= 1", "ID >= 1",
		"ID BETWEEN 1 AND 2", "ID NOT BETWEEN 1 AND 2", "ID IN (1)", "ID NOT IN (1)",
		"NAME LIKE 'a'", "NAME NOT LIKE 'a'", "ID IS NULL", "ID IS NOT NULL"} {
		if _, err := where.Parse(c); err != nil {
			t.Errorf("%q: %v", c, err)
		}
	}
	if len(s.SupportedPredicates) != 14 {
		t.Errorf("SupportedPredicates = %v", s.SupportedPredicates)
	}
	// Invalid characters really are invalid in bare names.
	for _, r := range s.InvalidCharacters {
		if _, err := where.Parse("A" + string(r) + "B IS NULL"); err == nil && r != ' ' {
			e, _ := where.Parse("A" + string(r) + "B IS NULL")
			if f := e.Fields(); len(f) == 1 && f[0] == "A"+string(r)+"B" {
				t.Errorf("%q accepted inside a bare name", r)
			}
		}
	}
}

// exampleCall writes a condition that calls function name.
func exampleCall(name string, f where.FunctionInfo) string {
	switch f.Name {
	case "SUBSTRING":
		return name + "(NAME, 1, 2) = 'x'"
	case "TRIM":
		return name + "(NAME) = 'x'"
	case "POSITION":
		return name + "('a' IN NAME) = 1"
	case "CONCAT":
		return name + "(NAME, CODE) = 'x'"
	case "MOD", "POWER":
		return name + "(POP, 2) = 1"
	case "CURRENT_DATE", "CURRENT_TIMESTAMP":
		return name + " > FOUNDED"
	case "EXTRACT":
		return name + "(YEAR FROM FOUNDED) = 1"
	case "CAST":
		return name + "(POP AS CHAR) = '1'"
	}
	if f.Category == where.StringFunction {
		return name + "(NAME) IS NULL"
	}
	return name + "(AREA) IS NULL"
}

func TestConcurrentMatch(t *testing.T) {
	e, _ := where.Parse("POP > 100 AND NAME LIKE '%a%' OR CODE IN ('A1', 'B2') OR UPPER(NAME) = 'DOVER'")
	p, err := e.Compile(schema)
	if err != nil {
		t.Fatal(err)
	}
	want := matching(p)
	done := make(chan []int)
	for range 8 {
		go func() {
			var got []int
			for range 200 {
				got = matching(p)
			}
			done <- got
		}()
	}
	for range 8 {
		if got := <-done; !slices.Equal(got, want) {
			t.Errorf("concurrent result %v, want %v", got, want)
		}
	}
}

// TestThreeValuedLogic checks AND, OR, NOT and IS NULL on every pair of
// TRUE, FALSE and NULL (UNKNOWN).
func TestThreeValuedLogic(t *testing.T) {
	s := where.Schema{{Name: "A", Type: where.Boolean}, {Name: "B", Type: where.Boolean}}
	vals := []any{true, false, nil}
	// truth[i][j] is the expected SQL result for A=vals[i], B=vals[j]:
	// 'T', 'F' or 'U'.
	tables := map[string][3][3]byte{
		"A AND B":                {{'T', 'F', 'U'}, {'F', 'F', 'F'}, {'U', 'F', 'U'}},
		"A OR B":                 {{'T', 'T', 'T'}, {'T', 'F', 'U'}, {'T', 'U', 'U'}},
		"A = B":                  {{'T', 'F', 'U'}, {'F', 'T', 'U'}, {'U', 'U', 'U'}},
		"NOT A":                  {{'F', 'F', 'F'}, {'T', 'T', 'T'}, {'U', 'U', 'U'}},
		"A IS NULL OR B IS NULL": {{'F', 'F', 'T'}, {'F', 'F', 'T'}, {'T', 'T', 'T'}},
	}
	for clause, want := range tables {
		e, err := where.Parse(clause)
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.Compile(s)
		if err != nil {
			t.Fatal(err)
		}
		// A clause is TRUE when it matches, FALSE when its negation
		// matches, and UNKNOWN when neither does.
		neg, err := where.Parse("NOT (" + clause + ")")
		if err != nil {
			t.Fatal(err)
		}
		np, err := neg.Compile(s)
		if err != nil {
			t.Fatal(err)
		}
		for i, a := range vals {
			for j, b := range vals {
				row := []any{a, b}
				got := byte('U')
				switch {
				case p.Match(row) && np.Match(row):
					t.Fatalf("%s and its negation both match %v", clause, row)
				case p.Match(row):
					got = 'T'
				case np.Match(row):
					got = 'F'
				}
				if got != want[i][j] {
					t.Errorf("%s with A=%v B=%v: got %c, want %c", clause, a, b, got, want[i][j])
				}
			}
		}
	}
}

func TestIn(t *testing.T) {
	e, err := where.In("NAME", []any{"O'Brien", int64(3), 2.5, nil})
	if err != nil {
		t.Fatal(err)
	}
	if e.String() != `NAME IN ('O''Brien', 3, 2.5, NULL)` {
		t.Errorf("In = %s", e)
	}
	e, _ = where.In("CODE", []any{"a", "O'Brien"})
	p, err := e.Compile(where.Schema{{Name: "CODE", Type: where.String}})
	if err != nil || !p.Match([]any{"O'Brien"}) || p.Match([]any{"b"}) {
		t.Errorf("In match: %v", err)
	}
	if _, err := where.In("X", nil); err == nil {
		t.Error("In with no values: no error")
	}
}
