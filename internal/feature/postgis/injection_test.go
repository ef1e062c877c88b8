package postgis_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/postgis"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/where"
)

// TestInjection tries hostile where clauses, column positions, order-by
// terms and service-definition names: each gives a clear error (a where
// syntax, field or type error, feature.ErrQuery, or "not found"), or
// selects only what the clause means, and the tables are intact after.
func TestInjection(t *testing.T) {
	dsn := testenv.PostgresDB(t)
	testenv.LoadGeoPackage(t, dsn, testenv.SampleData(t, samples[0].file), "countries", "countries", "fid")
	testenv.PostgresExec(t, dsn, "CREATE TABLE x (fid int PRIMARY KEY, v text)", "INSERT INTO x VALUES (1, 'keep')")
	before := testenv.PostgresTables(t, dsn)
	if strings.HasPrefix(before["countries"], "0 rows") {
		t.Fatalf("table countries is empty")
	}
	pool := newPool(t, dsn, 0)
	src := openSource(t, pool, postgis.Table{Table: "countries"})
	ctx := context.Background()

	bigIN := "fid IN (" + strings.Repeat("1, ", 9999) + "2)"
	for _, tc := range []struct {
		clause string
		// rows: the clause parses and must select exactly this many rows
		// (-1: must fail to parse or compile).
		rows int
	}{
		{"1=1; DROP TABLE x", -1},
		{"'; --", -1},
		{"NAME = ''; DROP TABLE x; --'", -1},
		{"NAME = '''; DROP TABLE x; --'", 0},
		{"NAME = 'x'' OR ''1''=''1'", 0},
		{"NAME = 'x' OR '1'='1'", 241},
		{"NAME = ʼxʼ OR 1=1", -1},
		{"NAME = ’x’ OR 1=1", -1},
		{"NAME = \u02bc\u02bc", -1},
		{"pg_sleep(5) IS NULL", -1},
		{"fid = (SELECT 1)", -1},
		{"fid IN (SELECT fid FROM x)", -1},
		{"EXISTS (SELECT 1)", -1},
		{"current_setting('server_version') = '1'", -1},
		{"lo_import('/etc/passwd') = 1", -1},
		{"version() = 'x'", -1},
		{"\"NAME\"\"; DROP TABLE x; --\" = 'a'", -1},
		{"\"fid) OR (1=1\" = 1", -1},
		{"NAME = 'a' /* comment */", -1},
		{"NAME = 'a' -- comment", -1},
		{"NAME = $$a$$", -1},
		{"NAME = E'\\x27'", -1},
		{"NAME LIKE '%' ESCAPE ''''", 241},
		{"NAME LIKE '%'''", 0},
		{"NAME = U&'\\0027'", -1},
		{"CAST(NAME AS regclass) IS NULL", -1},
		{bigIN, 2},
		{"NAME || ''' OR 1=1 --' = 'x'", 0},
	} {
		name := tc.clause
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			e, err := where.Parse(tc.clause)
			if err == nil {
				var n int
				n, err = src.Count(ctx, &feature.Query{Where: e})
				if err == nil {
					if tc.rows < 0 || n != tc.rows {
						t.Errorf("Count = %d; want %d", n, tc.rows)
					}
					return
				}
			}
			if tc.rows >= 0 {
				t.Fatalf("%v; want %d rows", err, tc.rows)
			}
			var se *where.SyntaxError
			var fe *where.FieldError
			var te *where.TypeError
			if !errors.As(err, &se) && !errors.As(err, &fe) && !errors.As(err, &te) && !errors.Is(err, feature.ErrQuery) {
				t.Errorf("error %v (%T) is not a where or query error", err, err)
			}
		})
	}

	// Hostile positions in Columns, Order, Stats and Distinct.
	for _, q := range []feature.Query{
		{Columns: []int{-1}}, {Columns: []int{1 << 30}}, {Order: []feature.Order{{Column: -5}}},
		{Order: []feature.Order{{Column: 99}}}, {Offset: -1}, {Limit: -1},
		{AnyOrder: true, Limit: 3},
	} {
		err := src.Scan(ctx, &q, func(*feature.Feature) error { return nil })
		if !errors.Is(err, feature.ErrQuery) {
			t.Errorf("Scan(%+v) = %v; want ErrQuery", q, err)
		}
	}
	if _, err := src.Stats(ctx, &feature.Query{}, []feature.Stat{{Kind: feature.StatSum, Column: 99}}, nil); !errors.Is(err, feature.ErrQuery) {
		t.Errorf("Stats on column 99 = %v", err)
	}
	if _, err := src.Stats(ctx, &feature.Query{}, []feature.Stat{{Kind: feature.StatAvg, Column: 1}}, nil); !errors.Is(err, feature.ErrQuery) {
		t.Errorf("Avg of a string = %v", err)
	}
	if _, err := src.Distinct(ctx, &feature.Query{}, []int{-1}); !errors.Is(err, feature.ErrQuery) {
		t.Errorf("Distinct on column -1 = %v", err)
	}
	if err := src.Scan(ctx, &feature.Query{Spatial: &feature.Spatial{Rel: feature.Relate, Geom: src.Info().Extent,
		Pattern: "T*'); DROP"}}, func(*feature.Feature) error { return nil }); !errors.Is(err, feature.ErrQuery) {
		t.Errorf("hostile DE-9IM pattern = %v", err)
	}

	// Hostile names from a service definition.
	for _, tbl := range []postgis.Table{
		{Table: `countries"; DROP TABLE x; --`},
		{Table: "countries; DROP TABLE x"},
		{Table: "countries", GeometryColumn: `geom") FROM x; --`},
		{Table: "countries", IDColumn: "fid; DROP TABLE x"},
		{Table: "countries", IDColumn: `fid" FROM x --`},
	} {
		if _, err := postgis.Open(ctx, pool, tbl); err == nil {
			t.Errorf("Open(%+v) succeeded", tbl)
		}
	}

	testenv.CheckPostgresTablesUnchanged(t, dsn, before)
}
