package feature_test

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// versioned is a source whose version the test sets, and which counts its scans.
type versioned struct {
	*feature.Layer
	version  int
	scans    int
	versions int // Version calls
}

func (v *versioned) Version(context.Context) (string, error) {
	v.versions++
	return strconv.Itoa(v.version), nil
}

func (v *versioned) Scan(ctx context.Context, q *feature.Query, fn func(*feature.Feature) error) error {
	v.scans++
	return v.Layer.Scan(ctx, q, fn)
}

// squares is a layer of n×n squares of side size on a grid of cell from (ox, oy), with one
// square hole in the first.
func squares(n int, ox, oy, cell, size float64) *feature.Layer {
	var fs []feature.Feature
	for i := range n * n {
		x0, y0 := ox+float64(i%n)*cell, oy+float64(i/n)*cell
		p := orb.Polygon{{{x0, y0}, {x0 + size, y0}, {x0 + size, y0 + size}, {x0, y0 + size}, {x0, y0}}}
		if i == 0 {
			h := size / 4
			p = append(p, orb.Ring{{x0 + h, y0 + h}, {x0 + 2*h, y0 + h}, {x0 + 2*h, y0 + 2*h}, {x0 + h, y0 + 2*h}, {x0 + h, y0 + h}})
		}
		fs = append(fs, feature.Feature{ID: int64(i + 1), Geom: p})
	}
	return feature.NewLayer("squares", proj.SR{}, feature.Polygon, nil, fs)
}

// TestOverview checks what an overview gives a drawing: every footprint (box, area with holes
// subtracted, ring length) when every feature is small enough, nothing otherwise; a rebuild
// after the source changed, but only for a drawing of the whole layer; none for a layer of
// another geometry.
func TestOverview(t *testing.T) {
	ctx := context.Background()
	// 10 × 10 squares of 48 m on a 50 m grid, far from the origin (float32 boxes).
	src := &versioned{Layer: squares(10, -10915000, 3480000, 50, 48), version: 1}
	ov := feature.NewOverview(src, feature.NewOverviewBudget(0))
	if ov == nil {
		t.Fatal("no overview of a versioned polygon source")
	}
	whole := src.Info().Extent
	type fp struct {
		b           orb.Bound
		area, perim float64
	}
	collect := func(bound orb.Bound, maxSize float64) ([]fp, bool) {
		t.Helper()
		var got []fp
		ok, err := ov.Footprints(ctx, bound, maxSize, func(b orb.Bound, area, perim float64) bool {
			got = append(got, fp{b, area, perim})
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		return got, ok
	}

	if _, ok := collect(whole, 47); ok {
		t.Error("features of 48 m drawn from footprints with 47 m pixels")
	}
	got, ok := collect(whole, 48.5)
	if !ok || len(got) != 100 || src.scans != 1 {
		t.Fatalf("whole layer, 48.5 m pixels: %d footprints, drawn %v, %d scans (want 100, true, 1)", len(got), ok, src.scans)
	}
	areas, perims := 0.0, 0.0
	for _, f := range got {
		areas += f.area
		perims += f.perim
		if w := f.b.Max[0] - f.b.Min[0]; math.Abs(w-48) > 0.01 {
			t.Fatalf("a footprint's box is %g m wide, not 48", w)
		}
	}
	wantArea := 100*48*48 - 12*12.0
	wantPerim := 100*4*48 + 4*12.0
	if math.Abs(areas-wantArea) > 1 || math.Abs(perims-wantPerim) > 0.1 {
		t.Errorf("footprints: area %g (want %g), ring length %g (want %g)", areas, wantArea, perims, wantPerim)
	}
	// A part of the layer: the footprints it touches, from memory.
	part := orb.Bound{Min: orb.Point{-10915000, 3480000}, Max: orb.Point{-10915000 + 99, 3480000 + 49}}
	if got, ok := collect(part, 100); !ok || len(got) != 2 || src.scans != 1 {
		t.Errorf("a part: %d footprints, drawn %v, %d scans (want 2, true, 1)", len(got), ok, src.scans)
	}
	// A box touching the edge of the last square counts, as a Query's Bound does.
	edge := orb.Bound{Min: orb.Point{-10915000 + 498, 3480000 + 498}, Max: orb.Point{-10915000 + 600, 3480000 + 600}}
	if got, _ := collect(edge, 100); len(got) != 1 {
		t.Errorf("a box touching the last square: %d footprints (want 1)", len(got))
	}

	// The source changes: a part is left to the source, the whole layer rebuilds.
	src.version = 2
	if _, ok := collect(part, 100); ok || src.scans != 1 {
		t.Errorf("a part after a change: drawn %v, %d scans (want false, 1: left to the source)", ok, src.scans)
	}
	if got, ok := collect(whole, 100); !ok || len(got) != 100 || src.scans != 2 {
		t.Errorf("whole layer after a change: %d footprints, drawn %v, %d scans (want 100, true, 2)", len(got), ok, src.scans)
	}
	if _, ok := collect(part, 100); !ok || src.scans != 2 {
		t.Errorf("a part after the rebuild: drawn %v, %d scans (want true, 2)", ok, src.scans)
	}
	// Changed again, drawn with pixels smaller than the features: not worth a rebuild, nor
	// the version's query (a street view pays nothing for the overview).
	src.version = 3
	asked := src.versions
	if _, ok := collect(whole, 40); ok || src.scans != 2 || src.versions != asked {
		t.Errorf("whole layer with 40 m pixels after a change: drawn %v, %d scans, %d version queries (want false, 2: no rebuild, 0)", ok, src.scans, src.versions-asked)
	}

	// A layer of lines has no overview; nor has a polygon layer holding a line.
	lines := feature.NewLayer("lines", proj.SR{}, feature.Polyline, nil, []feature.Feature{{ID: 1, Geom: orb.LineString{{0, 0}, {1, 1}}}})
	if feature.NewOverview(&versioned{Layer: lines}, nil) != nil {
		t.Error("an overview of a line layer")
	}
	mixed := feature.NewLayer("mixed", proj.SR{}, feature.Polygon, nil, []feature.Feature{
		{ID: 1, Geom: orb.Polygon{{{0, 0}, {1, 0}, {1, 1}, {0, 0}}}}, {ID: 2, Geom: orb.LineString{{0, 0}, {1, 1}}}})
	msrc := &versioned{Layer: mixed}
	ov = feature.NewOverview(msrc, feature.NewOverviewBudget(0))
	if got, ok := collect(mixed.Info().Extent, 100); ok || len(got) != 0 {
		t.Errorf("a polygon layer holding a line: %d footprints, drawn %v (want 0, false)", len(got), ok)
	}
	msrc.version++
	if _, ok := collect(mixed.Info().Extent, 100); ok || msrc.scans != 1 {
		t.Errorf("the layer holding a line, changed: drawn %v, %d scans (want false, 1: no second build)", ok, msrc.scans)
	}
}

// TestPolygonMeasures: area with holes subtracted and the length of every ring, over the polygons
// of a multipolygon; nothing for a line.
func TestPolygonMeasures(t *testing.T) {
	holed := orb.Polygon{
		{{0, 0}, {10, 0}, {10, 10}, {0, 10}, {0, 0}},
		{{2, 2}, {2, 4}, {4, 4}, {4, 2}, {2, 2}},
	}
	area, perimeter, ok := feature.PolygonMeasures(orb.MultiPolygon{holed, {{{20, 0}, {21, 0}, {21, 1}, {20, 1}, {20, 0}}}})
	if !ok || area != 100-4+1 || perimeter != 40+8+4 {
		t.Errorf("PolygonMeasures = %v, %v, %v; want 97, 52, true", area, perimeter, ok)
	}
	if _, _, ok := feature.PolygonMeasures(orb.LineString{{0, 0}, {1, 1}}); ok {
		t.Error("a line has measures")
	}
}

// TestOverviewBudget: the overviews sharing a budget hold at most its bytes; a build past it is
// not kept (its layer is drawn from the source), and a rebuild gives the last one's bytes back.
func TestOverviewBudget(t *testing.T) {
	ctx := context.Background()
	whole := func(s feature.Source) orb.Bound { return s.Info().Extent }
	a := &versioned{Layer: squares(10, 0, 0, 50, 48), version: 1} // 100 footprints: 2,400 bytes
	b := &versioned{Layer: squares(10, 0, 0, 50, 48), version: 1}
	budget := feature.NewOverviewBudget(3000)
	ova, ovb := feature.NewOverview(a, budget), feature.NewOverview(b, budget)
	if ok, err := ova.Footprints(ctx, whole(a), 100, func(orb.Bound, float64, float64) bool { return true }); !ok || err != nil {
		t.Fatalf("first overview within the budget: %v, %v", ok, err)
	}
	one := budget.Used() // 2,400 bytes, and what the allocator rounds them up to
	if one < 2400 || one > 3000 {
		t.Errorf("budget holds %d bytes, want 2,400 to 3,000", one)
	}
	if ok, err := ovb.Footprints(ctx, whole(b), 100, func(orb.Bound, float64, float64) bool { return true }); ok || err != nil {
		t.Errorf("second overview past the budget served: %v, %v", ok, err)
	}
	if got := budget.Used(); got != one {
		t.Errorf("after a build past the budget it holds %d bytes, want %d", got, one)
	}
	a.version++ // a rebuild replaces the footprints in the budget
	if ok, _ := ova.Footprints(ctx, whole(a), 100, func(orb.Bound, float64, float64) bool { return true }); !ok {
		t.Error("rebuilt overview not served")
	}
	if got := budget.Used(); got != one {
		t.Errorf("after a rebuild the budget holds %d bytes, want %d", got, one)
	}
}
