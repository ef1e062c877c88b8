package feature

import (
	"github.com/paulmach/orb"
)

// Relation is an exact spatial relation a Query can ask for. Relations read
// as ArcObjects defines them: the filter geometry is the subject, so Within
// keeps features the filter geometry lies within, Contains features the
// filter geometry contains, and Relate matches the DE-9IM matrix of
// (filter geometry, feature) against a pattern.
type Relation int

// Spatial relations.
const (
	// Intersects: the geometries share at least one point.
	Intersects Relation = iota
	// EnvelopeIntersects: the feature's bounding box intersects the filter
	// geometry's bounding box (ArcGIS's envelope and index relations).
	EnvelopeIntersects
	Touches
	Overlaps
	Crosses
	Within
	Contains
	// Relate matches Spatial.Pattern.
	Relate
)

// Spatial is an exact spatial filter.
type Spatial struct {
	// Rel is the relation.
	Rel Relation
	// Geom is the filter geometry, in the source's SR. An orb.Bound is an
	// envelope.
	Geom orb.Geometry
	// Pattern is the 9-character DE-9IM pattern (T, F, *, 0, 1, 2) for
	// Relate.
	Pattern string
}

// MatchesDisjoint reports whether the filter can select a feature that
// shares no point with its geometry: a Relate whose pattern allows F in
// the II, IB, BI and BB entries (FF*FF****, the Disjoint relation, is one).
// Such a filter does not narrow the candidates to the features near the
// geometry.
func (s *Spatial) MatchesDisjoint() bool {
	return s.Rel == Relate && disjointMatchable(s.Pattern)
}
