package feature

import "github.com/paulmach/orb"

// BoundOf is g's bounding box, as g.Bound() gives it, in one tight pass over the coordinates:
// providers compute it for every feature they stream, where orb's Bound (a Contains test and an
// Extend per point) costs as much as decoding the geometry.
func BoundOf(g orb.Geometry) orb.Bound {
	// Each case hands pointsBound a non-empty slice, and leaves orb's empty bound to g.Bound():
	// passing g itself along would box it, an allocation per feature.
	switch g := g.(type) {
	case orb.Point:
		return orb.Bound{Min: g, Max: g}
	case orb.MultiPoint:
		if len(g) > 0 {
			return pointsBound(g)
		}
	case orb.LineString:
		if len(g) > 0 {
			return pointsBound(g)
		}
	case orb.Ring:
		if len(g) > 0 {
			return pointsBound(g)
		}
	case orb.Polygon:
		if len(g) > 0 && len(g[0]) > 0 {
			return pointsBound(g[0]) // the outer ring bounds the polygon
		}
	case orb.MultiLineString:
		b, ok := orb.Bound{}, false
		for _, ls := range g {
			if len(ls) > 0 {
				b, ok = union(b, pointsBound(ls), ok), true
			}
		}
		if ok {
			return b
		}
	case orb.MultiPolygon:
		b, ok := orb.Bound{}, false
		for _, p := range g {
			if len(p) > 0 && len(p[0]) > 0 {
				b, ok = union(b, pointsBound(p[0]), ok), true
			}
		}
		if ok {
			return b
		}
	}
	return g.Bound()
}

// pointsBound bounds ps, which must not be empty.
func pointsBound[P ~[]orb.Point](ps P) orb.Bound {
	minX, minY, maxX, maxY := ps[0][0], ps[0][1], ps[0][0], ps[0][1]
	for _, p := range ps[1:] {
		if p[0] < minX {
			minX = p[0]
		} else if p[0] > maxX {
			maxX = p[0]
		}
		if p[1] < minY {
			minY = p[1]
		} else if p[1] > maxY {
			maxY = p[1]
		}
	}
	return orb.Bound{Min: orb.Point{minX, minY}, Max: orb.Point{maxX, maxY}}
}

func union(a, b orb.Bound, aSet bool) orb.Bound {
	if !aSet {
		return b
	}
	return orb.Bound{
		Min: orb.Point{min(a.Min[0], b.Min[0]), min(a.Min[1], b.Min[1])},
		Max: orb.Point{max(a.Max[0], b.Max[0]), max(a.Max[1], b.Max[1])},
	}
}
