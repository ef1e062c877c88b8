package worker

import (
	"cmp"
	"context"
	"math"
	"slices"
	"sort"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/planar"

	"github.com/mapfarm/mapfarm/internal/catalog"
	"github.com/mapfarm/mapfarm/internal/feature"
	"github.com/mapfarm/mapfarm/internal/render"
)

// Polygon labels and metatiles. The renderer places a polygon's label inside the part of the
// polygon that the image shows, so two neighbouring metatiles that each show part of a polygon
// would each place its label somewhere else: doubled labels on either side of the seam, or one
// cut by it. For seeding, polygon labels are therefore drawn from a separate label-only layer
// whose features are tiny squares (one pixel) at an anchor computed once from the whole
// polygon in map coordinates. Every metatile whose buffered area holds the anchor draws the
// label at the same map position, so the pixels agree across the seam. Labels are offered to
// the renderer largest polygon first (ties by text), the order it uses for collisions.

type anchor struct {
	p    orb.Point
	area float64
}

// anchorOf returns a point well inside the largest part of a polygon, and its area.
func anchorOf(g orb.Geometry) (anchor, bool) {
	var best orb.Polygon
	bestA := 0.0
	switch g := g.(type) {
	case orb.Polygon:
		best, bestA = g, math.Abs(planar.Area(g))
	case orb.MultiPolygon:
		for _, p := range g {
			if a := math.Abs(planar.Area(p)); a > bestA {
				best, bestA = p, a
			}
		}
	default:
		return anchor{}, false
	}
	if len(best) == 0 || bestA == 0 {
		return anchor{}, false
	}
	b := best.Bound()
	// The widest interior run of a few horizontal lines through the part; its middle.
	var p orb.Point
	widest := -1.0
	var xs []float64
	for _, f := range []float64{0.5, 0.4, 0.6, 0.3, 0.7, 0.45, 0.55} {
		y := b.Min[1] + f*(b.Max[1]-b.Min[1])
		xs = xs[:0]
		for _, ring := range best {
			for i := 0; i+1 < len(ring); i++ {
				a, c := ring[i], ring[i+1]
				if (a[1] > y) != (c[1] > y) {
					xs = append(xs, a[0]+(y-a[1])*(c[0]-a[0])/(c[1]-a[1]))
				}
			}
		}
		sort.Float64s(xs)
		for i := 0; i+1 < len(xs); i += 2 {
			if w := xs[i+1] - xs[i]; w > widest {
				widest, p = w, orb.Point{(xs[i] + xs[i+1]) / 2, y}
			}
		}
	}
	if widest < 0 {
		return anchor{}, false
	}
	return anchor{p: p, area: bestA}, true
}

// withStableLabels rewrites a built map for metatile rendering: every polygon layer with
// labels draws its geometry without labels, and a label-only layer after it draws the labels
// at their anchors. res is the map units per pixel of the view.
func (s *seeder) withStableLabels(rm render.Map, m *catalog.Map, res float64) render.Map {
	out := render.Map{Background: rm.Background, Transparent: rm.Transparent, UnitMeters: rm.UnitMeters}
	for _, l := range rm.Layers {
		cl := layerByName(m, l.Name)
		if l.Label == nil || cl == nil || cl.Data.Info().GeometryType != feature.Polygon {
			out.Layers = append(out.Layers, l)
			continue
		}
		src, style := l.Features, l.Label
		geom := l
		geom.Label = nil
		out.Layers = append(out.Layers, geom)
		half := res / 2
		out.Layers = append(out.Layers, render.Layer{
			Name: l.Name + " labels", Label: style, MinScale: l.MinScale, MaxScale: l.MaxScale,
			Features: render.SourceFunc(func(ctx context.Context, b orb.Bound, yield func(render.Feature) bool) error {
				type lab struct {
					a    anchor
					text string
				}
				var labs []lab
				err := src.Search(ctx, b, func(f render.Feature) bool {
					if f.Label == "" {
						return true
					}
					if a, ok := anchorOf(f.Geom); ok && b.Contains(a.p) {
						labs = append(labs, lab{a, f.Label})
					}
					return true
				})
				if err != nil {
					return err
				}
				slices.SortFunc(labs, func(x, y lab) int {
					if c := cmp.Compare(y.a.area, x.a.area); c != 0 {
						return c
					}
					return cmp.Compare(x.text, y.text)
				})
				for _, lb := range labs {
					p := lb.a.p
					sq := orb.Polygon{orb.Ring{{p[0] - half, p[1] - half}, {p[0] + half, p[1] - half}, {p[0] + half, p[1] + half}, {p[0] - half, p[1] + half}, {p[0] - half, p[1] - half}}}
					if !yield(render.Feature{Geom: sq, Label: lb.text, Symbol: &render.Symbol{}}) {
						return nil
					}
				}
				return nil
			}),
		})
	}
	return out
}

func layerByName(m *catalog.Map, name string) *catalog.Layer {
	for _, l := range m.Layers {
		if l.Name == name {
			return l
		}
	}
	return nil
}
