package proj

import (
	"math"

	"github.com/paulmach/orb"
)

// Windows for drawing: a map drawn in another system than its data's must not draw data the
// target system cannot show. Data beyond the target's antimeridian (its central meridian
// ± 180°) would wrap across the whole map, and data far outside its area of use comes out
// stretched, or at infinity near a pole it cannot project. So data are clipped, in their own
// system and before projection, to the windows below.

// areaMargin is how far around the target's area of use data are still drawn, in degrees:
// enough that a national map shows its neighbours to the edges of the image.
const areaMargin = 20

// poleMargin: a side of an area of use within this many degrees of a pole is not widened
// (Mercator-like systems end short of the poles on purpose).
const poleMargin = 10

// cutGap is the gap left on each side of the antimeridian, in degrees, so that no point lies
// on it (a point on it may land on either edge of the map).
const cutGap = 1e-7

// DrawWindows returns the rectangles, in from's coordinates, of the data a map drawn in to
// may show: to's area of use widened by areaMargin degrees (not past a side near a pole), cut
// at to's antimeridian. A nil result with no error means nothing needs clipping (from and
// to are the same, or to is WGS 84 or Web Mercator, whose map edges are the ±180° meridian
// every dataset already ends at).
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
	a := dst.Area
	w := orb.Bound{
		Min: orb.Point{math.Max(-180, a.Min[0]-areaMargin), widen(a.Min[1], -1)},
		Max: orb.Point{math.Min(180, a.Max[0]+areaMargin), widen(a.Max[1], 1)},
	}
	// The antimeridian of to, as a longitude in (-180, 180].
	cut := math.Mod(dst.LonOrigin+180, 360)
	if cut <= -180 {
		cut += 360
	} else if cut > 180 {
		cut -= 360
	}
	rects := []orb.Bound{w}
	if cut > w.Min[0] && cut < w.Max[0] {
		rects = []orb.Bound{
			{Min: w.Min, Max: orb.Point{cut - cutGap, w.Max[1]}},
			{Min: orb.Point{cut + cutGap, w.Min[1]}, Max: w.Max},
		}
	} // a cut at ±180° is where every dataset ends already
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

// widen moves a latitude bound areaMargin degrees towards the pole of sign dir, unless it is
// within poleMargin of that pole already.
func widen(lat, dir float64) float64 {
	if math.Abs(lat) >= 90-poleMargin && lat*dir > 0 {
		return lat
	}
	return math.Max(-90, math.Min(90, lat+dir*areaMargin))
}
