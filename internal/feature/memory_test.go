package feature_test

import (
	"context"
	"errors"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/where"
)

func mustWhere(t *testing.T, s string) *where.Expr {
	t.Helper()
	e, err := where.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func ids(t *testing.T, src feature.Source, q *feature.Query) []int64 {
	t.Helper()
	var out []int64
	if err := src.Scan(context.Background(), q, func(f *feature.Feature) error { out = append(out, f.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestMemorySource checks the in-memory provider against facts about the
// world sample: it is the oracle the database providers are compared with.
func TestMemorySource(t *testing.T) {
	l := load(t, "world_countries_50m_3857.gpkg", "countries", 3857)
	var src feature.Source = l
	ctx := context.Background()
	name := src.Info().FieldIndex("NAME")
	paris := proj.ToMercator(orb.Point{2.35, 48.86})
	pb := orb.Bound{Min: paris, Max: paris}

	if got := ids(t, src, &feature.Query{IDs: []int64{5, 3, 3, 999}}); len(got) != 2 || got[0] != 3 || got[1] != 5 {
		t.Errorf("IDs scan = %v, want [3 5]", got)
	}
	if got := ids(t, src, &feature.Query{IDs: []int64{}}); len(got) != 0 {
		t.Errorf("empty ID list selected %v", got)
	}
	var names []any
	if err := src.Scan(ctx, &feature.Query{Spatial: &feature.Spatial{Rel: feature.Intersects, Geom: paris}}, func(f *feature.Feature) error {
		names = append(names, f.Values[name])
		return nil
	}); err != nil || len(names) != 1 || names[0] != "France" {
		t.Errorf("intersects Paris = %v, %v", names, err)
	}
	n, err := src.Count(ctx, &feature.Query{Bound: &pb})
	if err != nil || n < 1 {
		t.Errorf("Count(bound Paris) = %d, %v", n, err)
	}
	all, _ := src.Count(ctx, &feature.Query{})
	if all != 241 {
		t.Errorf("Count() = %d, want 241", all)
	}
	// Pages are stable: ordered by NAME descending, then by ID.
	q := &feature.Query{Where: mustWhere(t, "NAME LIKE 'S%'"), Order: []feature.Order{{Column: name, Desc: true}}}
	whole := ids(t, src, q)
	q.Offset, q.Limit = 2, 3
	page := ids(t, src, q)
	if len(whole) < 5 || len(page) != 3 || page[0] != whole[2] || page[2] != whole[4] {
		t.Errorf("page %v is not whole[2:5] of %v", page, whole)
	}
	if c, _ := src.Count(ctx, q); c != 3 {
		t.Errorf("Count with a page = %d, want 3", c)
	}
	// Stats and Distinct agree with a plain scan.
	rows, err := src.Stats(ctx, &feature.Query{Where: mustWhere(t, "NAME LIKE 'S%'")}, []feature.Stat{{Kind: feature.StatCount, Column: name}, {Kind: feature.StatMin, Column: name}}, nil)
	if err != nil || len(rows) != 1 || rows[0].Values[0] != int64(len(whole)) || rows[0].Values[1] == nil {
		t.Errorf("Stats = %+v, %v (want count %d)", rows, err, len(whole))
	}
	d, err := src.Distinct(ctx, &feature.Query{Where: mustWhere(t, "NAME LIKE 'S%'")}, []int{name})
	if err != nil || len(d) != len(whole) || feature.CompareValues(d[0][0], d[len(d)-1][0]) >= 0 {
		t.Errorf("Distinct = %d rows, %v", len(d), err)
	}
	// Extent of France contains Paris.
	e, err := src.Extent(ctx, &feature.Query{Where: mustWhere(t, "NAME = 'France'")})
	if err != nil || !e.Contains(paris) {
		t.Errorf("Extent(France) = %v, %v", e, err)
	}
	// A where clause on a missing field is the caller's fault.
	if err := src.Scan(ctx, &feature.Query{Where: mustWhere(t, "NOPE = 1")}, func(*feature.Feature) error { return nil }); !errors.Is(err, feature.ErrQuery) {
		t.Errorf("unknown field: err = %v, want ErrQuery", err)
	}
	// A cancelled context stops the scan.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := src.Scan(cctx, &feature.Query{}, func(*feature.Feature) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled scan: err = %v", err)
	}
}
