package feature

import (
	"math/rand/v2"
	"testing"

	"github.com/paulmach/orb"
)

// TestBoundOf: BoundOf gives what orb's Bound gives, for every geometry type, empty parts
// included.
func TestBoundOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	pts := func(n int) []orb.Point {
		out := make([]orb.Point, n)
		for i := range out {
			out[i] = orb.Point{rng.Float64()*200 - 100, rng.Float64()*200 - 100}
		}
		return out
	}
	geoms := []orb.Geometry{
		orb.Point{3, 4},
		orb.MultiPoint(pts(7)), orb.MultiPoint{},
		orb.LineString(pts(5)), orb.LineString{},
		orb.Ring(pts(6)),
		orb.Polygon{orb.Ring(pts(5)), orb.Ring(pts(4))}, orb.Polygon{},
		orb.MultiLineString{orb.LineString(pts(3)), {}, orb.LineString(pts(4))}, orb.MultiLineString{},
		orb.MultiPolygon{{orb.Ring(pts(5))}, {}, {orb.Ring(pts(6)), orb.Ring(pts(3))}}, orb.MultiPolygon{{}},
		orb.Collection{orb.Point{1, 1}, orb.LineString(pts(3))},
	}
	for _, g := range geoms {
		if got, want := BoundOf(g), g.Bound(); got != want {
			t.Errorf("%T %v: BoundOf %v, Bound %v", g, g, got, want)
		}
	}
}

func BenchmarkBoundOf(b *testing.B) {
	ring := orb.Ring{{0, 0}, {30, 0}, {30, 20}, {0, 20}, {0, 0}}
	p := orb.Polygon{ring}
	b.Run("orb", func(b *testing.B) {
		for b.Loop() {
			_ = p.Bound()
		}
	})
	b.Run("BoundOf", func(b *testing.B) {
		for b.Loop() {
			_ = BoundOf(p)
		}
	})
}
