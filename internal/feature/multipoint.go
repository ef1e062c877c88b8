package feature

import (
	"fmt"
	"math"
	"slices"

	"github.com/paulmach/orb"
	"github.com/peterstace/simplefeatures/geom"
)

// A filter multipoint of many points (a REST client may send 100,000) would make every relation
// an overlay of all its points with each feature, and with points spread over a map every
// feature is near one. Yet a multipoint has no boundary, and each of its points lies in a
// feature's interior, on its boundary or in its exterior whatever the other points do: the
// DE-9IM matrix of the multipoint and a feature is the matrix of the points within the
// feature's bound alone, with its interior–exterior entry 0 when some point lies outside that
// bound. The points are indexed once (a packed R-tree); each feature then costs a search of
// O(log points) and an overlay with the few points within its bound, so a relation costs
// O(points × log features) for features that do not overlap, and never an overlay of the
// whole multipoint.

// PointSet indexes the points of a multipoint, for tests of it against many features. It is
// immutable and safe for concurrent use.
type PointSet struct {
	pts  []orb.Point
	tree rtree
}

// NewPointSet indexes the points of mp.
func NewPointSet(mp orb.MultiPoint) *PointSet {
	return &PointSet{pts: mp, tree: buildPointTree(mp)}
}

// Len is the number of points.
func (s *PointSet) Len() int { return len(s.pts) }

// Near returns, as a simplefeatures multipoint, the points within d of the box b in each axis
// (the points of b widened by d, edges included), and how many they are; every other point is
// farther than d from anything in b.
func (s *PointSet) Near(b orb.Bound, d float64) (geom.Geometry, int) {
	w := orb.Bound{Min: orb.Point{b.Min[0] - d, b.Min[1] - d}, Max: orb.Point{b.Max[0] + d, b.Max[1] + d}}
	var near []geom.Point
	s.tree.visit(&w, func(ref int32) bool {
		p := s.pts[ref]
		near = append(near, geom.NewPoint(geom.Coordinates{XY: geom.XY{X: p[0], Y: p[1]}, Type: geom.DimXY}))
		return true
	}, nil)
	return geom.NewMultiPoint(near).AsGeometry(), len(near)
}

// pointsMatrix is the DE-9IM matrix of the filter multipoint (indexed in t.points) and fg, from
// the points within fg's bound (file comment); ok is false for an empty fg or a collection,
// which the overlay decides. Against a polygon each point is located on its own (polygonLocator)
// until the relation is decided; against lines and points the overlay of the points within the
// bound decides.
func (t *spatialTest) pointsMatrix(id int64, fg geom.Geometry) (m string, ok bool, err error) {
	bdimB, ok := boundaryDim(fg)
	if !ok {
		return "", false, nil
	}
	lo, hi, ok := fg.Envelope().MinMaxXYs()
	if !ok {
		return "", false, nil
	}
	b := orb.Bound{Min: orb.Point{lo.X, lo.Y}, Max: orb.Point{hi.X, hi.Y}}
	if fg.Dimension() == 2 {
		return t.polygonMatrix(id, fg, b), true, nil
	}
	near, n := t.points.Near(b, 0)
	if n == 0 {
		return disjointMatrix(t.dimA, t.bdimA, dimEntry(fg.Dimension()), bdimB), true, nil
	}
	if m, err = geom.Relate(near, fg); err != nil {
		return "", false, fmt.Errorf("spatial relation with feature %d: %w", id, err)
	}
	if n < t.points.Len() && m[2] == 'F' {
		m = m[:2] + "0" + m[3:] // a point outside the bound lies in fg's exterior
	}
	return m, true, nil
}

// polygonMatrix is the DE-9IM matrix of the filter multipoint and a (multi)polygon fg of bound
// b: II, IB and IE are 0 when some point lies in fg's interior, on its boundary, in its
// exterior; the rest is fixed (a multipoint has no boundary, and leaves fg's interior and
// boundary mostly uncovered). Points are located until the entries still unknown cannot change
// whether the relation holds.
func (t *spatialTest) polygonMatrix(id int64, fg geom.Geometry, b orb.Bound) string {
	m := []byte("FFFFFF212")
	if t.points.Len() > t.points.count(b) {
		m[2] = '0'
	}
	if t.decided(m, fg) {
		return string(m)
	}
	loc := newPolygonLocator(fg)
	t.points.tree.visit(&b, func(ref int32) bool {
		p := t.points.pts[ref]
		e := 2 // exterior
		switch loc.locate(geom.XY{X: p[0], Y: p[1]}) {
		case inInterior:
			e = 0
		case onBoundary:
			e = 1
		}
		if m[e] == '0' {
			return true
		}
		m[e] = '0'
		return !t.decided(m, fg)
	}, nil)
	return string(m)
}

// decided reports whether the relation's answer no longer depends on the entries II, IB and IE
// of m that are still F (each may yet become 0).
func (t *spatialTest) decided(m []byte, fg geom.Geometry) bool {
	if m[0] == '0' && m[1] == '0' && m[2] == '0' {
		return true
	}
	var first, seen bool
	for mask := range 8 {
		c := slices.Clone(m)
		skip := false
		for k := range 3 {
			if mask&(1<<k) != 0 {
				if c[k] == '0' {
					skip = true // the same as the combination without this bit
				}
				c[k] = '0'
			}
		}
		if skip {
			continue
		}
		ok, _ := t.matches(0, string(c), fg)
		if seen && ok != first {
			return false
		}
		first, seen = ok, true
	}
	return true
}

// count is the number of points in b.
func (s *PointSet) count(b orb.Bound) int {
	n := 0
	s.tree.visit(&b, func(int32) bool { n++; return true }, nil)
	return n
}

// Where a point lies with respect to a polygon.
const (
	inExterior = iota
	inInterior
	onBoundary
)

// polygonLocator locates points with respect to a valid (multi)polygon by the even-odd count of
// the edges crossing a ray towards +x: the edges are indexed (a packed R-tree of their bounds)
// when the polygon has many, so a point costs O(log edges) and the edges its ray crosses.
type polygonLocator struct {
	segs []segment
	tree rtree // over segs; empty when few
}

const locatorIndexFrom = 64 // edges from which a locator indexes them

func newPolygonLocator(g geom.Geometry) *polygonLocator {
	l := &polygonLocator{}
	add := func(s geom.Sequence) {
		for i := range s.Length() - 1 {
			l.segs = append(l.segs, newSegment(s.GetXY(i), s.GetXY(i+1)))
		}
	}
	switch g.Type() {
	case geom.TypePolygon:
		addPolygon(g.MustAsPolygon(), add)
	case geom.TypeMultiPolygon:
		mp := g.MustAsMultiPolygon()
		for i := range mp.NumPolygons() {
			addPolygon(mp.PolygonN(i), add)
		}
	}
	if len(l.segs) >= locatorIndexFrom {
		leaves := make([]entry, len(l.segs))
		for i, s := range l.segs {
			leaves[i] = entry{s.minX, s.minY, s.maxX, s.maxY, int32(i)}
		}
		l.tree = packRTree(leaves)
	}
	return l
}

// locate says where p lies: on an edge is the boundary, else inside an odd number of crossings.
func (l *polygonLocator) locate(p geom.XY) int {
	inside, boundary := false, false
	edge := func(s *segment) bool {
		if s.minX <= p.X && p.X <= s.maxX && s.minY <= p.Y && p.Y <= s.maxY &&
			(s.b.X-s.a.X)*(p.Y-s.a.Y) == (s.b.Y-s.a.Y)*(p.X-s.a.X) {
			boundary = true
			return false
		}
		if (s.a.Y > p.Y) != (s.b.Y > p.Y) && s.a.X+(p.Y-s.a.Y)*(s.b.X-s.a.X)/(s.b.Y-s.a.Y) > p.X {
			inside = !inside
		}
		return true
	}
	if len(l.tree.levels) == 0 {
		for i := range l.segs {
			if !edge(&l.segs[i]) {
				break
			}
		}
	} else {
		ray := orb.Bound{Min: orb.Point{p.X, p.Y}, Max: orb.Point{math.Inf(1), p.Y}}
		l.tree.visit(&ray, func(ref int32) bool { return edge(&l.segs[ref]) }, nil)
	}
	switch {
	case boundary:
		return onBoundary
	case inside:
		return inInterior
	}
	return inExterior
}
