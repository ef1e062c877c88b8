package feature

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/paulmach/orb"
)

// Versioned is a Source that can tell cheaply whether its data may have changed since it was
// last asked: PostGIS tables (from PostgreSQL's statistics) and GeoPackage files (from the
// file's size and time).
type Versioned interface {
	// Version returns a token that changes whenever the data may have changed (it may also
	// change when they have not). ErrNoVersion: the source cannot tell.
	Version(ctx context.Context) (string, error)
}

// ErrNoVersion is returned by Versioned.Version when the source cannot tell whether its data
// changed (a PostGIS view or query, a table without statistics).
var ErrNoVersion = errors.New("source cannot tell its version")

// OverviewMaxFeatures is the most features an Overview holds (24 bytes each: 48 MB); a layer
// with more is drawn from its source.
const OverviewMaxFeatures = 2_000_000

// DefaultOverviewBytes is the memory the Overviews of one catalog share by default: those of
// about ten million polygons.
const DefaultOverviewBytes = 256 << 20

// OverviewBudget bounds the memory of the Overviews that share it: a build that would take them
// past it is not kept (its layer is drawn from the source, as without an overview). Safe for
// concurrent use.
type OverviewBudget struct {
	max  int64
	used atomic.Int64
}

// NewOverviewBudget returns a budget of max bytes (DefaultOverviewBytes when max ≤ 0).
func NewOverviewBudget(max int64) *OverviewBudget {
	if max <= 0 {
		max = DefaultOverviewBytes
	}
	return &OverviewBudget{max: max}
}

// take reserves n bytes, reporting false (reserving nothing) past the budget.
func (b *OverviewBudget) take(n int64) bool {
	if b.used.Add(n) > b.max {
		b.used.Add(-n)
		return false
	}
	return true
}

// give returns n bytes to the budget.
func (b *OverviewBudget) give(n int64) { b.used.Add(-n) }

// Used is the memory the Overviews of the budget hold, in bytes.
func (b *OverviewBudget) Used() int64 { return b.used.Load() }

// Overview is a polygon layer reduced to its features' footprints — bounding box, area and the
// length of the rings — kept in memory while the source's version stays the same. A drawing
// whose pixels are at least as large as the largest feature draws every feature from its
// footprint (coverage, not outline; internal/render), so that it can read the footprints
// instead of a million rows (docs/providers.md, "Overviews"). It is built by one full scan of
// the source, the first time a drawing asks after the source changed. Safe for concurrent use.
type Overview struct {
	src    Source
	ver    Versioned
	budget *OverviewBudget

	building sync.Mutex // held by the draw building the footprints
	mu       sync.Mutex // guards cur
	cur      *footprints
}

// footprints is one build of an Overview.
type footprints struct {
	version    string
	usable     bool      // every feature a polygon, and not too many
	origin     orb.Point // v's boxes are relative to it (float32 keeps a few millimetres at 50 km)
	eps        float64   // how far a float32 of v may be from the float64 it stands for
	maxW, maxH float64   // the largest box's width and height, eps included
	v          []float32 // 6 a feature: x0, y0, x1, y1 (from origin), area, perimeter
}

// NewOverview returns the Overview of src, holding its footprints within budget, or nil when src
// cannot have one: it is not a polygon layer or cannot tell its version.
func NewOverview(src Source, budget *OverviewBudget) *Overview {
	ver, ok := src.(Versioned)
	if !ok || src.Info().GeometryType != Polygon {
		return nil
	}
	return &Overview{src: src, ver: ver, budget: budget}
}

// Source is the source o reads.
func (o *Overview) Source() Source { return o.src }

// Footprints calls fn with the footprint (box, area and ring length, in the source's units) of
// every feature whose box intersects bound, in no particular order, and reports true — if every
// feature of the source is a polygon whose box is at most maxSize wide and high. Otherwise it
// calls fn for nothing and reports false: the caller reads the source. It checks the source's
// version first. Footprints of an older version are rebuilt (one full scan of the source) only
// for a bound that holds the source's whole extent, a drawing that would read every row
// anyway, and not when the last build showed they would not serve (see current); any other
// bound is then left to the source, as is everything when the source cannot tell its version.
// fn returning false stops the calls.
func (o *Overview) Footprints(ctx context.Context, bound orb.Bound, maxSize float64, fn func(b orb.Bound, area, perimeter float64) bool) (bool, error) {
	ext := o.src.Info().Extent
	whole := !ext.IsEmpty() && bound.Contains(ext.Min) && bound.Contains(ext.Max)
	fp, err := o.current(ctx, whole, maxSize)
	if err != nil || fp == nil || !fp.usable || fp.maxW > maxSize || fp.maxH > maxSize {
		return false, err
	}
	// The bound, relative to the origin, widened by a float32's rounding so that a box that
	// touches it is not lost.
	bx0, by0 := bound.Min[0]-fp.origin[0]-fp.eps, bound.Min[1]-fp.origin[1]-fp.eps
	bx1, by1 := bound.Max[0]-fp.origin[0]+fp.eps, bound.Max[1]-fp.origin[1]+fp.eps
	v := fp.v
	for i := 0; i+6 <= len(v); i += 6 {
		x0, y0, x1, y1 := float64(v[i]), float64(v[i+1]), float64(v[i+2]), float64(v[i+3])
		if x1 < bx0 || x0 > bx1 || y1 < by0 || y0 > by1 {
			continue
		}
		if i%(6*4096) == 0 && ctx.Err() != nil {
			return true, fmt.Errorf("overview of %s: %w", o.src.Info().Name, ctx.Err())
		}
		b := orb.Bound{Min: orb.Point{x0 + fp.origin[0], y0 + fp.origin[1]}, Max: orb.Point{x1 + fp.origin[0], y1 + fp.origin[1]}}
		if !fn(b, float64(v[i+4]), float64(v[i+5])) {
			break
		}
	}
	return true, nil
}

// current returns the footprints of the source's current version, building them when the
// version changed and mayBuild is set; nil when there are none (or the source cannot tell its
// version). The last build decides whether another is worth its full scan: none after one that
// found the source cannot have an overview (not only polygons, or too many), nor for a maxSize
// smaller than the largest feature it found (the features are most likely as large still). A
// draw the last build cannot serve costs nothing more (not even the version's query), and only
// draws that may build wait for a build under way.
func (o *Overview) current(ctx context.Context, mayBuild bool, maxSize float64) (*footprints, error) {
	o.mu.Lock()
	cur := o.cur
	o.mu.Unlock()
	serves := cur != nil && cur.usable && cur.maxW <= maxSize && cur.maxH <= maxSize
	if !serves && (cur != nil || !mayBuild) {
		return nil, nil
	}
	ver, err := o.ver.Version(ctx)
	if errors.Is(err, ErrNoVersion) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("overview of %s: %w", o.src.Info().Name, err)
	}
	if cur != nil && cur.version == ver {
		return cur, nil
	}
	if !mayBuild {
		return nil, nil
	}
	o.building.Lock()
	defer o.building.Unlock()
	o.mu.Lock()
	cur = o.cur
	o.mu.Unlock()
	if cur != nil && cur.version == ver { // built by another draw meanwhile
		return cur, nil
	}
	fp, err := o.build(ctx, ver)
	if err != nil {
		return nil, err
	}
	// The build replaces the last one in the budget; past it, it keeps only what it found (not
	// usable), so that draws read the source until the source changes.
	if cur != nil {
		o.budget.give(cur.bytes())
	}
	if !o.budget.take(fp.bytes()) {
		fp.v, fp.usable = nil, false
	}
	o.mu.Lock()
	o.cur = fp
	o.mu.Unlock()
	return fp, nil
}

// bytes is the memory fp's footprints hold.
func (fp *footprints) bytes() int64 { return int64(cap(fp.v)) * 4 }

// errNotOverview stops a build: a feature that is not a polygon, or too many features.
var errNotOverview = errors.New("not an overview")

// build reads every feature of the source and keeps its footprint.
func (o *Overview) build(ctx context.Context, ver string) (*footprints, error) {
	fp := &footprints{version: ver, usable: true}
	ext := o.src.Info().Extent
	if !ext.IsEmpty() {
		fp.origin = ext.Center()
	}
	err := o.src.Scan(ctx, &Query{Columns: []int{}, AnyOrder: true}, func(f *Feature) error {
		if f.Geom == nil {
			return nil
		}
		area, perim, ok := PolygonMeasures(f.Geom)
		if !ok || len(fp.v) >= 6*OverviewMaxFeatures {
			return errNotOverview
		}
		if perim == 0 { // no ring: nothing to draw
			return nil
		}
		b := f.Geom.Bound()
		fp.maxW, fp.maxH = max(fp.maxW, b.Max[0]-b.Min[0]), max(fp.maxH, b.Max[1]-b.Min[1])
		fp.v = append(fp.v,
			float32(b.Min[0]-fp.origin[0]), float32(b.Min[1]-fp.origin[1]),
			float32(b.Max[0]-fp.origin[0]), float32(b.Max[1]-fp.origin[1]),
			float32(area), float32(perim))
		return nil
	})
	if errors.Is(err, errNotOverview) {
		// Remember that this version cannot be drawn from footprints, without holding them.
		return &footprints{version: ver}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("overview of %s: %w", o.src.Info().Name, err)
	}
	// A float32 of v is within half a unit in the last place of what it stands for: a relative
	// 2⁻²⁴ of the farthest coordinate from the origin (the extent's corner, or a feature's).
	far := 1.0
	for i := 0; i+6 <= len(fp.v); i += 6 {
		far = max(far, math.Abs(float64(fp.v[i])), math.Abs(float64(fp.v[i+1])), math.Abs(float64(fp.v[i+2])), math.Abs(float64(fp.v[i+3])))
	}
	fp.eps = far * 0x1p-23
	fp.maxW += 2 * fp.eps
	fp.maxH += 2 * fp.eps
	fp.v = slices.Clone(fp.v) // up to half of what append grew is unused
	return fp, nil
}

// PolygonMeasures returns the area (holes subtracted) and the length of all rings of a polygon
// or multipolygon, and false for other geometries: with its bound, what a polygon smaller than a
// pixel contributes to a picture (render.Footprint), kept by an Overview.
func PolygonMeasures(g orb.Geometry) (area, perimeter float64, ok bool) {
	add := func(p orb.Polygon) {
		for i, r := range p {
			a, l := ringMeasures(r)
			if i == 0 {
				area += a
			} else {
				area -= a
			}
			perimeter += l
		}
	}
	switch g := g.(type) {
	case orb.Polygon:
		add(g)
	case orb.MultiPolygon:
		for _, p := range g {
			add(p)
		}
	default:
		return 0, 0, false
	}
	return max(area, 0), perimeter, true
}

// ringMeasures returns the absolute area and the length of a ring (closed or not).
func ringMeasures(r orb.Ring) (float64, float64) {
	n := len(r)
	if n == 0 {
		return 0, 0
	}
	var a, l float64
	p := r[n-1]
	for _, q := range r {
		a += p[0]*q[1] - q[0]*p[1]
		l += math.Hypot(q[0]-p[0], q[1]-p[1])
		p = q
	}
	return math.Abs(a) / 2, l
}
