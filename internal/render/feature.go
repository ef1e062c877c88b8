package render

import (
	"context"
	"image/color"

	"github.com/paulmach/orb"
)

// Feature is one thing to draw. Geom is in the map's coordinates (those of View.Extent). Label is the
// text of its label ("" for none). Symbol overrides the layer's symbol when not nil; features that
// share one *Symbol are drawn together (see Layer).
//
// Outline, when not nil, is what is stroked of a polygon Geom instead of its rings, which are
// then only filled: lines in the same coordinates (a polygon cut at a seam is outlined without
// the cut; see mapdraw).
//
// Footprint, when not zero and Geom is nil, stands for a polygon too small to draw in detail (see
// Footprint): the raster renderer composites its coverage; vector surfaces draw its bounding box.
type Feature struct {
	Geom      orb.Geometry
	Label     string
	Symbol    *Symbol
	Outline   orb.Geometry
	Footprint Footprint
}

// bound returns the bounding box of f's geometry, or of its footprint when it has no geometry,
// and false when it has neither.
func (f *Feature) bound() (orb.Bound, bool) {
	switch {
	case f.Geom != nil:
		return f.Geom.Bound(), true
	case !f.Footprint.IsZero():
		return f.Footprint.Bound, true
	}
	return orb.Bound{}, false
}

// Source gives the features of a layer. Search calls yield for every feature whose geometry may
// intersect b (false positives are fine: the renderer culls by bounding box) until yield returns false,
// and returns any error reading the data. It must honour ctx cancellation for long reads.
type Source interface {
	Search(ctx context.Context, b orb.Bound, yield func(Feature) bool) error
}

// SourceFunc adapts a function to a Source.
type SourceFunc func(ctx context.Context, b orb.Bound, yield func(Feature) bool) error

// Search calls f.
func (f SourceFunc) Search(ctx context.Context, b orb.Bound, yield func(Feature) bool) error {
	return f(ctx, b, yield)
}

// Features is an in-memory Source.
type Features []Feature

// Search yields the features whose bounding box intersects b.
func (fs Features) Search(ctx context.Context, b orb.Bound, yield func(Feature) bool) error {
	for i, f := range fs {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if fb, ok := f.bound(); !ok || !fb.Intersects(b) {
			continue
		}
		if !yield(f) {
			return nil
		}
	}
	return nil
}

// Layer is one layer of a Map, drawn in order.
//
// Runs of consecutive features with the same symbol (the same *Symbol, or nil for the layer's Symbol)
// are drawn as one batch: every fill of the run, then every outline, so shared polygon borders are
// drawn once at full width (as a dissolved layer would be). Markers are drawn per feature.
type Layer struct {
	Name     string
	Features Source
	Symbol   Symbol
	Label    *LabelStyle // nil draws no labels
	// Opacity of the whole layer, composited as a group; 0 is treated as 1 (opaque), use Visible
	// false to hide a layer.
	Opacity float64
	// MinScale and MaxScale limit the scales (View.Scale) at which the layer is drawn, as in ArcGIS:
	// the layer is hidden when zoomed out beyond MinScale (scale > MinScale) or zoomed in beyond
	// MaxScale (scale < MaxScale). 0 means no limit. The scale is Map.Scale's.
	MinScale, MaxScale float64
}

// Map is what Draw draws: a background and layers, bottom first.
type Map struct {
	Background color.NRGBA
	// Transparent leaves the background fully transparent (alpha 0) instead of Background.
	Transparent bool
	Layers      []Layer
	// UnitMeters is the length of one map unit in metres, for the scale layers' MinScale and
	// MaxScale are compared with (Map.Scale): 0 means 1 (metres); a geographic map sets the
	// metres of a degree.
	UnitMeters float64
}

// Scale returns the scale denominator of m drawn in v: View.Scale with map units of UnitMeters
// metres. Layer scale ranges are checked against it.
func (m Map) Scale(v View) float64 {
	if m.UnitMeters > 0 {
		return v.Scale() * m.UnitMeters
	}
	return v.Scale()
}

func (l *Layer) visibleAt(scale float64) bool {
	if l.MinScale > 0 && scale > l.MinScale {
		return false
	}
	if l.MaxScale > 0 && scale < l.MaxScale {
		return false
	}
	return true
}

// Index is an in-memory Source with each feature's bounding box computed once, for static data such
// as tests, legends and graphics.
type Index struct {
	features []Feature
	bounds   []orb.Bound
}

// NewIndex returns an Index of fs (features with neither a geometry nor a footprint are dropped).
func NewIndex(fs []Feature) *Index {
	ix := &Index{}
	for _, f := range fs {
		if b, ok := f.bound(); ok {
			ix.features = append(ix.features, f)
			ix.bounds = append(ix.bounds, b)
		}
	}
	return ix
}

// Search yields the features whose bounding box intersects b, in the order given to NewIndex.
func (ix *Index) Search(ctx context.Context, b orb.Bound, yield func(Feature) bool) error {
	for i, fb := range ix.bounds {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if fb.Max[0] < b.Min[0] || fb.Min[0] > b.Max[0] || fb.Max[1] < b.Min[1] || fb.Min[1] > b.Max[1] {
			continue
		}
		if !yield(ix.features[i]) {
			return nil
		}
	}
	return nil
}
