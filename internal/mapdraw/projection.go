package mapdraw

import (
	"context"
	"fmt"
	"math"

	"github.com/paulmach/orb"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/proj"
	"github.com/mapfarm/mapfarm/internal/render"
)

// projector is how a drawing sees the map's layers in the system it is drawn in (the
// request's, or the map's own) when their data are stored in another: each layer's stored data
// clipped, in their own system, to the windows the target system can show
// (proj.Systems.DrawWindows: its area of use, widened, cut at its antimeridian), then projected
// feature by feature as the draw scans them, through an approximate transformer exact to an
// eighth of a pixel (proj.Systems.DrawTransformer). The scan runs in a goroutine of its own
// (prefetch), so the projection overlaps with the drawing. A map whose own system is not its
// data's (a map in 5070 of data stored in Web Mercator, and so its tile caches) draws this way
// too.
type projector struct {
	m          *catalog.Map
	to         proj.SR
	view       orb.Bound // the view's extent, or the bound of its rotated extent
	maxErr     float64
	unitMeters float64 // metres per unit of to, for scales
	byFrom     map[proj.SR]*projection
	clipped    bool // some layer is clipped: its polygons may come as feature.Outlined
}

// projection is the clipping and transformer from one stored system to the target.
type projection struct {
	t       *proj.Transformer
	windows []orb.Bound
	seams   []orb.Bound // where the stored data end (proj.DataEdges), not outlined once projected
}

// approxPixels is the largest error of the approximate transformation, in pixels: invisible
// after anti-aliasing (the renderer itself drops vertices within half a pixel of the last).
const approxPixels = 0.125

// newProjector returns the projector of req.
func newProjector(req Request) (*projector, error) {
	m := req.Map
	p := &projector{m: m, to: m.SR, unitMeters: UnitMeters(m), byFrom: map[proj.SR]*projection{}}
	if !req.SR.IsZero() && !req.SR.Same(m.SR) {
		if m.Systems == nil {
			return nil, &ErrBadRequest{Err: fmt.Errorf("map %s cannot be drawn in %s, only in its own %s", m.Name, req.SR.Name(), m.SR.Name())}
		}
		p.to = req.SR
	}
	if m.Systems != nil && !p.to.IsZero() {
		crs, err := m.Systems.CRS(p.to)
		switch {
		case err == nil:
			p.unitMeters = crs.MetersPerUnit
		case !p.to.Same(m.SR):
			return nil, &ErrBadRequest{Err: err}
		}
	}
	v := req.View
	p.view = v.Extent
	if v.Rotation != 0 { // a rotated image shows the circle about the extent
		c, r := p.view.Center(), math.Hypot(p.view.Max[0]-p.view.Min[0], p.view.Max[1]-p.view.Min[1])/2
		p.view = orb.Bound{Min: orb.Point{c[0] - r, c[1] - r}, Max: orb.Point{c[0] + r, c[1] + r}}
	}
	if v.Width > 0 {
		p.maxErr = approxPixels * (v.Extent.Max[0] - v.Extent.Min[0]) / float64(v.Width)
	}
	return p, nil
}

// layer returns l as the drawing sees it: itself when its data are in the target system (or
// it has none), else its stored data clipped and projected.
func (p *projector) layer(l *catalog.Layer) (*catalog.Layer, error) {
	if l.Data.Info().SR.Same(p.to) {
		return l, nil
	}
	stored := feature.Stored(l.Data)
	from := stored.Info().SR
	if from.IsZero() || stored.Info().GeometryType == feature.None {
		return l, nil
	}
	c := *l
	if from.Same(p.to) { // stored in the target system: nothing to project
		c.Data = stored
		return &c, nil
	}
	pr, err := p.projection(from)
	if err != nil {
		return nil, &ErrBadRequest{Err: fmt.Errorf("layer %d (%s): %w", l.ID, l.Name, err)}
	}
	data := stored
	if !pr.covers(stored.Info().Extent) {
		data = feature.Clipped(data, pr.windows, pr.seams)
		p.clipped = true
	}
	c.Data = feature.Projected(data, pr.t)
	return &c, nil
}

// projection returns the projection from the stored system from, made once per drawing.
func (p *projector) projection(from proj.SR) (*projection, error) {
	if pr, ok := p.byFrom[from]; ok {
		return pr, nil
	}
	sys := p.m.Systems
	if sys == nil {
		return nil, fmt.Errorf("data stored in %s cannot be drawn in %s", from.Name(), p.to.Name())
	}
	windows, err := sys.DrawWindows(from, p.to)
	if err != nil {
		return nil, err
	}
	t, err := sys.Transformer(from, p.to)
	if err != nil {
		return nil, err
	}
	if p.maxErr > 0 {
		if a, err := sys.DrawTransformer(from, p.to, p.view, p.maxErr); err == nil {
			t = a
		}
	}
	pr := &projection{t: t, windows: windows}
	if b, ok := proj.DataEdges(t.Source); ok {
		pr.seams = []orb.Bound{b}
	}
	p.byFrom[from] = pr
	return pr, nil
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

// seamless returns src with every polygon the clipping gave as feature.Outlined drawn filled
// whole and outlined without its edges along a seam (the stored data's ±180° meridian inside a
// polar map, the end of a window), in the same batch as its neighbours. Other features pass as
// they are.
func seamless(src render.Source) render.Source {
	return render.SourceFunc(func(ctx context.Context, b orb.Bound, yield func(render.Feature) bool) error {
		return src.Search(ctx, b, func(f render.Feature) bool {
			if fill, outline, ok := feature.Outlined(f.Geom); ok {
				f.Geom, f.Outline = fill, outline
			}
			return yield(f)
		})
	})
}
