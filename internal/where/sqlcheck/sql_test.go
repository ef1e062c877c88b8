package sqlcheck_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "modernc.org/sqlite"

	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/where"
)

// sqlSchema is the table of the translation's differential test.
var sqlSchema = where.Schema{
	{Name: "id", Type: where.Integer},
	{Name: "name", Type: where.String},
	{Name: "pop", Type: where.Integer},
	{Name: "area", Type: where.Double},
	{Name: "code", Type: where.String},
	{Name: "big", Type: where.Integer},
	{Name: "d", Type: where.Date},
	{Name: "flag", Type: where.Boolean},
}

// sqlRows generates rows with NULLs, awkward strings (quotes, wildcards,
// GLOB metacharacters, non-ASCII letters), int64 extremes and dates.
func sqlRows() [][]any {
	names := []string{"Avon", "avon", "AVON", "Bath", "bath_x", "Cardiff", "Dover", "O'Brien", "a%b", "a_b",
		"", " pad ", "Zed", "zulu", "Abc", "abc", "x\\y", "Mid Town", "ab", "ba", "a*b", "a?b", "[ab]",
		"a!b", "Ärger", "ärger", "straße", "Åland", "zß", "İzmir", "日本", "x'; DROP TABLE t; --"}
	rng := rand.New(rand.NewPCG(3, 5))
	base := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	var rows [][]any
	for id := int64(1); id <= 500; id++ {
		row := []any{id, nil, nil, nil, nil, nil, nil, nil}
		if rng.IntN(10) > 0 {
			row[1] = names[rng.IntN(len(names))]
		}
		if rng.IntN(10) > 0 {
			row[2] = int64(rng.IntN(120)-10) * 50
		}
		if rng.IntN(10) > 0 {
			row[3] = float64(rng.IntN(20000)-2000) / 8
		}
		if rng.IntN(8) > 0 {
			row[4] = string(rune('A'+rng.IntN(4))) + string(rune('0'+rng.IntN(10)))
		}
		switch rng.IntN(6) {
		case 0:
		case 1:
			row[5] = int64(9223372036854775807 - rng.IntN(3))
		default:
			row[5] = rng.Int64N(1<<62) - 1<<61
		}
		if rng.IntN(6) > 0 {
			row[6] = base.Add(time.Duration(rng.IntN(1500*24)) * time.Hour / 2)
		}
		if rng.IntN(5) > 0 {
			row[7] = rng.IntN(2) == 0
		}
		rows = append(rows, row)
	}
	// A few rows the clauses below look for exactly.
	rows[0][1], rows[0][2], rows[0][3] = "Avon", int64(100), 12.5
	rows[1][3], rows[1][6] = 100.0, base
	rows[2][3], rows[2][6] = -1.5, base.Add(36*time.Hour)
	rows[3][3], rows[3][2] = 12.25, int64(100)
	return rows
}

// sqlClauses are the clauses of the differential test; the ones marked
// exact must translate exactly in both dialects (dates: PostgreSQL only).
var sqlClauses = []struct {
	clause  string
	exact   bool // in both dialects
	pgExact bool // in PostgreSQL (implied by exact)
}{
	{"pop > 1000", true, true},
	{"pop >= 1000 AND pop <= 2000", true, true},
	{"pop = 0 OR pop IS NULL", true, true},
	{"pop <> 100 AND area < 0", true, true},
	{"NOT (pop > 1000 OR area > 50)", true, true},
	{"NOT (pop > 1000 AND area > 50)", true, true},
	{"pop > 1000 OR area > 50 AND name IS NULL", true, true},
	{"name = 'Avon'", true, true},
	{"name <> 'Avon'", true, true},
	{"name > 'B' AND name < 'a'", true, true},
	{"name >= 'avon'", true, true},
	{"name > 'Z'", true, true},
	{"name < 'b'", true, true},
	{"name BETWEEN 'B' AND 'Z'", true, true},
	{"name = 'O''Brien'", true, true},
	{"name = 'x''; DROP TABLE t; --'", true, true},
	{"pop IN (1, 2, 3, 100, 200, 300, 4000)", true, true},
	{"pop NOT IN (1, 2, 3, 100, 200)", true, true},
	{"pop IN (100, NULL)", true, true},
	{"pop NOT IN (100, NULL)", true, true},
	{"pop IN (NULL)", true, true},
	{"name IN ('Avon', 'bath_x', 'nope', 'Ärger')", true, true},
	{"name NOT IN ('Avon', 'bath_x')", true, true},
	{"area IN (12.5, 0, -1.25, 100)", true, true},
	{"pop IN (100, 150.0, 200.5)", true, true},
	{"area IN (100, 200)", true, true},
	{"pop IN (area, 100)", true, true},
	{"pop IN (ROUND(area / 50) * 50, 7)", false, false},
	{"pop BETWEEN 100 AND 2000", true, true},
	{"pop NOT BETWEEN 100 AND 2000", true, true},
	{"area BETWEEN -10 AND 10.5", true, true},
	{"name LIKE 'A%'", true, true},
	{"name LIKE 'a%'", true, true},
	{"name LIKE '%b'", true, true},
	{"name LIKE '%v%'", true, true},
	{"name LIKE '_b_'", true, true},
	{"name LIKE 'a_b'", true, true},
	{"name LIKE 'a!_b' ESCAPE '!'", true, true},
	{"name LIKE 'a!%b' ESCAPE '!'", true, true},
	{"name LIKE 'a!!b' ESCAPE '!'", true, true},
	{"name LIKE 'a\\%b' ESCAPE '\\'", true, true},
	{"name LIKE 'a*b'", true, true},
	{"name LIKE 'a?b'", true, true},
	{"name LIKE '[ab]'", true, true},
	{"name LIKE 'a!b'", true, true},
	{"name LIKE 'x\\y'", true, true},
	{"name LIKE '_rger'", true, true},
	{"name LIKE '%ß'", true, true},
	{"name LIKE '__'", true, true},
	{"name LIKE 'a!' ESCAPE '!'", true, true},
	{"NOT name LIKE 'a!' ESCAPE '!'", true, true},
	{"name NOT LIKE '%a%'", true, true},
	{"name LIKE '%'", true, true},
	{"name LIKE ''", true, true},
	{"code LIKE 'A_' OR code LIKE '_9'", true, true},
	{"name LIKE code", false, false},
	{"pop + 10 > 1000", true, true},
	{"pop - area > 100", true, true},
	{"pop * 2 = 1000", true, true},
	{"pop / 7 = 100", true, true},
	{"pop / -7 = -100", true, true},
	{"pop / 7.0 > 100", true, true},
	{"area / 0 IS NULL", true, true},
	{"pop / 0 IS NULL", true, true},
	{"MOD(pop, 0) IS NULL", true, true},
	{"MOD(pop, 7) = 3", true, true},
	{"MOD(-pop, 7) = -3", true, true},
	{"-pop > 0", true, true},
	{"- -pop = pop", true, true},
	{"pop * area > 10000", true, true},
	{"(pop + 1) * (area - 1) < 0", true, true},
	{"big > 0", true, true},
	{"big + big > 0", true, true},
	{"big * 4 > 0", true, true},
	{"big - 4611686018427387904 < 0", true, true},
	{"big = 9223372036854775807", true, true},
	{"big > 9.2e18", true, true},
	{"UPPER(name) = 'AVON'", false, false},
	{"UPPER(name) = 'AVON' AND pop > 1000", false, false},
	{"UPPER(name) = 'AVON' OR pop > 1000", false, false},
	{"NOT (UPPER(name) = 'AVON' AND pop > 1000)", false, false},
	{"LOWER(name) = 'ärger'", false, false},
	{"CHAR_LENGTH(name) = 4", true, true},
	{"LENGTH(name) = 5 AND name > 'Z'", true, true},
	{"name || code = 'AvonA1'", true, true},
	{"name || '-' || code LIKE '%-B%'", true, true},
	{"name || pop = 'Avon100'", true, true},
	{"CONCAT(name, code) = 'Avon'", true, true},
	{"CONCAT(name, pop, code) LIKE 'Avon%A%'", true, true},
	{"ABS(pop) < 100", true, true},
	{"ABS(area) > 100", true, true},
	{"CEILING(area) = 13", false, true},
	{"FLOOR(area) = -2", false, true},
	{"CEILING(pop) = 100", true, true},
	{"SIGN(area) = -1", true, true},
	{"SIGN(pop) = 0", true, true},
	{"ROUND(area / 100) = 10", false, false},
	{"SUBSTRING(name, 2, 2) = 'vo'", true, true},
	{"SUBSTRING(name FROM 0 FOR 3) = 'Av'", true, true},
	{"SUBSTRING(name FROM -5 FOR 3) = ''", true, true},
	{"SUBSTRING(name FROM 2) = 'von'", true, true},
	{"SUBSTR(name, 1, 1) = 'Ä'", true, true},
	{"SUBSTRING(name, pop, 1) = 'a'", false, false},
	{"TRIM(name) = 'pad'", true, true},
	{"TRIM(LEADING FROM name) = 'pad '", true, true},
	{"TRIM(TRAILING 'x' FROM name) = 'bath_'", true, true},
	{"TRIM(BOTH 'ab' FROM name) = ''", true, true},
	{"POSITION('v' IN name) = 2", true, true},
	{"POSITION('' IN name) = 1", true, true},
	{"CAST(pop AS CHAR) LIKE '1%'", true, true},
	{"CAST(pop AS FLOAT) / 3 > 100", true, true},
	{"CAST(area AS INTEGER) = 12", false, false},
	{"flag", true, true},
	{"NOT flag", true, true},
	{"flag = TRUE AND pop > 0", true, true},
	{"flag IS NULL", true, true},
	{"flag IN (TRUE, NULL)", true, true},
	{"d > DATE '2021-06-01'", false, true},
	{"d = '2020-01-01'", false, true},
	{"d BETWEEN '2020-03-01' AND TIMESTAMP '2020-04-01 12:00:00'", false, true},
	{"d IN (DATE '2020-01-01', '2020-01-02 12:00:00')", false, true},
	{"EXTRACT(YEAR FROM d) = 2021", false, true},
	{"EXTRACT(HOUR FROM d) = 12 AND EXTRACT(MONTH FROM d) < 4", false, true},
	{"EXTRACT(SECOND FROM d) = 0", false, true},
	{"d > CURRENT_DATE - 3650", false, true},
	{"d < CURRENT_TIMESTAMP", false, true},
	{"d + 1 > DATE '2021-01-01'", false, false},
	{"d - DATE '2020-01-01' > 100", false, false},
	{"1 = 1", true, true},
	{"1 = 0", true, true},
	{"pop = NULL", true, true},
	{"NULL IS NULL AND pop > 4000", true, true},
	{"pop > 1000 AND (name LIKE 'A%' OR name LIKE 'B%') AND NOT area < 0", true, true},
	{"(pop > 1000 OR UPPER(name) = 'A') AND area > 0", false, false},
}

// sqlDB runs the translated clauses of one dialect.
type sqlDB interface {
	ids(query string, args []any) ([]int64, error)
}

type sqliteDB struct{ db *sql.DB }

func (s sqliteDB) ids(query string, args []any) ([]int64, error) {
	rs, err := s.db.Query(query, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	out := []int64{}
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, rs.Err()
}

type pgDB struct{ conn *pgx.Conn }

func (p pgDB) ids(query string, args []any) ([]int64, error) {
	rs, err := p.conn.Query(context.Background(), query, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rs, pgx.RowTo[int64])
}

// TestSQLTranslationSQLite checks that each clause's SQL selects on SQLite
// exactly the rows Match selects when the translation says it is exact,
// and a superset when it says it is looser.
func TestSQLTranslationSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// case_sensitive_like stays OFF: the translation must not rely on it.
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, pop INTEGER, area REAL, code TEXT, big INTEGER, d TEXT, flag BOOLEAN)"); err != nil {
		t.Fatal(err)
	}
	rows := sqlRows()
	for _, r := range rows {
		args := slices.Clone(r)
		if d, ok := args[6].(time.Time); ok {
			args[6] = d.Format("2006-01-02T15:04:05.000Z")
		}
		if _, err := db.Exec("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?, ?, ?)", args...); err != nil {
			t.Fatal(err)
		}
	}
	runSQLDifferential(t, where.SQLite, sqliteDB{db}, rows)
}

// TestSQLTranslationPostgreSQL is the same test on the PostgreSQL named by
// MAPFARM_TEST_POSTGRES, in a temporary table whose text columns use a
// linguistic ICU collation (not byte order) when the server has one.
func TestSQLTranslationPostgreSQL(t *testing.T) {
	dsn := testenv.Postgres(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	coll := ""
	var icu bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collname = 'und-x-icu')").Scan(&icu); err != nil {
		t.Fatal(err)
	}
	if icu {
		coll = ` COLLATE "und-x-icu"`
	}
	for _, q := range []string{
		"SET TimeZone = 'UTC'",
		"CREATE TEMP TABLE t (id int8 PRIMARY KEY, name text" + coll + ", pop int4, area float8, code varchar(8)" + coll +
			", big int8, d timestamptz, flag boolean)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	rows := sqlRows()
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"id", "name", "pop", "area", "code", "big", "d", "flag"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) { return rows[i], nil }))
	if err != nil {
		t.Fatal(err)
	}
	runSQLDifferential(t, where.PostgreSQL, pgDB{conn}, rows)
}

func runSQLDifferential(t *testing.T, d where.Dialect, db sqlDB, rows [][]any) {
	t.Helper()
	exactCount := 0
	for _, c := range sqlClauses {
		t.Run(c.clause, func(t *testing.T) {
			e, want := matchIDs(t, c.clause, sqlSchema, rows)
			text, args, exact := translate(t, e, sqlSchema, d)
			if strings.Contains(strings.NewReplacer("''", "", "' '", "", "'!'", "").Replace(text), "'") {
				t.Errorf("SQL %q holds a string literal; every value must be a parameter", text)
			}
			if exact {
				exactCount++
			}
			if wantExact := c.exact || (d == where.PostgreSQL && c.pgExact); exact != wantExact {
				t.Errorf("SQL %q: exact = %v, want %v", text, exact, wantExact)
			}
			query := "SELECT id FROM t ORDER BY id"
			if text != "" {
				query = "SELECT id FROM t WHERE " + text + " ORDER BY id"
			}
			got, err := db.ids(query, args)
			if err != nil {
				t.Fatalf("%s %v: %v", query, args, err)
			}
			if exact && !slices.Equal(got, want) {
				t.Errorf("SQL %q (exact) selects %d rows, Match %d\nsql:   %v\nmatch: %v", text, len(got), len(want), got, want)
			}
			for _, id := range want {
				if _, ok := slices.BinarySearch(got, id); !ok {
					t.Errorf("SQL %q misses row %d that the clause keeps", text, id)
					break
				}
			}
			if len(want) == 0 && len(got) == 0 && !strings.Contains(c.clause, "1 = 0") && !strings.Contains(c.clause, "NULL") {
				t.Logf("note: %q selects nothing", c.clause)
			}
		})
	}
	t.Logf("%d of %d clauses translate exactly", exactCount, len(sqlClauses))
}

// TestSQLTranslationLongIN: a 10 000-item IN list is one parameter in
// PostgreSQL and one JSON array in SQLite, not 20 000 placeholders.
func TestSQLTranslationLongIN(t *testing.T) {
	var b strings.Builder
	b.WriteString("pop IN (")
	for i := range 10000 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprint(&b, i)
	}
	b.WriteString(")")
	e, err := where.Parse(b.String())
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []where.Dialect{where.SQLite, where.PostgreSQL} {
		n := 0
		text, exact, err := e.SQL(where.SQLTarget{Dialect: d, Schema: sqlSchema,
			Column: func(i int) string { return sqlSchema[i].Name },
			Param:  func(any) string { n++; return "?" }})
		if err != nil || !exact || n != 1 || len(text) > 200 {
			t.Errorf("dialect %d: %d parameters, exact %v, err %v, text %.200q", d, n, exact, err, text)
		}
	}
}
