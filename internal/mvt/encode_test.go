package mvt_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
)

// unitTile is a tile whose map units are extent units: map (x, y) is tile
// (x, 4096−y).
var unitTile = mvt.Tile{Bound: orb.Bound{Max: orb.Point{4096, 4096}}}

// at returns the map point of tile point (x, y) in unitTile.
func at(x, y float64) orb.Point { return orb.Point{x, 4096 - y} }

func ring(pts ...orb.Point) orb.Ring { return append(orb.Ring(pts), pts[0]) }

// square returns a ring of the square (x, y)-(x+s, y+s) in tile
// coordinates; clockwise on screen (the MVT exterior) when cw.
func square(x, y, s float64, cw bool) orb.Ring {
	r := ring(at(x, y), at(x+s, y), at(x+s, y+s), at(x, y+s))
	if !cw {
		r = ring(at(x, y), at(x, y+s), at(x+s, y+s), at(x+s, y))
	}
	return r
}

func layer(name string, gt feature.GeometryType, geoms map[int64]orb.Geometry) *feature.Layer {
	fields := []feature.Field{{Name: "OBJECTID", Type: feature.FieldOID}, {Name: "NAME", Type: feature.FieldString}, {Name: "POP", Type: feature.FieldInteger}}
	var fs []feature.Feature
	for id, g := range geoms {
		var pop any = id * 1000
		if id == 4 {
			pop = nil
		}
		fs = append(fs, feature.Feature{ID: id, Geom: g, Values: []any{id, "f" + string(rune('a'+id)), pop}})
	}
	return feature.NewLayer(name, feature.Info{}.SR, gt, fields, fs)
}

func encode(t *testing.T, opts mvt.Options, tile mvt.Tile, layers ...mvt.Layer) (*mvt.Result, []mvtcheck.Layer) {
	t.Helper()
	enc, err := mvt.NewEncoder(opts)
	if err != nil {
		t.Fatal(err)
	}
	res, err := enc.Encode(context.Background(), tile, layers)
	if err != nil {
		t.Fatal(err)
	}
	if probs, _ := mvtcheck.Check(res.Data, mvtcheck.Options{MaxBuffer: enc.Options().Buffer}); len(probs) > 0 {
		t.Fatalf("mvtcheck: %v", probs)
	}
	data := res.Data
	if res.Gzipped {
		data = gunzip(t, data)
	}
	ls, err := mvtcheck.Decode(data)
	if err != nil {
		t.Fatalf("cannot decode the tile: %v", err)
	}
	return res, ls
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// area is the surveyor's formula in tile coordinates, as MVT 2.1 states it.
func area(r orb.Ring) float64 {
	var s float64
	for i := 0; i+1 < len(r); i++ {
		s += r[i][0]*r[i+1][1] - r[i+1][0]*r[i][1]
	}
	return s / 2
}

func byID(l *mvtcheck.Layer) map[uint64]orb.Geometry {
	m := map[uint64]orb.Geometry{}
	for _, f := range l.Features {
		m[f.ID] = f.Geometry
	}
	return m
}

// TestEncodePolygons checks winding, holes, clipping to the buffer, and
// what collapses, on polygons placed in tile coordinates.
func TestEncodePolygons(t *testing.T) {
	src := layer("parcels", feature.Polygon, map[int64]orb.Geometry{
		1: orb.Polygon{square(100, 100, 200, true)},                                            // already MVT-wound
		2: orb.Polygon{square(500, 100, 200, false), square(550, 150, 50, false)},              // wound the other way, with a hole wound like it
		3: orb.Polygon{square(-1000, 1000, 3000, true)},                                        // crosses the left edge
		4: orb.Polygon{square(1000.1, 1000.1, 0.3, true)},                                      // collapses to nothing
		5: orb.MultiPolygon{{square(2000, 2000, 0.2, true)}, {square(3000, 3000, 100, false)}}, // one part collapses
		6: orb.Polygon{square(9000, 9000, 100, true)},                                          // outside, bbox too
		7: orb.Polygon{ring(at(200, 3000), at(400, 3000), at(400, 3000.2), at(300, 3000.1))},   // a sliver: zero area once rounded
		8: orb.Polygon{square(4090, 10, 100, true), square(4092, 20, 2, true)},                 // the hole is kept inside the buffer
	})
	res, ls := encode(t, mvt.Options{}, unitTile, mvt.Layer{Name: "parcels", Source: src, Fields: []string{"name", "POP"}})
	if len(ls) != 1 || ls[0].Name != "parcels" || ls[0].Version != 2 || ls[0].Extent != 4096 {
		t.Fatalf("layers = %+v", ls)
	}
	got := byID(&ls[0])
	for _, id := range []uint64{1, 2, 3, 5, 8} {
		if got[id] == nil {
			t.Errorf("feature %d missing: %v", id, got)
		}
	}
	for _, id := range []uint64{4, 6, 7} {
		if got[id] != nil {
			t.Errorf("feature %d kept: %v", id, got[id])
		}
	}
	if res.Features != 5 || res.Dropped != 2 || res.Thinned {
		t.Errorf("result = %d features, %d dropped, thinned %v; want 5, 2 (4 and 7; 6 is not read), false", res.Features, res.Dropped, res.Thinned)
	}
	p2, ok := got[2].(orb.Polygon)
	if !ok || len(p2) != 2 {
		t.Fatalf("feature 2 = %#v, want a polygon with a hole", got[2])
	}
	if a := area(p2[0]); a != 200*200 {
		t.Errorf("exterior area = %v, want +40000", a)
	}
	if a := area(p2[1]); a != -50*50 {
		t.Errorf("hole area = %v, want -2500", a)
	}
	p3 := got[3].(orb.Polygon)
	if b := p3.Bound(); b.Min[0] != -64 || b.Min[1] != 1000 || b.Max[0] != 2000 || b.Max[1] != 4000 {
		t.Errorf("feature 3 clipped to %v, want (-64,1000)-(2000,4000)", b)
	}
	if mp, ok := got[5].(orb.Polygon); !ok || area(mp[0]) != 100*100 {
		t.Errorf("feature 5 = %#v, want the one square that survives", got[5])
	}
	if b := got[8].Bound(); b.Max[0] != 4096+64 {
		t.Errorf("feature 8 bound %v, want clipped at x = 4160", b)
	}
	for _, f := range ls[0].Features {
		if f.ID == 4 {
			continue
		}
		if f.Properties["NAME"] == nil || f.Properties["POP"] == nil || f.Properties["OBJECTID"] != nil {
			t.Errorf("feature %v properties = %v, want NAME and POP", f.ID, f.Properties)
		}
	}
}

// TestEncodeLinesAndPoints checks lines lose repeated and collinear points
// and vanish when they have no length, and points outside the buffer go.
func TestEncodeLinesAndPoints(t *testing.T) {
	lines := layer("roads", feature.Polyline, map[int64]orb.Geometry{
		1: orb.LineString{at(10, 10), at(10.2, 10.1), at(100, 10), at(200, 10), at(200, 10), at(200, 300)},
		2: orb.LineString{at(50, 50), at(50.3, 50.2)},                                // no length once rounded
		3: orb.MultiLineString{{at(1, 1), at(1, 1)}, {at(-500, 500), at(5000, 500)}}, // one part is a point; the other is clipped
		4: orb.LineString{at(10, 10), at(100, 10), at(50, 10)},                       // a backtrack is drawn: kept
	})
	pts := layer("places", feature.Multipoint, map[int64]orb.Geometry{
		1: orb.Point(at(10, 10)),
		2: orb.Point(at(-65, 10)),
		3: orb.MultiPoint{at(-100, 0), at(20, 20), at(4100, 4100)},
	})
	res, ls := encode(t, mvt.Options{}, unitTile, mvt.Layer{Name: "roads", Source: lines}, mvt.Layer{Name: "places", Source: pts})
	if len(ls) != 2 {
		t.Fatalf("%d layers", len(ls))
	}
	roads := byID(&ls[0])
	want := orb.LineString{{10, 10}, {200, 10}, {200, 300}}
	if !orb.Equal(roads[1], want) {
		t.Errorf("line 1 = %v, want %v", roads[1], want)
	}
	if roads[2] != nil {
		t.Errorf("line 2 kept: %v", roads[2])
	}
	if !orb.Equal(roads[3], orb.LineString{{-64, 500}, {4160, 500}}) {
		t.Errorf("line 3 = %v", roads[3])
	}
	if !orb.Equal(roads[4], orb.LineString{{10, 10}, {100, 10}, {50, 10}}) {
		t.Errorf("line 4 = %v", roads[4])
	}
	places := byID(&ls[1])
	if !orb.Equal(places[1], orb.Point{10, 10}) || places[2] != nil || !orb.Equal(places[3], orb.MultiPoint{{20, 20}, {4100, 4100}}) {
		t.Errorf("places = %v", places)
	}
	if res.Features != 5 || res.Dropped != 1 {
		t.Errorf("features = %d, dropped %d, want 5 and 1 (line 2; point 2 is not read)", res.Features, res.Dropped)
	}
}

// TestEncodeLimits checks the feature limit thins the tile and says so,
// the byte limit and the deadline fail it.
func TestEncodeLimits(t *testing.T) {
	geoms := map[int64]orb.Geometry{}
	for i := range int64(50) {
		geoms[i+1] = orb.Polygon{square(float64(i*40), 100, 30, true)}
	}
	src := layer("p", feature.Polygon, geoms)
	res, ls := encode(t, mvt.Options{MaxFeatures: 10}, unitTile, mvt.Layer{Name: "p", Source: src}, mvt.Layer{Name: "q", Source: src})
	if !res.Thinned || res.Features != 10 || len(ls) != 1 || len(ls[0].Features) != 10 {
		t.Fatalf("thinned %v, %d features, %d layers; want a thinned tile of 10 features in 1 layer", res.Thinned, res.Features, len(ls))
	}
	for i, f := range ls[0].Features {
		if f.ID != uint64(i+1) {
			t.Errorf("feature %d has id %v, want the lowest ids first", i, f.ID)
		}
	}

	enc, _ := mvt.NewEncoder(mvt.Options{MaxBytes: 200})
	if _, err := enc.Encode(context.Background(), unitTile, []mvt.Layer{{Name: "p", Source: src}}); !errors.Is(err, mvt.ErrTooLarge) {
		t.Errorf("over the byte limit: err = %v, want ErrTooLarge", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	enc, _ = mvt.NewEncoder(mvt.Options{})
	if _, err := enc.Encode(ctx, unitTile, []mvt.Layer{{Name: "p", Source: src}}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
	enc, _ = mvt.NewEncoder(mvt.Options{Timeout: time.Nanosecond})
	if _, err := enc.Encode(context.Background(), unitTile, []mvt.Layer{{Name: "p", Source: src}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("past the deadline: err = %v, want context.DeadlineExceeded", err)
	}
	if _, err := enc.Encode(context.Background(), unitTile, []mvt.Layer{{Name: "p", Source: src}, {Name: "p", Source: src}}); !errors.Is(err, mvt.ErrInvalidTile) {
		t.Errorf("repeated layer name: err = %v, want ErrInvalidTile", err)
	}
	if _, err := enc.Encode(context.Background(), unitTile, []mvt.Layer{{Name: "p", Source: src, Fields: []string{"nope"}}}); !errors.Is(err, mvt.ErrInvalidTile) {
		t.Errorf("unknown field: err = %v, want ErrInvalidTile", err)
	}
}

// TestEncodeGzip checks the gzip option holds the same tile.
func TestEncodeGzip(t *testing.T) {
	src := layer("p", feature.Polygon, map[int64]orb.Geometry{1: orb.Polygon{square(10, 10, 100, true)}})
	plain, _ := encode(t, mvt.Options{}, unitTile, mvt.Layer{Name: "p", Source: src})
	zipped, _ := encode(t, mvt.Options{Gzip: true}, unitTile, mvt.Layer{Name: "p", Source: src})
	if !zipped.Gzipped || plain.Gzipped || !bytes.Equal(gunzip(t, zipped.Data), plain.Data) || zipped.Size != len(plain.Data) {
		t.Errorf("gzipped tile differs from the plain one")
	}
}
