package mapdraw

import (
	"fmt"
	"math"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/render"
)

// projection is how a drawing in another system than its map's sees the map's layers: each
// layer's data clipped, in the map's system, to the windows the target system can show
// (proj.Systems.DrawWindows: its area of use, widened, cut at its antimeridian), then projected
// feature by feature as the draw scans them, through an approximate transformer exact to an
// eighth of a pixel (proj.Transformer.Approximate). The scan runs in a goroutine of its own
// (prefetch), so the projection overlaps with the drawing.
type projection struct {
	t          *proj.Transformer
	windows    []orb.Bound
	unitMeters float64 // metres per unit of the target system, for scales
}

// approxPixels is the largest error of the approximate transformation, in pixels: invisible
// after anti-aliasing (the renderer itself drops vertices within half a pixel of the last).
const approxPixels = 0.125

// newProjection returns the projection of req, or nil when it draws in its map's own system.
func newProjection(req Request) (*projection, error) {
	m := req.Map
	if req.SR.IsZero() || req.SR.Same(m.SR) {
		return nil, nil
	}
	if m.Systems == nil {
		return nil, &ErrBadRequest{Err: fmt.Errorf("map %s cannot be drawn in %s, only in its own %s", m.Name, req.SR.Name(), m.SR.Name())}
	}
	t, err := m.Systems.Transformer(m.SR, req.SR)
	if err != nil {
		return nil, &ErrBadRequest{Err: err}
	}
	windows, err := m.Systems.DrawWindows(m.SR, req.SR)
	if err != nil {
		return nil, &ErrBadRequest{Err: err}
	}
	p := &projection{t: t, windows: windows, unitMeters: t.Target.MetersPerUnit}
	v := req.View
	if v.Width > 0 {
		if region, ok := p.region(v); ok {
			res := (v.Extent.Max[0] - v.Extent.Min[0]) / float64(v.Width)
			if a, err := m.Systems.DrawTransformer(m.SR, req.SR, region, approxPixels*res); err == nil {
				p.t = a
			}
		}
	}
	return p, nil
}

// region is the part of the map's system the view shows (within the windows): where the
// approximate transformer's grid goes.
func (p *projection) region(v render.View) (orb.Bound, bool) {
	ext := v.Extent
	if v.Rotation != 0 { // a rotated image shows the circle about the extent
		c, r := ext.Center(), math.Hypot(ext.Max[0]-ext.Min[0], ext.Max[1]-ext.Min[1])/2
		ext = orb.Bound{Min: orb.Point{c[0] - r, c[1] - r}, Max: orb.Point{c[0] + r, c[1] + r}}
	}
	b, err := p.t.InverseBound(ext)
	if err != nil {
		return orb.Bound{}, false
	}
	if p.windows != nil {
		w := p.windows[0]
		for _, o := range p.windows[1:] {
			w = w.Union(o)
		}
		if !w.Intersects(b) {
			return orb.Bound{}, false
		}
		b = orb.Bound{Min: orb.Point{math.Max(b.Min[0], w.Min[0]), math.Max(b.Min[1], w.Min[1])},
			Max: orb.Point{math.Min(b.Max[0], w.Max[0]), math.Min(b.Max[1], w.Max[1])}}
	}
	return b, true
}

// layer returns l with its data seen in the target system: clipped to the windows (unless one
// holds the whole layer), projected.
func (p *projection) layer(l *catalog.Layer) *catalog.Layer {
	data := l.Data
	if !p.covers(l.Extent) {
		data = feature.Clipped(data, p.windows)
	}
	c := *l
	c.Data = feature.Projected(data, p.t)
	return &c
}

// covers reports whether one window holds all of b, so that nothing needs clipping.
func (p *projection) covers(b orb.Bound) bool {
	if p.windows == nil {
		return true
	}
	for _, w := range p.windows {
		if w.Contains(b.Min) && w.Contains(b.Max) {
			return true
		}
	}
	return false
}
