package proj

import (
	"math"

	"github.com/paulmach/orb"
)

// Windows for drawing: a map drawn in another system than its data's must not draw data the
// target system cannot show. Data beyond the antimeridian of a map whose antimeridian is an
// edge (its central meridian ± 180°) would wrap across the whole map, and data where the system
// is not defined come out at infinity (the far pole of a polar or conic system) or, far outside
// its area of use, stretched beyond use. So data are clipped, in their own system and before
// projection, to the windows below, which follow the system's shape (CRS.Shape): as ArcGIS
// does, a system draws wherever its projection is valid and useful, not only over its area of
// use, so that Alaska appears (distorted) in US National Albers.

// areaMargin is how far around the area of use of a regional system data are still drawn, in
// degrees: enough that a national map shows its neighbours to the edges of the image.
const areaMargin = 20

// poleMargin: a side of an area of use within this many degrees of a pole is not widened
// (Mercator-like systems end short of the poles on purpose).
const poleMargin = 10

// conicMargin is how far beyond its area of use, away from the cone's apex, a conic system is
// drawn, in degrees; towards the apex it is drawn to the pole.
const conicMargin = 30

// polarMargin is how far beyond the equator a polar system is drawn, in degrees: its far pole
// is at infinity (stereographic) or a circle (azimuthal equal-area and equidistant), where a
// polygon about it would turn inside out.
const polarMargin = 30

// cutGap is the gap left on each side of the antimeridian, in degrees, so that no point lies
// on it (a point on it may land on either edge of the map).
const cutGap = 1e-7

// DrawWindows returns the rectangles, in from's coordinates, of the data a map drawn in to
// may show: for a polar system (ShapeNorthPolar, ShapeSouthPolar) its hemisphere and
// polarMargin degrees beyond, uncut; for a conic one every longitude, cut at its antimeridian,
// and the latitudes from conicMargin degrees beyond its area of use to the pole of its apex;
// for any other system its area of use widened by areaMargin degrees (not past a side near a
// pole), cut at its antimeridian. A nil result with no error means nothing needs clipping (from
// and to are the same, or to is WGS 84 or Web Mercator, whose map edges are the ±180°
// meridian every dataset already ends at).
func (s *Systems) DrawWindows(from, to SR) ([]orb.Bound, error) {
	if from.Same(to) {
		return nil, nil
	}
	dst, err := s.CRS(to)
	if err != nil {
		return nil, err
	}
	if _, ok := builtin(to); ok {
		return nil, nil
	}
	rects := lonLatWindows(dst)
	t, err := s.Transformer(SR{WKID: WGS84}, from)
	if err != nil {
		return nil, err
	}
	if t.Target.Geographic || t.Identity() {
		return rects, nil
	}
	out := make([]orb.Bound, 0, len(rects))
	for _, r := range rects {
		b, err := t.Bound(r)
		if err != nil {
			continue // a window wholly outside from's domain holds no data
		}
		out = append(out, b)
	}
	return out, nil
}

// lonLatWindows are the drawing windows of dst in longitude/latitude degrees.
func lonLatWindows(dst CRS) []orb.Bound {
	a := dst.Area
	var w orb.Bound
	switch dst.Shape {
	case ShapeNorthPolar:
		return []orb.Bound{{Min: orb.Point{-180, -polarMargin}, Max: orb.Point{180, 90}}}
	case ShapeSouthPolar:
		return []orb.Bound{{Min: orb.Point{-180, -90}, Max: orb.Point{180, polarMargin}}}
	case ShapeConic:
		w = orb.Bound{Min: orb.Point{-180, math.Max(-90, a.Min[1]-conicMargin)}, Max: orb.Point{180, 90}}
		if a.Min[1]+a.Max[1] < 0 { // a cone of the southern hemisphere
			w = orb.Bound{Min: orb.Point{-180, -90}, Max: orb.Point{180, math.Min(90, a.Max[1]+conicMargin)}}
		}
	default:
		w = orb.Bound{
			Min: orb.Point{math.Max(-180, a.Min[0]-areaMargin), widen(a.Min[1], -1)},
			Max: orb.Point{math.Min(180, a.Max[0]+areaMargin), widen(a.Max[1], 1)},
		}
	}
	// The antimeridian of dst, as a longitude in (-180, 180].
	cut := math.Mod(dst.LonOrigin+180, 360)
	if cut <= -180 {
		cut += 360
	} else if cut > 180 {
		cut -= 360
	}
	if cut > w.Min[0] && cut < w.Max[0] {
		return []orb.Bound{
			{Min: w.Min, Max: orb.Point{cut - cutGap, w.Max[1]}},
			{Min: orb.Point{cut + cutGap, w.Min[1]}, Max: w.Max},
		}
	} // a cut at ±180° is where every dataset ends already
	return []orb.Bound{w}
}

// DataEdges returns the bound at whose sides data stored in the system from end by
// construction: the ±180° meridians and the poles of a geographic system, the square of Web
// Mercator. Edges data have along them are seams, not coastlines, once projected into a system
// whose map goes on across them (a polar one, or one whose antimeridian is elsewhere), and a
// drawing does not outline them (feature.Clipped). false for other systems.
func DataEdges(from CRS) (orb.Bound, bool) {
	switch {
	case from.SR.IsWebMercator():
		return orb.Bound{Min: orb.Point{-MaxExtent, -MaxExtent}, Max: orb.Point{MaxExtent, MaxExtent}}, true
	case from.Geographic && from.LonOrigin == 0:
		return world(), true
	}
	return orb.Bound{}, false
}

// widen moves a latitude bound areaMargin degrees towards the pole of sign dir, unless it is
// within poleMargin of that pole already.
func widen(lat, dir float64) float64 {
	if math.Abs(lat) >= 90-poleMargin && lat*dir > 0 {
		return lat
	}
	return math.Max(-90, math.Min(90, lat+dir*areaMargin))
}
