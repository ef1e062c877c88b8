package postgis_test

import (
	"context"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/feature/gpkg"
	"github.com/mapfarm/mapfarm/internal/feature/postgis"
	"github.com/mapfarm/mapfarm/internal/feature/sourcetest"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/testenv"
	"github.com/mapfarm/mapfarm/internal/where"
)

// sample is one GeoPackage table of data/sample loaded into PostGIS.
type sample struct {
	file, table string
}

var samples = []sample{
	{"world_countries_50m_3857.gpkg", "countries"},
	{"us_counties_10m_3857.gpkg", "counties"},
	{"us_state_facts_3857.gpkg", "state_facts"},
}

// loadSamples returns a database holding the sample tables.
func loadSamples(t *testing.T) string {
	t.Helper()
	dsn := testenv.PostgresDB(t)
	for _, s := range samples {
		testenv.LoadGeoPackage(t, dsn, testenv.SampleData(t, s.file), s.table, s.table, "fid")
	}
	return dsn
}

func newPool(t *testing.T, dsn string, timeout time.Duration) *postgis.Pool {
	t.Helper()
	p, err := postgis.NewPool(postgis.PoolConfig{Name: "test", DSN: dsn, StatementTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

func openSource(t *testing.T, p *postgis.Pool, tbl postgis.Table) *postgis.Source {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := postgis.Open(ctx, p, tbl)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func oracle(t *testing.T, file, table string) *feature.Layer {
	t.Helper()
	f, err := gpkg.Open(testenv.SampleData(t, file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := f.ReadLayer(table, proj.SR{WKID: 3857})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func mustWhere(t *testing.T, clause string) *where.Expr {
	t.Helper()
	e, err := where.Parse(clause)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// parityCase is one query both sources answer.
type parityCase struct {
	name string
	q    func(l *feature.Layer) feature.Query
}

func parityCases(t *testing.T, table string) []parityCase {
	w := func(c string) *where.Expr { return mustWhere(t, c) }
	geomOf := func(l *feature.Layer, id int64) orb.Geometry {
		f, ok := l.ByID(id)
		if !ok {
			t.Fatalf("no feature %d", id)
		}
		return f.Geom
	}
	env := orb.Bound{Min: orb.Point{-1.2e7, 3.0e6}, Max: orb.Point{-0.9e7, 5.0e6}}
	europe := orb.Bound{Min: orb.Point{0.2e6, 5.0e6}, Max: orb.Point{2.0e6, 7.0e6}}
	point := orb.Point{-1.0e7, 4.0e6}
	// under returns the feature under a point in Belgium (countries) or
	// Mississippi (US data): small polygons with neighbours.
	under := func(l *feature.Layer) int64 {
		var id int64
		for _, p := range []orb.Point{{0.5e6, 6.55e6}, point} {
			q := feature.Query{Spatial: &feature.Spatial{Rel: feature.Within, Geom: p}, Limit: 1}
			if err := l.Scan(context.Background(), &q, func(f *feature.Feature) error { id = f.ID; return nil }); err != nil {
				t.Fatal(err)
			}
			if id != 0 {
				return id
			}
		}
		t.Fatalf("no feature under the points")
		return 0
	}
	line := orb.LineString{{-1.3e7, 3.5e6}, {-0.8e7, 4.6e6}}
	spatial := func(rel feature.Relation, g orb.Geometry) func(*feature.Layer) feature.Query {
		return func(*feature.Layer) feature.Query { return feature.Query{Spatial: &feature.Spatial{Rel: rel, Geom: g}} }
	}
	cases := []parityCase{
		{"all", func(*feature.Layer) feature.Query { return feature.Query{} }},
		{"no geometry", func(*feature.Layer) feature.Query { return feature.Query{NoGeometry: true} }},
		{"bound", func(*feature.Layer) feature.Query { return feature.Query{Bound: &env} }},
		// A box around the whole table is tested in Go (Scan), not in SQL.
		{"bound around everything", func(*feature.Layer) feature.Query {
			return feature.Query{Bound: &orb.Bound{Min: orb.Point{-2.1e7, -2.1e7}, Max: orb.Point{2.1e7, 2.1e7}}}
		}},
		// A box a centimetre short of a feature: the index's float4 boxes (a metre apart here)
		// find it, the exact test in Go leaves it out.
		{"bound a centimetre short of a feature", func(l *feature.Layer) feature.Query {
			fb := geomOf(l, under(l)).Bound()
			return feature.Query{Bound: &orb.Bound{Min: orb.Point{fb.Min[0] - 1000, fb.Min[1]}, Max: orb.Point{fb.Min[0] - 0.01, fb.Max[1]}}}
		}},
		{"bound page", func(*feature.Layer) feature.Query {
			return feature.Query{Bound: &env, Offset: 1, Limit: 2}
		}},
		{"ids", func(*feature.Layer) feature.Query { return feature.Query{IDs: []int64{5, 1, 3, 99999, 3}} }},
		{"no ids", func(*feature.Layer) feature.Query { return feature.Query{IDs: []int64{}} }},
		{"where exact", func(*feature.Layer) feature.Query { return feature.Query{Where: w("NAME LIKE 'S%' OR NAME > 'W'")} }},
		{"where inexact", func(*feature.Layer) feature.Query {
			return feature.Query{Where: w("UPPER(NAME) LIKE '%AN%' AND fid > 10"), Offset: 2, Limit: 7}
		}},
		{"where never", func(*feature.Layer) feature.Query { return feature.Query{Where: w("1 = 0")} }},
		{"order name desc page", func(l *feature.Layer) feature.Query {
			return feature.Query{Order: []feature.Order{{Column: l.Info().FieldIndex("NAME"), Desc: true}}, Offset: 10, Limit: 20}
		}},
		{"columns", func(l *feature.Layer) feature.Query {
			return feature.Query{Columns: []int{l.Info().FieldIndex("NAME")}, Limit: 30}
		}},
		{"intersects envelope", spatial(feature.Intersects, env)},
		{"envelope intersects line", spatial(feature.EnvelopeIntersects, line)},
		{"intersects line", spatial(feature.Intersects, line)},
		{"crosses line", spatial(feature.Crosses, line)},
		{"within point", spatial(feature.Within, point)},
		{"contains envelope", spatial(feature.Contains, env)},
		{"overlaps envelope", func(*feature.Layer) feature.Query {
			return feature.Query{Spatial: &feature.Spatial{Rel: feature.Overlaps, Geom: env}, Where: w("fid < 3000")}
		}},
		{"contains europe envelope", spatial(feature.Contains, europe)},
		{"touches the feature under the point", func(l *feature.Layer) feature.Query {
			return feature.Query{Spatial: &feature.Spatial{Rel: feature.Touches, Geom: geomOf(l, under(l))}}
		}},
		{"relate interior", func(*feature.Layer) feature.Query {
			return feature.Query{Spatial: &feature.Spatial{Rel: feature.Relate, Geom: env, Pattern: "T********"}}
		}},
	}
	if table == "state_facts" {
		cases = append(cases, parityCase{"numbers", func(l *feature.Layer) feature.Query {
			return feature.Query{Where: w("AREA_KM2 / COUNTIES > 500 AND REGION IN (1, 3)"),
				Order: []feature.Order{{Column: l.Info().FieldIndex("AREA_KM2")}}}
		}}, parityCase{"blob", func(l *feature.Layer) feature.Query {
			return feature.Query{Columns: []int{l.Info().FieldIndex("SWATCH"), l.Info().FieldIndex("NAME")}, Limit: 5}
		}})
	}
	return cases
}

// TestParity runs the shared parity table (feature/sourcetest) and the
// queries below (every spatial relation, envelopes, BLOBs, residual where
// clauses with pages) against the PostGIS source and the in-memory layer
// read from the same GeoPackage (the oracle), and requires the same
// answers: features (ids, values, geometries), counts, extents,
// statistics and distinct values.
func TestParity(t *testing.T) {
	dsn := loadSamples(t)
	pool := newPool(t, dsn, 0)
	ctx := context.Background()
	for _, smp := range samples {
		t.Run(smp.table, func(t *testing.T) {
			src := openSource(t, pool, postgis.Table{Table: smp.table})
			mem := oracle(t, smp.file, smp.table)
			checkInfo(t, src.Info(), mem.Info())
			t.Run("shared table", func(t *testing.T) { sourcetest.Parity(t, mem, src) })
			cases := parityCases(t, smp.table)
			nonEmpty := 0
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) {
					q := c.q(mem)
					want := scanAll(t, mem, &q)
					if len(want) > 0 {
						nonEmpty++
					}
					got := scanAll(t, src, &q)
					compareFeatures(t, src.Info().Fields, &q, got, want)

					wn, err := mem.Count(ctx, &q)
					if err != nil {
						t.Fatal(err)
					}
					gn, err := src.Count(ctx, &q)
					if err != nil || gn != wn {
						t.Errorf("Count = %d, %v; want %d", gn, err, wn)
					}
					we, _ := mem.Extent(ctx, &q)
					ge, err := src.Extent(ctx, &q)
					if err != nil || ge != we {
						t.Errorf("Extent = %v, %v; want %v", ge, err, we)
					}
					if q.Offset == 0 && q.Limit == 0 {
						compareAggregates(t, src, mem, &q)
					}
				})
			}
			// A case that selects nothing compares nothing: most must select rows.
			if nonEmpty < len(cases)-4 {
				t.Errorf("only %d of %d cases select features", nonEmpty, len(cases))
			}
			t.Run("resolution", func(t *testing.T) { checkResolution(t, src, smp) })
		})
	}
}

// checkResolution scans with a draw's Resolution on PostGIS (ST_AsTWKB) and on the GeoPackage
// the table came from (snapped in Go): both must give the same snapped geometries, on the
// grid, with fewer vertices than stored at a coarse resolution.
func checkResolution(t *testing.T, src feature.Source, smp sample) {
	f, err := gpkg.Open(testenv.SampleData(t, smp.file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gp, err := f.Source(context.Background(), smp.table)
	if err != nil {
		t.Fatal(err)
	}
	env := orb.Bound{Min: orb.Point{-1.4e7, 2.5e6}, Max: orb.Point{-0.7e7, 6.5e6}}
	for _, res := range []float64{0.3, 2000, 5e6} {
		q := feature.Query{Bound: &env, Columns: []int{}, Resolution: res}
		got, want := scanAll(t, src, &q), scanAll(t, gp, &q)
		stored := scanAll(t, gp, &feature.Query{Bound: &env, Columns: []int{}})
		if len(got) != len(want) || len(got) != len(stored) || len(got) == 0 {
			t.Fatalf("res %g: %d features from PostGIS, %d from the GeoPackage, %d stored", res, len(got), len(want), len(stored))
		}
		grid, _, _ := feature.GridFor(res)
		vertices, storedVertices := 0, 0
		for i := range got {
			if got[i].ID != want[i].ID || !reflect.DeepEqual(got[i].Geom, want[i].Geom) {
				t.Fatalf("res %g: feature %d: PostGIS and GeoPackage differ: %s", res, got[i].ID, firstDifference(got[i].Geom, want[i].Geom))
			}
			if got[i].Bound != want[i].Bound {
				t.Errorf("res %g: feature %d: bound %v, GeoPackage %v", res, got[i].ID, got[i].Bound, want[i].Bound)
			}
			for _, p := range allPoints(got[i].Geom) {
				if x := p[0] / grid; math.Abs(x-math.Round(x)) > 1e-6+1e-12*math.Abs(x) {
					t.Fatalf("res %g: feature %d vertex %v is not on the %g grid", res, got[i].ID, p, grid)
				}
			}
			vertices += feature.VertexCount(got[i].Geom)
			storedVertices += feature.VertexCount(stored[i].Geom)
		}
		if res > 1e6 && vertices >= storedVertices {
			t.Errorf("res %g: %d vertices, stored %d: nothing dropped", res, vertices, storedVertices)
		}
	}
}

// firstDifference describes where two geometries' rings first differ.
func firstDifference(a, b orb.Geometry) string {
	ra, rb := rings(a), rings(b)
	for i := range min(len(ra), len(rb)) {
		for j := range min(len(ra[i]), len(rb[i])) {
			if ra[i][j] != rb[i][j] {
				return fmt.Sprintf("ring %d (%d and %d points) at point %d: %v and %v; before: %v", i, len(ra[i]), len(rb[i]), j, ra[i][j], rb[i][j], ra[i][max(0, j-2):j])
			}
		}
		if len(ra[i]) != len(rb[i]) {
			return fmt.Sprintf("ring %d: %d and %d points, ends %v and %v", i, len(ra[i]), len(rb[i]), ra[i][len(ra[i])-2:], rb[i][len(rb[i])-2:])
		}
	}
	return fmt.Sprintf("%d and %d rings", len(ra), len(rb))
}

func rings(g orb.Geometry) [][]orb.Point {
	switch g := g.(type) {
	case orb.Polygon:
		out := make([][]orb.Point, len(g))
		for i, r := range g {
			out[i] = r
		}
		return out
	case orb.MultiPolygon:
		var out [][]orb.Point
		for _, p := range g {
			out = append(out, rings(p)...)
		}
		return out
	}
	return [][]orb.Point{allPoints(g)}
}

func allPoints(g orb.Geometry) []orb.Point {
	var out []orb.Point
	switch g := g.(type) {
	case orb.Polygon:
		for _, r := range g {
			out = append(out, r...)
		}
	case orb.MultiPolygon:
		for _, p := range g {
			out = append(out, allPoints(p)...)
		}
	case orb.Point:
		out = append(out, g)
	case orb.MultiPoint:
		out = append(out, g...)
	case orb.LineString:
		out = append(out, g...)
	case orb.MultiLineString:
		for _, l := range g {
			out = append(out, l...)
		}
	}
	return out
}

func checkInfo(t *testing.T, got, want feature.Info) {
	t.Helper()
	if got.SR != want.SR || got.GeometryType != want.GeometryType {
		t.Errorf("Info SR %v type %v; want %v %v", got.SR, got.GeometryType, want.SR, want.GeometryType)
	}
	if len(got.Fields) != len(want.Fields) {
		t.Fatalf("Info fields %v; want %v", got.Fields, want.Fields)
	}
	for i := range got.Fields {
		g, w := got.Fields[i], want.Fields[i]
		if g.Name != w.Name || g.Type != w.Type {
			t.Errorf("field %d = %s %v; want %s %v", i, g.Name, g.Type, w.Name, w.Type)
		}
	}
	if got.AvgPoints == 0 || got.Extent.IsEmpty() {
		t.Errorf("Info AvgPoints %d extent %v", got.AvgPoints, got.Extent)
	}
}

func scanAll(t *testing.T, s feature.Source, q *feature.Query) []*feature.Feature {
	t.Helper()
	var out []*feature.Feature
	if err := s.Scan(context.Background(), q, func(f *feature.Feature) error { out = append(out, f); return nil }); err != nil {
		t.Fatalf("%s: Scan: %v", s.Info().Name, err)
	}
	return out
}

func compareFeatures(t *testing.T, fields []feature.Field, q *feature.Query, got, want []*feature.Feature) {
	t.Helper()
	ids := func(fs []*feature.Feature) []int64 {
		out := make([]int64, len(fs))
		for i, f := range fs {
			out[i] = f.ID
		}
		return out
	}
	if !slices.Equal(ids(got), ids(want)) {
		t.Fatalf("ids %v\nwant %v", ids(got), ids(want))
	}
	cols := q.Columns
	if cols == nil {
		for i, f := range fields {
			if f.Type != feature.FieldBlob {
				cols = append(cols, i)
			}
		}
	}
	for i := range got {
		for _, c := range cols {
			if !reflect.DeepEqual(got[i].Values[c], want[i].Values[c]) {
				t.Errorf("feature %d %s = %#v; want %#v", got[i].ID, fields[c].Name, got[i].Values[c], want[i].Values[c])
			}
		}
		if q.NoGeometry {
			if got[i].Geom != nil {
				t.Errorf("feature %d has a geometry with NoGeometry", got[i].ID)
			}
			continue
		}
		if !orb.Equal(got[i].Geom, want[i].Geom) {
			t.Errorf("feature %d geometry differs (%T with %d points vs %T with %d)", got[i].ID,
				got[i].Geom, feature.VertexCount(got[i].Geom), want[i].Geom, feature.VertexCount(want[i].Geom))
		}
	}
}

func compareAggregates(t *testing.T, src, mem feature.Source, q *feature.Query) {
	t.Helper()
	ctx := context.Background()
	fields := mem.Info().Fields
	var stats []feature.Stat
	var group, distinct []int
	for i, f := range fields {
		stats = append(stats, feature.Stat{Kind: feature.StatCount, Column: i},
			feature.Stat{Kind: feature.StatMin, Column: i}, feature.Stat{Kind: feature.StatMax, Column: i})
		if f.Type.Numeric() {
			for _, k := range []feature.StatKind{feature.StatSum, feature.StatAvg, feature.StatStdDev, feature.StatVariance} {
				stats = append(stats, feature.Stat{Kind: k, Column: i})
			}
		}
		if f.Name == "STATE" || f.Name == "REGION" || f.Name == "STATEFP" {
			group = append(group, i)
		}
		if f.Type == feature.FieldString && len(distinct) == 0 {
			distinct = append(distinct, i)
		}
	}
	if len(group) > 1 {
		group = group[:1]
	}
	for _, g := range [][]int{nil, group} {
		want, err := mem.Stats(ctx, q, stats, g)
		if err != nil {
			t.Fatal(err)
		}
		got, err := src.Stats(ctx, q, stats, g)
		if err != nil {
			t.Fatalf("Stats: %v", err)
		}
		if len(got) != len(want) {
			t.Fatalf("Stats group %v: %d rows, want %d", g, len(got), len(want))
		}
		for i := range got {
			if !reflect.DeepEqual(got[i].Group, want[i].Group) {
				t.Errorf("Stats row %d group %v; want %v", i, got[i].Group, want[i].Group)
			}
			for j := range stats {
				if !sameStat(got[i].Values[j], want[i].Values[j]) {
					t.Errorf("Stats row %d stat %+v = %#v; want %#v", i, stats[j], got[i].Values[j], want[i].Values[j])
				}
			}
		}
	}
	if len(distinct) > 0 {
		want, err := mem.Distinct(ctx, q, distinct)
		if err != nil {
			t.Fatal(err)
		}
		got, err := src.Distinct(ctx, q, distinct)
		if err != nil {
			t.Fatalf("Distinct: %v", err)
		}
		if len(got) != len(want) || (len(want) > 0 && !reflect.DeepEqual(got, want)) {
			t.Errorf("Distinct: %d tuples, want %d", len(got), len(want))
		}
	}
}

// sameStat compares statistics, floats to 1e-9 relative (SQL and Go sum
// in different orders).
func sameStat(a, b any) bool {
	fa, aok := a.(float64)
	fb, bok := b.(float64)
	if aok && bok {
		return math.Abs(fa-fb) <= 1e-9*math.Max(1, math.Max(math.Abs(fa), math.Abs(fb)))
	}
	return reflect.DeepEqual(a, b)
}

// TestOpenChecks: the SRID is checked against the declared SR, and names
// from the service definition must exist.
func TestOpenChecks(t *testing.T) {
	dsn := testenv.PostgresDB(t)
	testenv.LoadGeoPackage(t, dsn, testenv.SampleData(t, samples[0].file), "countries", "countries", "fid")
	pool := newPool(t, dsn, 0)
	ctx := context.Background()
	for _, tc := range []struct {
		tbl  postgis.Table
		want string
	}{
		{postgis.Table{Table: "countries", SR: proj.SR{WKID: 4326}}, "does not match the data's SRID 3857"},
		{postgis.Table{Table: "nope"}, `table "nope" not found`},
		{postgis.Table{Table: "countries", GeometryColumn: "NAME"}, "not a geometry column"},
		{postgis.Table{Table: "countries", IDColumn: "NAME"}, "not an integer"},
		{postgis.Table{Table: "countries", IDColumn: "gid"}, "not a column"},
		{postgis.Table{SQL: "SELECT fid, geom FROM countries"}, "idColumn is required"},
		{postgis.Table{SQL: "SELECT 1; DROP TABLE countries", IDColumn: "fid"}, "without ';'"},
	} {
		_, err := postgis.Open(ctx, pool, tc.tbl)
		if err == nil || !containsAll(err.Error(), tc.want, "postgis test") {
			t.Errorf("Open(%+v) = %v; want an error naming the source and saying %q", tc.tbl, err, tc.want)
		}
	}
	// Web Mercator under its Esri WKID is the same SR.
	s := openSource(t, pool, postgis.Table{Table: "countries", SR: proj.SR{WKID: 102100}})
	if s.Info().SR.WKID != 102100 {
		t.Errorf("SR %v", s.Info().SR)
	}
	// A SQL view.
	v := openSource(t, pool, postgis.Table{Name: "view", SQL: `SELECT fid, "NAME", geom FROM countries WHERE "NAME" LIKE 'A%'`, IDColumn: "fid"})
	n, err := v.Count(ctx, &feature.Query{})
	if err != nil || n < 5 {
		t.Errorf("view count %d, %v", n, err)
	}
	if fs := v.Info().Fields; len(fs) != 2 || fs[0].Type != feature.FieldOID {
		t.Errorf("view fields %+v", fs)
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
