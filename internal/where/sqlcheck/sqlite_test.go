package sqlcheck_test

import (
	"database/sql"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/mapfarm/mapfarm/internal/where"
)

// TestDifferentialSQLite checks Match against SQLite on the part of the
// language both share. The clause is spliced into SQL here only because
// SQLite is the test oracle.
func TestDifferentialSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1) // one connection: the pragma and table must persist
	for _, q := range []string{
		"PRAGMA case_sensitive_like = ON",
		"CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, pop INTEGER, area REAL, code TEXT, big INTEGER)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}

	schema := sqlSchema[:6] // the columns of table t
	names := []string{"Avon", "avon", "AVON", "Bath", "bath_x", "Cardiff", "Dover", "O'Brien", "a%b", "a_b",
		"", " pad ", "Zed", "zulu", "Abc", "abc", "x\\y", "Mid Town", "ab", "ba"}
	rng := rand.New(rand.NewPCG(7, 11))
	var rows [][]any
	for id := int64(1); id <= 400; id++ {
		row := []any{id, nil, nil, nil, nil, nil}
		if rng.IntN(10) > 0 {
			row[1] = names[rng.IntN(len(names))]
		}
		if rng.IntN(10) > 0 {
			row[2] = int64(rng.IntN(120)-10) * 50
		}
		if rng.IntN(10) > 0 {
			row[3] = float64(rng.IntN(20000)-2000) / 8 // exact in binary
		}
		if rng.IntN(8) > 0 {
			row[4] = string(rune('A'+rng.IntN(4))) + string(rune('0'+rng.IntN(10)))
		}
		if rng.IntN(5) > 0 {
			row[5] = rng.Int64N(1<<62) - 1<<61
		}
		rows = append(rows, row)
		if _, err := db.Exec("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", row...); err != nil {
			t.Fatal(err)
		}
	}

	clauses := []string{
		"pop > 1000",
		"pop >= 1000 AND pop <= 2000",
		"pop = 0 OR pop IS NULL",
		"pop <> 100",
		"pop != 100 AND area < 0",
		"NOT pop > 1000",
		"NOT (pop > 1000 OR area > 50)",
		"NOT (pop > 1000 AND area > 50)",
		"pop > 1000 OR area > 50 AND name IS NULL",
		"(pop > 1000 OR area > 50) AND name IS NULL",
		"name = 'Avon'",
		"name <> 'Avon'",
		"name > 'B' AND name < 'a'",
		"name >= 'avon'",
		"name IS NULL",
		"name IS NOT NULL AND pop IS NULL",
		"pop IN (1, 2, 3, 100, 200, 300, 4000)",
		"pop NOT IN (1, 2, 3, 100, 200)",
		"pop IN (100, NULL)",
		"pop NOT IN (100, NULL)",
		"name IN ('Avon', 'bath_x', 'nope')",
		"name NOT IN ('Avon', 'bath_x')",
		"code IN ('A1', 'B2', 'C3', 'D4')",
		"area IN (12.5, 0, -1.25, 100)",
		"pop IN (ROUND(area / 50) * 50, 7)",
		"pop BETWEEN 100 AND 2000",
		"pop NOT BETWEEN 100 AND 2000",
		"area BETWEEN -10 AND 10.5",
		"name BETWEEN 'B' AND 'Z'",
		"name LIKE 'A%'",
		"name LIKE 'a%'",
		"name LIKE '%b'",
		"name LIKE '%v%'",
		"name LIKE '_b_'",
		"name LIKE 'a_b'",
		"name LIKE 'a!_b' ESCAPE '!'",
		"name LIKE 'a!%b' ESCAPE '!'",
		"name LIKE '%!_%' ESCAPE '!'",
		"name NOT LIKE '%a%'",
		"name LIKE '%'",
		"name LIKE ''",
		"name LIKE 'x\\y'",
		"code LIKE 'A_' OR code LIKE '_9'",
		"pop + 10 > 1000",
		"pop - area > 100",
		"pop * 2 = 1000",
		"pop / 7 = 100",
		"pop / 7.0 > 100",
		"area / 0 IS NULL",
		"pop / 0 IS NULL",
		"-pop > 0",
		"- -pop = pop",
		"pop * area > 10000",
		"(pop + 1) * (area - 1) < 0",
		"big + big > 0",
		"big * 4 > 0",
		"big - 4611686018427387904 < 0",
		"UPPER(name) = 'AVON'",
		"LOWER(name) = 'avon'",
		"UPPER(name) LIKE 'A%'",
		"LENGTH(name) = 4",
		"LENGTH(name) > 3 AND LENGTH(code) = 2",
		"name || code = 'AvonA1'",
		"name || '-' || code LIKE '%-B%'",
		"ABS(pop) < 100",
		"ABS(area) > 100",
		"ROUND(area / 100) = 10",
		"SUBSTR(name, 2, 2) = 'vo'",
		"SUBSTRING(name, 1, 1) = 'a'",
		"TRIM(name) = 'pad'",
		"CAST(pop AS TEXT) LIKE '1%'",
		"1 = 1",
		"1 = 0",
		"pop = NULL",
		"NULL IS NULL AND pop > 4000",
		"pop > 1000 AND (name LIKE 'A%' OR name LIKE 'B%') AND NOT area < 0",
	}
	if len(clauses) < 40 {
		t.Fatalf("only %d clauses", len(clauses))
	}
	exactCount := 0
	for _, clause := range clauses {
		t.Run(clause, func(t *testing.T) {
			want := []int64{}
			rs, err := db.Query("SELECT id FROM t WHERE " + clause + " ORDER BY id")
			if err != nil {
				t.Fatalf("sqlite: %v", err)
			}
			for rs.Next() {
				var id int64
				if err := rs.Scan(&id); err != nil {
					t.Fatal(err)
				}
				want = append(want, id)
			}
			if err := rs.Err(); err != nil {
				t.Fatal(err)
			}
			rs.Close()

			e, got := matchIDs(t, clause, schema, rows)
			if !slices.Equal(got, want) {
				t.Errorf("where matched %d rows, sqlite %d\nwhere:  %v\nsqlite: %v", len(got), len(want), got, want)
			}

			// The translation to SQL keeps exactly those rows, or more when it says it is looser.
			text, args, exact := translate(t, e, schema, where.SQLite)
			if exact {
				exactCount++
			}
			query := "SELECT id FROM t ORDER BY id"
			if text != "" {
				query = "SELECT id FROM t WHERE " + text + " ORDER BY id"
			}
			sqlIDs := queryIDs(t, db, query, args...)
			if exact && !slices.Equal(sqlIDs, got) {
				t.Errorf("SQL %q (exact) matched %d rows, Match %d", text, len(sqlIDs), len(got))
			}
			for _, id := range got {
				if _, ok := slices.BinarySearch(sqlIDs, id); !ok {
					t.Errorf("SQL %q misses row %d that the clause keeps", text, id)
					break
				}
			}
		})
	}
	// Most of the shared language translates exactly: comparisons, IN, BETWEEN, IS NULL, logic.
	if exactCount < 20 {
		t.Errorf("only %d of %d clauses translate exactly", exactCount, len(clauses))
	}
}

// matchIDs parses clause and compiles it for schema; it returns the expression and the ids (the
// first column) of the rows it matches, in the rows' order.
func matchIDs(t *testing.T, clause string, schema where.Schema, rows [][]any) (*where.Expr, []int64) {
	t.Helper()
	e, err := where.Parse(clause)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	p, err := e.Compile(schema)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	ids := []int64{}
	for _, r := range rows {
		if p.Match(r) {
			ids = append(ids, r[0].(int64))
		}
	}
	return e, ids
}

// translate returns e as SQL with its bind values, for columns named as in schema.
func translate(t *testing.T, e *where.Expr, schema where.Schema, d where.Dialect) (string, []any, bool) {
	t.Helper()
	var args []any
	text, exact, err := e.SQL(where.SQLTarget{
		Dialect: d, Schema: schema,
		Column: func(i int) string { return `"` + schema[i].Name + `"` },
		Param: func(v any) string {
			args = append(args, v)
			if d == where.PostgreSQL {
				return fmt.Sprintf("$%d", len(args))
			}
			return "?"
		},
	})
	if err != nil {
		t.Fatalf("SQL: %v", err)
	}
	return text, args, exact
}

func queryIDs(t *testing.T, db *sql.DB, query string, args ...any) []int64 {
	t.Helper()
	rs, err := db.Query(query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rs.Close()
	ids := []int64{}
	for rs.Next() {
		var id int64
		if err := rs.Scan(&id); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := rs.Err(); err != nil {
		t.Fatal(err)
	}
	return ids
}
