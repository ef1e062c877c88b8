package mvt_test

import (
	"context"
	"math"
	"testing"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/mvt"
	"github.com/mapfarm/mapfarm/internal/mvt/mvtcheck"
)

// tileRing returns the ring of points given as x, y pairs in tile
// coordinates of unitTile, closed.
func tileRing(xy ...float64) orb.Ring {
	var pts []orb.Point
	for i := 0; i+1 < len(xy); i += 2 {
		pts = append(pts, at(xy[i], xy[i+1]))
	}
	return ring(pts...)
}

// TestEncodeSimpleRings encodes polygons that clipping or rounding makes
// touch or cross themselves, and wants every ring of the tile simple
// (MVT 2.1 §4.3.4.4), wound as the spec says, with the area that is left.
func TestEncodeSimpleRings(t *testing.T) {
	cases := []struct {
		name        string
		geom        orb.Geometry
		exts, holes int     // rings of positive and negative area in the tile
		area        float64 // their net area
		dropped     bool
	}{
		{
			// A U whose base lies left of the buffer: Sutherland–Hodgman
			// joins the two arms along the buffer's edge, back and forth.
			name: "concave ring leaving and re-entering one side",
			geom: orb.Polygon{tileRing(-500, 100, 300, 100, 300, 200, -300, 200, -300, 400, 300, 400, 300, 500, -500, 500)},
			exts: 2, area: 2 * 364 * 100,
		},
		{
			// The waist, 0.4 units wide, rounds to one point.
			name: "hourglass whose neck rounding closes",
			geom: orb.Polygon{tileRing(1000, 1000, 1100, 1049.8, 1200, 1000, 1200, 1100, 1100, 1050.2, 1000, 1100)},
			exts: 2, area: 2 * 5000,
		},
		{
			// Two squares joined by a neck 0.2 units wide, which rounds
			// to a line drawn twice.
			name: "dumbbell whose neck rounding closes",
			geom: orb.Polygon{tileRing(1000, 2000, 1100, 2000, 1100, 2050, 1200, 2050, 1200, 2000, 1300, 2000,
				1300, 2100, 1200, 2100, 1200, 2050.2, 1100, 2050.2, 1100, 2100, 1000, 2100)},
			exts: 2, area: 2 * 100 * 100,
		},
		{
			// The same with a hole in each square: each hole follows the
			// exterior it lies in.
			name: "dumbbell with a hole in each square",
			geom: orb.Polygon{tileRing(1000, 2500, 1100, 2500, 1100, 2550, 1200, 2550, 1200, 2500, 1300, 2500,
				1300, 2600, 1200, 2600, 1200, 2550.2, 1100, 2550.2, 1100, 2600, 1000, 2600),
				tileRing(1230, 2530, 1270, 2530, 1270, 2570, 1230, 2570), tileRing(1030, 2530, 1070, 2530, 1070, 2570, 1030, 2570)},
			exts: 2, holes: 2, area: 2*100*100 - 2*40*40,
		},
		{
			// One ring drawing a shell and, from a point of it, a hole
			// (as shapefiles may store a hole touching its shell).
			name: "hole touching the shell in one ring",
			geom: orb.Polygon{tileRing(100, 300, 100, 100, 500, 100, 500, 500, 100, 500, 100, 300, 300, 400, 400, 300, 300, 200)},
			exts: 1, holes: 1, area: 400*400 - 300*200/2,
		},
		{
			// A hole whose corner rounding puts on the shell: both rings
			// stay, each simple.
			name: "hole rounded onto the shell",
			geom: orb.Polygon{tileRing(2000, 100, 2400, 100, 2400, 500, 2000, 500), tileRing(2000.4, 300, 2200, 200, 2300, 300, 2200, 400)},
			exts: 1, holes: 1, area: 400*400 - 300*200/2,
		},
		{
			// A ring whose rounding flattens it to a bent line, drawn
			// there and back.
			name:    "ring collapsing to a line",
			geom:    orb.Polygon{tileRing(1000, 3000, 1100, 3100, 1200, 3000, 1200, 3000.3, 1100, 3100.3, 1000, 3000.3)},
			dropped: true,
		},
		{
			// A square whose edge rounding folds onto a line tail that
			// touches it: the tail goes, the square stays.
			name: "square with a tail collapsing onto its edge",
			geom: orb.Polygon{tileRing(3000, 3000, 3200, 3000, 3200, 3100, 3300, 3100, 3300, 3100.3, 3200, 3100.3, 3200, 3200, 3000, 3200)},
			exts: 1, area: 200 * 200,
		},
		{
			// A ring crossing itself, of zero net area: two triangles.
			name: "bow tie",
			geom: orb.Polygon{tileRing(2000, 1000, 2200, 1200, 2200, 1000, 2000, 1200)},
			exts: 2, area: 2 * 10000,
		},
	}
	// A pentagram: its five crossings, rounded, are made vertices and the
	// ring is cut into two simple exteriors, which both cover the centre
	// (the area counts it twice; a fill draws the star).
	star := make([]float64, 0, 10)
	for i := range 5 {
		a := float64(i*2%5)*2*math.Pi/5 - math.Pi/2
		star = append(star, 3000+1000*math.Cos(a), 2000+1000*math.Sin(a))
	}
	cases = append(cases, struct {
		name        string
		geom        orb.Geometry
		exts, holes int
		area        float64
		dropped     bool
	}{name: "pentagram", geom: orb.Polygon{tileRing(star...)}, exts: 2, area: 1469526})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := layer("p", feature.Polygon, map[int64]orb.Geometry{1: c.geom})
			res, ls := encode(t, mvt.Options{}, unitTile, mvt.Layer{Name: "p", Source: src})
			if probs, _ := mvtcheck.Check(res.Data, mvtcheck.Options{SimpleRings: true}); len(probs) > 0 {
				t.Errorf("rings not simple: %v", probs)
			}
			if c.dropped {
				if res.Features != 0 || res.Dropped != 1 {
					t.Errorf("%d features, %d dropped; want the feature dropped", res.Features, res.Dropped)
				}
				return
			}
			if len(ls) != 1 || len(ls[0].Features) != 1 {
				t.Fatalf("layers %+v; want one feature", ls)
			}
			var polys orb.MultiPolygon
			switch g := ls[0].Features[0].Geometry.(type) {
			case orb.Polygon:
				polys = orb.MultiPolygon{g}
			case orb.MultiPolygon:
				polys = g
			default:
				t.Fatalf("geometry %T", g)
			}
			exts, holes, sum := 0, 0, 0.0
			for _, p := range polys {
				for i, r := range p {
					a := area(r)
					sum += a
					if a > 0 {
						exts++
					} else {
						holes++
					}
					if (i == 0) != (a > 0) {
						t.Errorf("ring %d of a polygon has area %g", i, a)
					}
					if i > 0 && !p[0].Bound().Contains(r.Bound().Center()) {
						t.Errorf("hole %v after an exterior it is not in, %v", r, p[0])
					}
				}
			}
			if exts != c.exts || holes != c.holes || sum != c.area {
				t.Errorf("%d exteriors, %d holes, area %g; want %d, %d, %g: %v", exts, holes, sum, c.exts, c.holes, c.area, polys)
			}
		})
	}
}

// FuzzEncodeRings encodes polygons of up to 16 points drawn on a small
// patch that straddles the buffer's left and top edges, with coordinates
// of fractional units (so that rounding makes points meet and clipping
// cuts), and wants every tile to pass mvtcheck with SimpleRings.
func FuzzEncodeRings(f *testing.F) {
	f.Add([]byte{0, 0, 200, 0, 200, 200, 0, 200})
	f.Add([]byte{0, 0, 100, 100, 100, 0, 0, 100})
	f.Add([]byte{10, 10, 90, 12, 12, 14, 91, 16, 10, 90})
	f.Add([]byte{0, 50, 200, 50, 200, 60, 20, 60, 20, 80, 200, 80, 200, 90, 0, 90})
	enc, err := mvt.NewEncoder(mvt.Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var pts []orb.Point
		for i := 0; i+1 < len(b) && len(pts) < 16; i += 2 {
			pts = append(pts, at(-70+float64(b[i])*0.37, -70+float64(b[i+1])*0.37))
		}
		if len(pts) < 3 {
			return
		}
		src := layer("p", feature.Polygon, map[int64]orb.Geometry{1: orb.Polygon{ring(pts...)}})
		res, err := enc.Encode(context.Background(), unitTile, []mvt.Layer{{Name: "p", Source: src}})
		if err != nil {
			t.Fatal(err)
		}
		if probs, _ := mvtcheck.Check(res.Data, mvtcheck.Options{MaxBuffer: mvt.DefaultBuffer, SimpleRings: true}); len(probs) > 0 {
			t.Fatalf("%v: %v", pts, probs)
		}
	})
}
