// Package feature holds feature data in the form every map operation and
// the renderer use: a Layer is one table loaded whole into memory, its
// features indexed by a packed static R-tree.
//
// # Memory model
//
// A Layer keeps every row of its table: the decoded geometry (orb types,
// 16 bytes per vertex), its bound, and the attribute values as Go values
// (int64, float64, string, time.Time, []byte; nil for NULL). The sample
// data is small (world countries: 99k vertices ≈ 1.6 MB of coordinates;
// US counties: 68k vertices), so loading once at startup makes every
// request a pure in-memory walk with no I/O, no decoding and no locks.
// Layers are immutable after NewLayer and safe for concurrent use; callers
// must treat the Features they are handed as read-only.
//
// The R-tree is built once by Sort-Tile-Recursive bulk loading with 16
// entries per node and stored as one flat slice, so a search allocates
// nothing and touches only nodes whose bounds intersect the query.
//
// Data that outgrows memory should not be loaded here: read it per request
// through the GeoPackage's own R-tree (gpkg.File.Scan with a bound) or a
// database, behind the same Search-shaped interface.
package feature

import (
	"cmp"
	"math"
	"slices"
	"strings"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/proj"
)

// Feature is one row of a layer.
type Feature struct {
	// ID is the object ID (the table's integer primary key).
	ID int64
	// Geom is the geometry in the layer's SR; nil for a NULL or empty
	// geometry (such features are kept but never found by Search).
	Geom orb.Geometry
	// Bound is Geom's bounding box (empty when Geom is nil).
	Bound orb.Bound
	// Values holds one value per Layer.Fields entry: int64, float64,
	// string, time.Time or []byte as the field type says, nil for NULL.
	Values []any
}

// Layer is an immutable in-memory feature table with a spatial index.
type Layer struct {
	name     string
	sr       proj.SR
	geomType GeometryType
	fields   []Field
	features []Feature // sorted by ID
	extent   orb.Bound
	vertices int
	index    rtree
}

// EmptyBound returns a bound that contains nothing and extends correctly
// with Union/Extend (Min = +Inf, Max = -Inf).
func EmptyBound() orb.Bound {
	return orb.Bound{Min: orb.Point{math.Inf(1), math.Inf(1)}, Max: orb.Point{math.Inf(-1), math.Inf(-1)}}
}

// NewLayer builds a layer from features whose geometries are already in
// sr. It takes ownership of the slice: features are sorted by ID, their
// Bound recomputed from Geom, and the spatial index built.
func NewLayer(name string, sr proj.SR, gt GeometryType, fields []Field, features []Feature) *Layer {
	l := &Layer{name: name, sr: sr, geomType: gt, fields: fields, features: features, extent: EmptyBound()}
	slices.SortFunc(l.features, func(a, b Feature) int { return cmp.Compare(a.ID, b.ID) })
	for i := range l.features {
		f := &l.features[i]
		f.Bound = EmptyBound()
		if f.Geom != nil {
			if b := f.Geom.Bound(); !b.IsEmpty() && !isEmptyGeom(f.Geom) {
				f.Bound = b
				l.extent = l.extent.Union(b)
				l.vertices += countVertices(f.Geom)
			} else {
				f.Geom = nil
			}
		}
	}
	l.index = buildRTree(l.features)
	return l
}

// isEmptyGeom reports geometries with no coordinates (orb gives them a zero
// bound rather than an empty one).
func isEmptyGeom(g orb.Geometry) bool {
	switch g := g.(type) {
	case orb.MultiPoint:
		return len(g) == 0
	case orb.LineString:
		return len(g) == 0
	case orb.MultiLineString:
		return len(g) == 0
	case orb.Polygon:
		return len(g) == 0 || len(g[0]) == 0
	case orb.MultiPolygon:
		return len(g) == 0
	case orb.Collection:
		return len(g) == 0
	}
	return false
}

// NonEmpty returns g, or nil when g has no coordinates: providers hand
// such geometries on as nil, like NULL ones.
func NonEmpty(g orb.Geometry) orb.Geometry {
	if g == nil || isEmptyGeom(g) || g.Bound().IsEmpty() {
		return nil
	}
	return g
}

// VertexCount returns the number of vertices of g.
func VertexCount(g orb.Geometry) int { return countVertices(g) }

func countVertices(g orb.Geometry) int {
	switch g := g.(type) {
	case orb.Point:
		return 1
	case orb.Collection:
		n := 0
		for _, c := range g {
			n += countVertices(c)
		}
		return n
	}
	n := 0
	_ = proj.EachSlice(g, func(ps []orb.Point) error { n += len(ps); return nil })
	return n
}

// Name returns the source table name.
func (l *Layer) Name() string { return l.name }

// SR returns the spatial reference of the geometries.
func (l *Layer) SR() proj.SR { return l.sr }

// GeometryType returns the layer's geometry type (None for a table).
func (l *Layer) GeometryType() GeometryType { return l.geomType }

// Fields returns the attribute fields; Feature.Values align with it. The
// slice must not be modified.
func (l *Layer) Fields() []Field { return l.fields }

// FieldIndex returns the position of the named field in Fields
// (case-insensitive), or -1.
func (l *Layer) FieldIndex(name string) int { return fieldIndex(l.fields, name) }

func fieldIndex(fields []Field, name string) int {
	for i, f := range fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// Len returns the number of features, including those without geometry.
func (l *Layer) Len() int { return len(l.features) }

// VertexCount returns the total number of vertices of all geometries.
func (l *Layer) VertexCount() int { return l.vertices }

// Features returns every feature in ID order. The slice and the features
// must not be modified.
func (l *Layer) Features() []Feature { return l.features }

// ByID returns the feature with the given object ID.
func (l *Layer) ByID(id int64) (*Feature, bool) {
	i, ok := slices.BinarySearchFunc(l.features, id, func(f Feature, id int64) int { return cmp.Compare(f.ID, id) })
	if !ok {
		return nil, false
	}
	return &l.features[i], true
}

// Search calls fn for every feature whose bound intersects b (touching
// edges count), in no particular order, until fn returns false. Features
// without geometry are never reported. It allocates nothing.
func (l *Layer) Search(b orb.Bound, fn func(*Feature) bool) {
	if b.IsEmpty() {
		return
	}
	l.index.search(&b, l.features, fn, nil)
}
