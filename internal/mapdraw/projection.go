package mapdraw

import (
	"fmt"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
)

// projection is how a drawing in another system than its map's sees the map's layers: each
// layer's data clipped, in the map's system, to the windows the target system can show
// (proj.Systems.DrawWindows: its area of use, widened, cut at its antimeridian), then projected
// feature by feature as the draw scans them. The scan runs in a goroutine of its own (prefetch),
// so the projection overlaps with the drawing.
type projection struct {
	to         proj.SR
	sys        *proj.Systems
	windows    []orb.Bound
	unitMeters float64 // metres per unit of to, for scales
}

// newProjection returns the projection of req, or nil when it draws in its map's own system.
func newProjection(req Request) (*projection, error) {
	m := req.Map
	if req.SR.IsZero() || req.SR.Same(m.SR) {
		return nil, nil
	}
	if m.Systems == nil {
		return nil, &ErrBadRequest{Err: fmt.Errorf("map %s cannot be drawn in %s, only in its own %s", m.Name, req.SR.Name(), m.SR.Name())}
	}
	crs, err := m.Systems.CRS(req.SR)
	if err != nil {
		return nil, &ErrBadRequest{Err: err}
	}
	windows, err := m.Systems.DrawWindows(m.SR, req.SR)
	if err != nil {
		return nil, &ErrBadRequest{Err: err}
	}
	return &projection{to: req.SR, sys: m.Systems, windows: windows, unitMeters: crs.MetersPerUnit}, nil
}

// layer returns l with its data seen in the target system.
func (p *projection) layer(l *catalog.Layer) (*catalog.Layer, error) {
	data := l.Data
	if !p.covers(l.Extent) {
		data = feature.Clipped(data, p.windows)
	}
	data, err := feature.Reprojected(data, p.to, p.sys)
	if err != nil {
		return nil, &ErrBadRequest{Err: fmt.Errorf("layer %d (%s): %w", l.ID, l.Name, err)}
	}
	c := *l
	c.Data = data
	return &c, nil
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
