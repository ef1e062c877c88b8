// Package sourcetest holds the parity table every feature provider is tested with: the same
// queries run against an oracle (the in-memory feature.Layer) and a provider over the same rows,
// and every answer must be the same — ids and their order, values, geometries, counts, extents,
// statistics and distinct values. The GeoPackage and PostGIS providers' tests call Parity.
package sourcetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/where"
)

// Case is one query of the table.
type Case struct {
	Name  string
	Query feature.Query
}

// Cases builds the query table for a source from its data: fields are chosen by type, and
// literals from the oracle's own values, so the table fits any layer with a string field.
func Cases(t testing.TB, oracle feature.Source) []Case {
	t.Helper()
	ctx := context.Background()
	info := oracle.Info()
	str, num := -1, -1
	for i, f := range info.Fields {
		switch {
		case f.Type == feature.FieldString && str < 0:
			str = i
		case (f.Type == feature.FieldDouble || f.Type == feature.FieldInteger || f.Type == feature.FieldSmallInteger) && num < 0:
			num = i
		}
	}
	if str < 0 {
		t.Fatalf("%s has no string field", info.Name)
	}
	sname := info.Fields[str].Name
	vals, err := oracle.Distinct(ctx, &feature.Query{}, []int{str})
	if err != nil || len(vals) < 6 {
		t.Fatalf("distinct %s: %d values, %v", sname, len(vals), err)
	}
	pick := func(i int) string { s, _ := vals[i*len(vals)/6][0].(string); return s }
	parse := func(s string) *where.Expr {
		e, err := where.Parse(s)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		return e
	}
	in, err := where.In(sname, []any{pick(1), pick(3), "no such value"})
	if err != nil {
		t.Fatal(err)
	}
	first := pick(2)[:1]
	cs := []Case{
		{"all", feature.Query{}},
		{"ids", feature.Query{IDs: []int64{3, 1, 2, 1, 1 << 40}}},
		{"no ids", feature.Query{IDs: []int64{}}},
		{"eq", feature.Query{Where: in}},
		{"like", feature.Query{Where: parse(fmt.Sprintf("%s LIKE '%s%%'", sname, first))}},
		{"like lower", feature.Query{Where: parse(fmt.Sprintf("%s LIKE '%s%%'", sname, string(first[0]|0x20)))}},
		{"not like", feature.Query{Where: parse(fmt.Sprintf("%s NOT LIKE '%%a%%'", sname))}},
		{"range", feature.Query{Where: parse(fmt.Sprintf("%s >= '%s' AND %s < '%s'", sname, pick(1), sname, pick(4)))}},
		{"function", feature.Query{Where: parse(fmt.Sprintf("UPPER(%s) LIKE '%%A%%' OR CHAR_LENGTH(%s) < 6", sname, sname))}},
		{"null", feature.Query{Where: parse(fmt.Sprintf("%s IS NULL OR %s = ''", sname, sname))}},
		{"ordered page", feature.Query{Order: []feature.Order{{Column: str, Desc: true}}, Offset: 5, Limit: 7}},
		{"page", feature.Query{Offset: 10, Limit: 10}},
		{"columns only", feature.Query{Columns: []int{str}, NoGeometry: true, Where: in}},
	}
	if num >= 0 {
		nname := info.Fields[num].Name
		nv, err := oracle.Stats(ctx, &feature.Query{}, []feature.Stat{{Kind: feature.StatAvg, Column: num}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		avg, _ := nv[0].Values[0].(float64)
		cs = append(cs,
			Case{"numeric", feature.Query{Where: parse(fmt.Sprintf("%s > %g", nname, avg))}},
			Case{"numeric between", feature.Query{Where: parse(fmt.Sprintf("%s BETWEEN %g AND %g OR %s IS NULL", nname, avg/2, avg*2, nname))}},
			Case{"arithmetic", feature.Query{Where: parse(fmt.Sprintf("%s * 2 > %g", nname, avg))}},
			Case{"numeric order", feature.Query{Order: []feature.Order{{Column: num}, {Column: str, Desc: true}}, Limit: 12}},
		)
	}
	if info.GeometryType != feature.None && !info.Extent.IsEmpty() {
		e := info.Extent
		w, h := e.Max[0]-e.Min[0], e.Max[1]-e.Min[1]
		mid := orb.Bound{Min: orb.Point{e.Min[0] + w/4, e.Min[1] + h/4}, Max: orb.Point{e.Min[0] + 3*w/4, e.Min[1] + 3*h/4}}
		small := orb.Bound{Min: orb.Point{e.Min[0] + 0.45*w, e.Min[1] + 0.45*h}, Max: orb.Point{e.Min[0] + 0.55*w, e.Min[1] + 0.55*h}}
		c := mid.Center()
		tri := orb.Polygon{{{e.Min[0] + w/3, e.Min[1] + h/3}, {e.Min[0] + 2*w/3, e.Min[1] + h/3}, {c[0], e.Min[1] + 2*h/3}, {e.Min[0] + w/3, e.Min[1] + h/3}}}
		cs = append(cs,
			Case{"bound", feature.Query{Bound: &mid}},
			Case{"small bound", feature.Query{Bound: &small}},
			Case{"bound and where", feature.Query{Bound: &mid, Where: parse(fmt.Sprintf("%s < '%s'", sname, pick(3)))}},
			Case{"bound page", feature.Query{Bound: &mid, Offset: 3, Limit: 5}},
			Case{"intersects envelope", feature.Query{Spatial: &feature.Spatial{Rel: feature.Intersects, Geom: small}}},
			Case{"intersects rectangle", feature.Query{Spatial: &feature.Spatial{Rel: feature.Intersects, Geom: mid.ToPolygon()}}},
			Case{"envelope intersects", feature.Query{Spatial: &feature.Spatial{Rel: feature.EnvelopeIntersects, Geom: tri}}},
			Case{"intersects polygon", feature.Query{Spatial: &feature.Spatial{Rel: feature.Intersects, Geom: tri}}},
			Case{"contains", feature.Query{Spatial: &feature.Spatial{Rel: feature.Contains, Geom: tri}}},
			Case{"within point", feature.Query{Spatial: &feature.Spatial{Rel: feature.Within, Geom: c}}},
			Case{"touches", feature.Query{Spatial: &feature.Spatial{Rel: feature.Touches, Geom: tri}}},
			Case{"relate", feature.Query{Spatial: &feature.Spatial{Rel: feature.Relate, Geom: tri, Pattern: "T********"}}},
			Case{"relate disjoint", feature.Query{Spatial: &feature.Spatial{Rel: feature.Relate, Geom: tri, Pattern: "FF*FF****"}}},
			Case{"relate disjoint page", feature.Query{Spatial: &feature.Spatial{Rel: feature.Relate, Geom: small, Pattern: "FF*FF****"}, Offset: 2, Limit: 4}},
			Case{"spatial ids", feature.Query{Spatial: &feature.Spatial{Rel: feature.Intersects, Geom: mid}, IDs: []int64{1, 5, 9, 20, 40, 60, 80}}},
		)
	}
	return cs
}

// Parity runs the query table against oracle and got and fails on any difference.
func Parity(t *testing.T, oracle, got feature.Source) {
	t.Helper()
	ctx := context.Background()
	oi, gi := oracle.Info(), got.Info()
	if oi.GeometryType != gi.GeometryType || len(oi.Fields) != len(gi.Fields) {
		t.Fatalf("info: oracle %v %d fields, got %v %d fields", oi.GeometryType, len(oi.Fields), gi.GeometryType, len(gi.Fields))
	}
	for i := range oi.Fields {
		if oi.Fields[i].Name != gi.Fields[i].Name || oi.Fields[i].Type != gi.Fields[i].Type {
			t.Errorf("field %d: oracle %+v, got %+v", i, oi.Fields[i], gi.Fields[i])
		}
	}
	if !oi.Extent.IsEmpty() && !nearBound(oi.Extent, gi.Extent) {
		t.Errorf("extent: oracle %v, got %v", oi.Extent, gi.Extent)
	}
	for _, c := range Cases(t, oracle) {
		t.Run(c.Name, func(t *testing.T) {
			q := c.Query
			want, err := collect(ctx, oracle, &q)
			if err != nil {
				t.Fatalf("oracle: %v", err)
			}
			have, err := collect(ctx, got, &q)
			if err != nil {
				t.Fatalf("provider: %v", err)
			}
			if len(want) != len(have) {
				t.Fatalf("%d features, oracle %d (ids %v vs %v)", len(have), len(want), ids(have), ids(want))
			}
			cols := q.Columns
			if cols == nil {
				for i, f := range oi.Fields {
					if f.Type != feature.FieldBlob {
						cols = append(cols, i)
					}
				}
			}
			for i := range want {
				w, h := want[i], have[i]
				if w.ID != h.ID {
					t.Fatalf("feature %d: id %d, oracle %d (ids %v vs %v)", i, h.ID, w.ID, ids(have), ids(want))
				}
				for _, col := range cols {
					if !sameValue(w.Values[col], h.Values[col]) {
						t.Errorf("id %d %s: %v (%T), oracle %v (%T)", w.ID, oi.Fields[col].Name, h.Values[col], h.Values[col], w.Values[col], w.Values[col])
					}
				}
				if !q.NoGeometry && !sameGeometry(w.Geom, h.Geom) {
					t.Errorf("id %d: geometries differ", w.ID)
				}
			}
			wn, err1 := oracle.Count(ctx, &q)
			hn, err2 := got.Count(ctx, &q)
			if err1 != nil || err2 != nil || wn != hn {
				t.Errorf("Count: %d (%v), oracle %d (%v)", hn, err2, wn, err1)
			}
			if q.Offset == 0 && q.Limit == 0 && oi.GeometryType != feature.None {
				we, err1 := oracle.Extent(ctx, &q)
				he, err2 := got.Extent(ctx, &q)
				if err1 != nil || err2 != nil || (!we.IsEmpty() || !he.IsEmpty()) && !nearBound(we, he) {
					t.Errorf("Extent: %v (%v), oracle %v (%v)", he, err2, we, err1)
				}
			}
		})
	}
	t.Run("stats", func(t *testing.T) { statsParity(t, oracle, got) })
}

func statsParity(t *testing.T, oracle, got feature.Source) {
	ctx := context.Background()
	info := oracle.Info()
	var stats []feature.Stat
	var group []int
	for i, f := range info.Fields {
		switch {
		case f.Type == feature.FieldString && len(group) == 0 && f.Type != feature.FieldOID:
			group = append(group, i)
			stats = append(stats, feature.Stat{Kind: feature.StatCount, Column: i}, feature.Stat{Kind: feature.StatMax, Column: i})
		case f.Type.Numeric():
			for _, k := range []feature.StatKind{feature.StatCount, feature.StatSum, feature.StatMin, feature.StatMax, feature.StatAvg, feature.StatStdDev, feature.StatVariance} {
				stats = append(stats, feature.Stat{Kind: k, Column: i})
			}
		}
	}
	for _, g := range [][]int{nil, group} {
		for _, q := range []feature.Query{{}, {IDs: []int64{}}, {IDs: []int64{1, 2, 3, 4, 5, 6}}} {
			want, err1 := oracle.Stats(ctx, &q, stats, g)
			have, err2 := got.Stats(ctx, &q, stats, g)
			if err1 != nil || err2 != nil || len(want) != len(have) {
				t.Fatalf("Stats(group %v): %d rows (%v), oracle %d rows (%v)", g, len(have), err2, len(want), err1)
			}
			for i := range want {
				for j := range want[i].Group {
					if !sameValue(want[i].Group[j], have[i].Group[j]) {
						t.Errorf("group %d: %v, oracle %v", i, have[i].Group, want[i].Group)
					}
				}
				for j := range stats {
					if !sameValue(want[i].Values[j], have[i].Values[j]) {
						t.Errorf("group %v stat %d (kind %d of %s): %v, oracle %v", want[i].Group, j, stats[j].Kind, info.Fields[stats[j].Column].Name, have[i].Values[j], want[i].Values[j])
					}
				}
			}
		}
	}
	if len(group) > 0 {
		// MaxGroups: exactly as many groups as the selection has pass, one fewer is refused.
		all, err := oracle.Stats(ctx, &feature.Query{}, stats, group)
		if err != nil || len(all) < 2 {
			t.Fatalf("Stats by %v: %d groups (%v), want several", group, len(all), err)
		}
		for _, src := range []feature.Source{oracle, got} {
			if rows, err := src.Stats(ctx, &feature.Query{MaxGroups: len(all)}, stats, group); err != nil || len(rows) != len(all) {
				t.Errorf("%s: MaxGroups %d of %d groups: %d rows, %v", src.Info().Name, len(all), len(all), len(rows), err)
			}
			if rows, err := src.Stats(ctx, &feature.Query{MaxGroups: len(all) - 1}, stats, group); !errors.Is(err, feature.ErrTooManyGroups) {
				t.Errorf("%s: MaxGroups %d of %d groups: %d rows, %v; want ErrTooManyGroups", src.Info().Name, len(all)-1, len(all), len(rows), err)
			}
		}
		want, err1 := oracle.Distinct(ctx, &feature.Query{}, group)
		have, err2 := got.Distinct(ctx, &feature.Query{}, group)
		if err1 != nil || err2 != nil || !slices.EqualFunc(want, have, func(a, b []any) bool { return feature.CompareRows(a, b) == 0 }) {
			t.Errorf("Distinct: %d values (%v), oracle %d (%v)", len(have), err2, len(want), err1)
		}
	}
}

func collect(ctx context.Context, src feature.Source, q *feature.Query) ([]*feature.Feature, error) {
	var out []*feature.Feature
	err := src.Scan(ctx, q, func(f *feature.Feature) error { out = append(out, f); return nil })
	return out, err
}

func ids(fs []*feature.Feature) []int64 {
	out := make([]int64, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	if len(out) > 20 {
		out = out[:20]
	}
	return out
}

// sameValue compares attribute values, floats to 1e-9 relative.
func sameValue(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || math.Abs(x-y) <= 1e-9*math.Max(math.Abs(x), math.Abs(y)))
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case []byte:
		y, ok := b.([]byte)
		return ok && string(x) == string(y)
	}
	return a == b
}

func sameGeometry(a, b orb.Geometry) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return orb.Equal(a, b)
}

func nearBound(a, b orb.Bound) bool {
	tol := 1e-6 * math.Max(1, math.Max(a.Max[0]-a.Min[0], a.Max[1]-a.Min[1]))
	return math.Abs(a.Min[0]-b.Min[0]) <= tol && math.Abs(a.Min[1]-b.Min[1]) <= tol &&
		math.Abs(a.Max[0]-b.Max[0]) <= tol && math.Abs(a.Max[1]-b.Max[1]) <= tol
}
