package feature

import (
	"fmt"
	"slices"
	"strings"

	"github.com/paulmach/orb"
	"github.com/peterstace/simplefeatures/geom"

	"github.com/mapfarm/mapfarm/internal/where"
)

// Matcher tests features against a Query's filters in Go: the where
// clause, the object IDs, the envelope and the exact spatial relation. A
// provider builds one for whatever its own query language could not
// express, by clearing the parts it pushed down in a copy of the Query:
//
//	rest := *q
//	rest.Where = nil // translated to SQL
//	m, err := rest.Matcher(info.Fields)
//
// A Matcher is immutable and safe for concurrent use.
type Matcher struct {
	pred    *where.Predicate
	none    bool
	ids     []int64 // sorted, unique; nil: any
	bound   *orb.Bound
	spatial *spatialTest
	cand    orb.Bound // Candidates
	candOK  bool
}

// Matcher compiles q's filters against the fields. Errors are the where
// package's (*where.FieldError, *where.TypeError) for a clause that does
// not fit the fields, or a description of a bad spatial filter.
func (q *Query) Matcher(fields []Field) (*Matcher, error) {
	m := &Matcher{bound: q.Bound}
	m.cand, m.candOK = q.Candidates()
	if q.Where != nil && !q.Where.IsEmpty() {
		p, err := q.Where.Compile(WhereSchema(fields))
		if err != nil {
			return nil, err
		}
		switch {
		case p.MatchesNone():
			m.none = true
		case !p.MatchesAll():
			m.pred = p
		}
	}
	if q.IDs != nil {
		m.ids = slices.Clone(q.IDs)
		slices.Sort(m.ids)
		m.ids = slices.Compact(m.ids)
		if len(m.ids) == 0 {
			m.none = true
		}
	}
	if q.Spatial != nil {
		t, err := newSpatialTest(q.Spatial)
		if err != nil {
			return nil, err
		}
		m.spatial = t
	}
	return m, nil
}

// MatchesNone reports that no feature can match (a where clause that is
// never TRUE, an empty ID list): the scan can be skipped.
func (m *Matcher) MatchesNone() bool { return m.none }

// Candidates returns the bound that every matching feature's bound
// intersects, for a spatial index; ok is false when the Matcher has no
// such bound.
func (m *Matcher) Candidates() (b orb.Bound, ok bool) { return m.cand, m.candOK }

// Candidates returns the bound that the bound of every feature q selects
// intersects, for a spatial index: its envelope, its spatial filter
// geometry's bound or where they overlap. ok is false when q has neither,
// or only a spatial filter that can select features away from its
// geometry (a DE-9IM pattern such as FF*FF****).
func (q *Query) Candidates() (b orb.Bound, ok bool) {
	s := q.Spatial
	if s != nil && (s.Geom == nil || s.MatchesDisjoint()) {
		s = nil
	}
	switch {
	case q.Bound != nil && s != nil:
		a, b := *q.Bound, s.Geom.Bound()
		if !a.Intersects(b) {
			return EmptyBound(), true
		}
		return orb.Bound{
			Min: orb.Point{max(a.Min[0], b.Min[0]), max(a.Min[1], b.Min[1])},
			Max: orb.Point{min(a.Max[0], b.Max[0]), min(a.Max[1], b.Max[1])},
		}, true
	case q.Bound != nil:
		return *q.Bound, true
	case s != nil:
		return s.Geom.Bound(), true
	}
	return orb.Bound{}, false
}

// IDs returns the object IDs the Matcher keeps, sorted and unique; nil
// means any.
func (m *Matcher) IDs() []int64 { return m.ids }

// Match reports whether f passes every filter. An error comes only from
// the exact spatial test of a degenerate geometry.
func (m *Matcher) Match(f *Feature) (bool, error) {
	if m.none {
		return false, nil
	}
	if m.ids != nil {
		if _, ok := slices.BinarySearch(m.ids, f.ID); !ok {
			return false, nil
		}
	}
	if m.bound != nil || m.spatial != nil {
		if f.Geom == nil {
			return false, nil
		}
		b := boundOf(f)
		if m.bound != nil && !m.bound.Intersects(b) {
			return false, nil
		}
		if m.spatial != nil {
			ok, err := m.spatial.match(f.ID, f.Geom, b)
			if err != nil || !ok {
				return false, err
			}
		}
	}
	if m.pred != nil && !m.pred.Match(f.Values) {
		return false, nil
	}
	return true, nil
}

// boundOf returns f's bound, computing it when the provider left it unset.
func boundOf(f *Feature) orb.Bound {
	if f.Bound == (orb.Bound{}) && f.Geom != nil {
		return f.Geom.Bound()
	}
	return f.Bound
}

// WhereColumns returns the positions in fields of the columns a where
// clause reads, so a provider that evaluates it in Go reads them too.
func WhereColumns(e *where.Expr, fields []Field) []int {
	if e == nil {
		return nil
	}
	var cols []int
	for _, name := range e.Fields() {
		if i := fieldIndex(fields, name); i >= 0 && !slices.Contains(cols, i) {
			cols = append(cols, i)
		}
	}
	return cols
}

// WhereSchema returns the where-clause schema of fields: Schema[i] is
// fields[i], typed as the clause language sees it.
func WhereSchema(fs []Field) where.Schema {
	s := make(where.Schema, len(fs))
	for i, f := range fs {
		t := where.String
		switch f.Type {
		case FieldOID, FieldInteger, FieldSmallInteger:
			t = where.Integer
		case FieldDouble, FieldSingle:
			t = where.Double
		case FieldDate:
			t = where.Date
		}
		s[i] = where.Field{Name: f.Name, Type: t}
	}
	return s
}

// spatialTest is a compiled Spatial filter.
type spatialTest struct {
	rel     Relation
	pattern string
	bound   orb.Bound
	isBound bool          // the filter geometry is an envelope
	exact   geom.Geometry // the filter geometry for simplefeatures
	// outline decides features far from the filter geometry's edges without the overlay; nil
	// when the filter geometry is not valid (the overlay then decides).
	outline *outline
	// points indexes a filter multipoint's points (multipoint.go); nil for other geometries.
	points *PointSet
	// dimA and bdimA are the DE-9IM entries of the filter geometry's dimension and its
	// boundary's; dimsOK is false for an empty geometry or a collection.
	dimA, bdimA byte
	dimsOK      bool
}

func newSpatialTest(s *Spatial) (*spatialTest, error) {
	if s.Geom == nil {
		return nil, fmt.Errorf("spatial filter without a geometry")
	}
	t := &spatialTest{rel: s.Rel, pattern: s.Pattern, bound: s.Geom.Bound()}
	_, t.isBound = s.Geom.(orb.Bound)
	if t.rel == Relate {
		if len(t.pattern) != 9 {
			return nil, fmt.Errorf("DE-9IM pattern %q is not 9 characters long", t.pattern)
		}
		if strings.Trim(t.pattern, "TF*012") != "" {
			return nil, fmt.Errorf("DE-9IM pattern %q is not 9 characters of T, F, *, 0, 1, 2", t.pattern)
		}
	}
	if t.rel == EnvelopeIntersects {
		return t, nil
	}
	t.exact = Exact(s.Geom)
	t.bdimA, t.dimsOK = boundaryDim(t.exact)
	t.dimA = dimEntry(t.exact.Dimension())
	if mp, ok := s.Geom.(orb.MultiPoint); ok && len(mp) > 0 {
		t.points = NewPointSet(mp)
		return t, nil
	}
	t.outline = newOutline(t.exact, t.dimA, t.bdimA)
	return t, nil
}

// match tests one feature geometry (with bound b) against the relation.
func (t *spatialTest) match(id int64, g orb.Geometry, b orb.Bound) (bool, error) {
	if t.rel == EnvelopeIntersects {
		return t.bound.Intersects(b), nil
	}
	if !t.bound.Intersects(b) {
		// Disjoint: only a DE-9IM pattern that allows it can match, and the matrix follows
		// from the dimensions.
		if t.rel != Relate || !disjointMatchable(t.pattern) {
			return false, nil
		}
		fg := Exact(g)
		if bdimB, ok := boundaryDim(fg); ok && t.dimsOK {
			return t.matches(id, disjointMatrix(t.dimA, t.bdimA, dimEntry(fg.Dimension()), bdimB), fg)
		}
		return t.relate(id, fg)
	}
	if t.rel == Intersects && t.isBound {
		if boundContains(t.bound, b) {
			return true, nil
		}
		if pt, ok := g.(orb.Point); ok {
			return t.bound.Contains(pt), nil
		}
	}
	fg := Exact(g)
	if (t.rel == Crosses || t.rel == Overlaps) && namedPatterns(t.rel, t.exact.Dimension(), fg.Dimension()) == nil {
		return false, nil // never between geometries of these dimensions (two areas cannot cross)
	}
	if t.points != nil {
		m, ok, err := t.pointsMatrix(id, fg)
		if err != nil {
			return false, err
		}
		if ok {
			return t.matches(id, m, fg)
		}
	}
	if t.outline != nil {
		if m, ok := t.farMatrix(fg); ok {
			return t.matches(id, m, fg)
		}
	}
	return t.relate(id, fg)
}

// matches tests the relation on the DE-9IM matrix m of the filter geometry and fg.
func (t *spatialTest) matches(id int64, m string, fg geom.Geometry) (bool, error) {
	patterns := []string{t.pattern}
	if t.rel != Relate {
		patterns = namedPatterns(t.rel, t.exact.Dimension(), fg.Dimension())
	}
	ok, err := matchesAny(m, patterns...)
	if err != nil {
		return false, fmt.Errorf("spatial relation with feature %d: %w", id, err)
	}
	return ok, nil
}

// farMatrix returns the DE-9IM matrix of the filter geometry and fg when no edge of the filter
// geometry comes near fg; ok is false when one does (or fg is empty or a collection).
func (t *spatialTest) farMatrix(fg geom.Geometry) (m string, ok bool) {
	bdimB, ok := boundaryDim(fg)
	if !ok {
		return "", false
	}
	lo, hi, ok := fg.Envelope().MinMaxXYs()
	if !ok {
		return "", false
	}
	far, inside := t.outline.far(lo, hi)
	if !far {
		return "", false
	}
	return t.outline.farMatrix(inside, dimEntry(fg.Dimension()), bdimB), true
}

// relate tests the relation with the overlay of the two geometries.
func (t *spatialTest) relate(id int64, fg geom.Geometry) (bool, error) {
	var (
		ok  bool
		err error
	)
	switch t.rel {
	case Intersects:
		return geom.Intersects(t.exact, fg), nil
	case Touches:
		ok, err = geom.Touches(t.exact, fg)
	case Overlaps:
		ok, err = geom.Overlaps(t.exact, fg)
	case Crosses:
		ok, err = geom.Crosses(t.exact, fg)
	case Within:
		ok, err = geom.Within(t.exact, fg)
	case Contains:
		ok, err = geom.Contains(t.exact, fg)
	case Relate:
		var m string
		if m, err = geom.Relate(t.exact, fg); err == nil {
			ok, err = geom.RelateMatches(m, t.pattern)
		}
	default:
		return false, fmt.Errorf("unknown spatial relation %d", t.rel)
	}
	if err != nil {
		return false, fmt.Errorf("spatial relation with feature %d: %w", id, err)
	}
	return ok, nil
}

func boundContains(outer, inner orb.Bound) bool {
	return inner.Min[0] >= outer.Min[0] && inner.Min[1] >= outer.Min[1] && inner.Max[0] <= outer.Max[0] && inner.Max[1] <= outer.Max[1]
}

// Exact converts an orb geometry to simplefeatures for the exact
// predicates. Bounds become polygons (or a point or line when degenerate).
func Exact(g orb.Geometry) geom.Geometry {
	switch g := g.(type) {
	case orb.Point:
		return geom.NewPoint(geom.Coordinates{XY: geom.XY{X: g[0], Y: g[1]}, Type: geom.DimXY}).AsGeometry()
	case orb.MultiPoint:
		ps := make([]geom.Point, len(g))
		for i, p := range g {
			ps[i] = geom.NewPoint(geom.Coordinates{XY: geom.XY{X: p[0], Y: p[1]}, Type: geom.DimXY})
		}
		return geom.NewMultiPoint(ps).AsGeometry()
	case orb.LineString:
		return geom.NewLineString(sequence(g)).AsGeometry()
	case orb.MultiLineString:
		ls := make([]geom.LineString, len(g))
		for i, l := range g {
			ls[i] = geom.NewLineString(sequence(l))
		}
		return geom.NewMultiLineString(ls).AsGeometry()
	case orb.Polygon:
		return polygonSF(g).AsGeometry()
	case orb.MultiPolygon:
		ps := make([]geom.Polygon, len(g))
		for i, p := range g {
			ps[i] = polygonSF(p)
		}
		return geom.NewMultiPolygon(ps).AsGeometry()
	case orb.Bound:
		return geom.NewEnvelope(geom.XY{X: g.Min[0], Y: g.Min[1]}, geom.XY{X: g.Max[0], Y: g.Max[1]}).AsGeometry()
	}
	return geom.Geometry{}
}

func polygonSF(p orb.Polygon) geom.Polygon {
	rs := make([]geom.LineString, len(p))
	for i, r := range p {
		rs[i] = geom.NewLineString(sequence(r))
	}
	return geom.NewPolygon(rs)
}

func sequence[S ~[]orb.Point](ps S) geom.Sequence {
	fs := make([]float64, 0, 2*len(ps))
	for _, p := range ps {
		fs = append(fs, p[0], p[1])
	}
	return geom.NewSequence(fs, geom.DimXY)
}
