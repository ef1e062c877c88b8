package mapdraw

import (
	"fmt"
	"math"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
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
	if v := req.View; v.Width > 0 {
		ext := v.Extent
		if v.Rotation != 0 { // a rotated image shows the circle about the extent
			c, r := ext.Center(), math.Hypot(ext.Max[0]-ext.Min[0], ext.Max[1]-ext.Min[1])/2
			ext = orb.Bound{Min: orb.Point{c[0] - r, c[1] - r}, Max: orb.Point{c[0] + r, c[1] + r}}
		}
		res := (v.Extent.Max[0] - v.Extent.Min[0]) / float64(v.Width)
		if a, err := m.Systems.DrawTransformer(m.SR, req.SR, ext, approxPixels*res); err == nil {
			p.t = a
		}
	}
	return p, nil
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
