package feature

import (
	"math"

	"github.com/peterstace/simplefeatures/geom"
)

// A filter geometry of many vertices (a hostile or merely detailed polygon) makes every exact
// relation an overlay of all its edges with the feature's, most of them far from the feature.
// Yet when no edge of the filter geometry comes near a feature, the feature lies wholly in its
// interior or wholly in its exterior, and the DE-9IM matrix follows from the dimensions of the
// two geometries and of their boundaries. An outline answers "is any edge near?" and "inside
// or outside?" with comparisons of coordinates alone, so the overlay runs only for the
// features the filter geometry's boundary passes near.

// outline is the filter geometry's edges, for features far from them.
type outline struct {
	segs  []segment // every edge; a point is an edge from itself to itself
	areal bool      // the geometry is a valid (multi)polygon: inside is in its interior
	// margin widens a feature's bound (by the larger of it and 1e-9 of the bound's largest
	// coordinate): edges that close are near. simplefeatures snaps nodes together within
	// about 1,000 ulps of the largest coordinate of both geometries (2.3e-13 of it), far
	// less, so a feature that the overlay would find touching the filter geometry is never
	// taken for far from it.
	margin float64
	dimA   byte // the filter geometry's dimension, as a DE-9IM entry
	bdimA  byte // the dimension of its boundary ('F': empty)
}

// segment is an edge with its bound, for the nearness test.
type segment struct {
	a, b                   geom.XY
	minX, minY, maxX, maxY float64
}

// newOutline returns the outline of g, whose dimension and boundary's are the DE-9IM entries
// dim and bdim, or nil when g is empty, a collection or not valid (the overlay alone then
// decides).
func newOutline(g geom.Geometry, dim, bdim byte) *outline {
	if g.IsEmpty() || g.Type() == geom.TypeGeometryCollection || g.Validate() != nil {
		return nil
	}
	o := &outline{dimA: dim, bdimA: bdim}
	var big float64
	add := func(s geom.Sequence) {
		n := s.Length()
		for i := range n {
			p := s.GetXY(i)
			big = max(big, math.Abs(p.X), math.Abs(p.Y))
			switch {
			case n == 1:
				o.segs = append(o.segs, newSegment(p, p))
			case i+1 < n:
				o.segs = append(o.segs, newSegment(p, s.GetXY(i+1)))
			}
		}
	}
	switch g.Type() {
	case geom.TypePoint:
		if xy, ok := g.MustAsPoint().XY(); ok {
			add(geom.NewSequence([]float64{xy.X, xy.Y}, geom.DimXY))
		}
	case geom.TypeMultiPoint:
		mp := g.MustAsMultiPoint()
		for i := range mp.NumPoints() {
			if xy, ok := mp.PointN(i).XY(); ok {
				add(geom.NewSequence([]float64{xy.X, xy.Y}, geom.DimXY))
			}
		}
	case geom.TypeLineString:
		add(g.MustAsLineString().Coordinates())
	case geom.TypeMultiLineString:
		ml := g.MustAsMultiLineString()
		for i := range ml.NumLineStrings() {
			add(ml.LineStringN(i).Coordinates())
		}
	case geom.TypePolygon:
		o.areal = true
		addPolygon(g.MustAsPolygon(), add)
	case geom.TypeMultiPolygon:
		o.areal = true
		mp := g.MustAsMultiPolygon()
		for i := range mp.NumPolygons() {
			addPolygon(mp.PolygonN(i), add)
		}
	}
	o.margin = 1e-9 * big
	return o
}

func addPolygon(p geom.Polygon, add func(geom.Sequence)) {
	if p.IsEmpty() {
		return
	}
	add(p.ExteriorRing().Coordinates())
	for i := range p.NumInteriorRings() {
		add(p.InteriorRingN(i).Coordinates())
	}
}

func newSegment(a, b geom.XY) segment {
	return segment{a: a, b: b, minX: min(a.X, b.X), minY: min(a.Y, b.Y), maxX: max(a.X, b.X), maxY: max(a.Y, b.Y)}
}

// far reports whether no edge comes within the margin of the box lo–hi (a feature's bound),
// and then whether the box lies in the interior of the filter geometry (else in its exterior).
func (o *outline) far(lo, hi geom.XY) (far, inside bool) {
	m := max(o.margin, 1e-9*max(math.Abs(lo.X), math.Abs(lo.Y), math.Abs(hi.X), math.Abs(hi.Y)))
	x0, y0, x1, y1 := lo.X-m, lo.Y-m, hi.X+m, hi.Y+m
	for i := range o.segs {
		s := &o.segs[i]
		if s.minX <= x1 && s.maxX >= x0 && s.minY <= y1 && s.maxY >= y0 {
			return false, false
		}
	}
	if !o.areal {
		return true, false // a point or line has no interior to hold the box
	}
	// Even-odd count of the edges crossing the ray from (x0, y0) towards +x. An edge that
	// straddles the ray's line has its bound apart from the widened box, and its y range holds
	// y0, so its x range lies wholly left or wholly right of the box: exact comparisons.
	for i := range o.segs {
		s := &o.segs[i]
		if (s.a.Y > y0) != (s.b.Y > y0) && s.minX > x1 {
			inside = !inside
		}
	}
	return true, inside
}

// farMatrix is the DE-9IM matrix of the filter geometry and a feature (of dimension dimB, its
// boundary of dimension bdimB) that lies wholly in the filter geometry's interior (inside) or
// wholly in its exterior. The filter geometry, having an edge or point away from the feature,
// always reaches into the feature's exterior with its interior and its boundary.
func (o *outline) farMatrix(inside bool, dimB, bdimB byte) string {
	if inside {
		// II IB IE / BI BB BE / EI EB EE
		return string([]byte{dimB, bdimB, o.dimA, 'F', 'F', o.bdimA, 'F', 'F', '2'})
	}
	return string([]byte{'F', 'F', o.dimA, 'F', 'F', o.bdimA, dimB, bdimB, '2'})
}

// disjointMatrix is the DE-9IM matrix of two disjoint non-empty geometries of dimensions dimA
// and dimB, with boundaries of dimensions bdimA and bdimB.
func disjointMatrix(dimA, bdimA, dimB, bdimB byte) string {
	return string([]byte{'F', 'F', dimA, 'F', 'F', bdimA, dimB, bdimB, '2'})
}

// boundaryDim is the dimension of g's boundary as a DE-9IM entry; ok is false for an empty
// geometry or a collection, whose matrices the overlay works out.
func boundaryDim(g geom.Geometry) (byte, bool) {
	if g.IsEmpty() {
		return 0, false
	}
	switch g.Type() {
	case geom.TypePoint, geom.TypeMultiPoint:
		return 'F', true
	case geom.TypeLineString, geom.TypeMultiLineString:
		if g.Boundary().IsEmpty() { // closed: the mod-2 rule leaves no end point
			return 'F', true
		}
		return '0', true
	case geom.TypePolygon, geom.TypeMultiPolygon:
		return '1', true
	}
	return 0, false
}

func dimEntry(d int) byte { return byte('0' + d) }

// namedPatterns are the DE-9IM patterns, any of which makes the named relation true between
// geometries of dimensions dimA and dimB, as simplefeatures tests them.
func namedPatterns(rel Relation, dimA, dimB int) []string {
	switch rel {
	case Intersects:
		return []string{"T********", "*T*******", "***T*****", "****T****"}
	case Touches:
		return []string{"FT*******", "F**T*****", "F***T****"}
	case Contains:
		return []string{"T*****FF*"}
	case Within:
		return []string{"T*F**F***"}
	case Crosses:
		switch {
		case dimA < dimB:
			return []string{"T*T******"}
		case dimA > dimB:
			return []string{"T*****T**"}
		case dimA == 1 && dimB == 1:
			return []string{"0********"}
		}
	case Overlaps:
		switch {
		case dimA == 0 && dimB == 0, dimA == 2 && dimB == 2:
			return []string{"T*T***T**"}
		case dimA == 1 && dimB == 1:
			return []string{"1*T***T**"}
		}
	}
	return nil
}

// matchesAny reports whether the matrix m matches any of the patterns.
func matchesAny(m string, patterns ...string) (bool, error) {
	for _, p := range patterns {
		ok, err := geom.RelateMatches(m, p)
		if err != nil || ok {
			return ok, err
		}
	}
	return false, nil
}

// disjointMatchable reports whether a DE-9IM pattern can match two disjoint geometries: its
// II, IB, BI and BB entries all allow F.
func disjointMatchable(pattern string) bool {
	if len(pattern) != 9 {
		return false
	}
	for _, i := range []int{0, 1, 3, 4} {
		if c := pattern[i]; c != 'F' && c != '*' {
			return false
		}
	}
	return true
}
