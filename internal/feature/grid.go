package feature

import (
	"math"

	"github.com/paulmach/orb"
)

// GridFor returns the grid a draw's Query.Resolution lets a provider snap vertices to: the
// largest power of ten no larger than a thousandth of res (a vertex then moves by a two-thousandth
// of a pixel at most), and its count of decimals (negative for tens, hundreds, …), which is
// TWKB's precision, kept within TWKB's -7…7. ok is false when res gives no grid (not positive,
// not finite).
func GridFor(res float64) (grid float64, decimals int, ok bool) {
	if !(res > 0) || math.IsInf(res, 0) {
		return 0, 0, false
	}
	decimals = -int(math.Floor(math.Log10(res / 1000)))
	decimals = max(-7, min(7, decimals))
	return math.Pow10(-decimals), decimals, true
}

// SnapToGrid snaps g's vertices, in place, to the grid of decimals decimals (GridFor) and drops
// the vertices that then repeat the one before, exactly as PostGIS's ST_AsTWKB does (see
// snapFactors and snapPoints), and returns the result: the geometry a provider returns for a
// draw's Query.Resolution, the same whether PostGIS or Go snapped it.
func SnapToGrid(g orb.Geometry, decimals int) orb.Geometry {
	f := snapFactors{mul: float64(float32(math.Pow10(decimals))), div: math.Pow10(decimals)}
	switch g := g.(type) {
	case orb.Point:
		return snapPoint(g, f)
	case orb.MultiPoint:
		for i := range g {
			g[i] = snapPoint(g[i], f)
		}
		return g
	case orb.LineString:
		return orb.LineString(snapPoints(g, f, 2))
	case orb.Ring:
		return orb.Ring(snapPoints(g, f, 4))
	case orb.Polygon:
		for i := range g {
			g[i] = snapPoints(g[i], f, 4)
		}
		return g
	case orb.MultiLineString:
		for i := range g {
			g[i] = snapPoints(g[i], f, 2)
		}
		return g
	case orb.MultiPolygon:
		for _, p := range g {
			for i := range p {
				p[i] = snapPoints(p[i], f, 4)
			}
		}
		return g
	case orb.Collection:
		for i := range g {
			g[i] = SnapToGrid(g[i], decimals)
		}
		return g
	}
	return g
}

// snapFactors are what a coordinate is multiplied by before rounding and divided by after:
// PostGIS 3.3's TWKB writer keeps 10^decimals as a float32 (so 0.01 is 0.0099999998, and
// 18837650 at -2 decimals rounds to 188376, not 188377), and readers divide by 10^decimals.
type snapFactors struct{ mul, div float64 }

func snapPoint(p orb.Point, f snapFactors) orb.Point {
	return orb.Point{math.Round(p[0]*f.mul) / f.div, math.Round(p[1]*f.mul) / f.div}
}

// snapPoints snaps pts in place and drops each point after the first that repeats the last one
// kept, while more than minPoints are left: PostGIS 3.3's TWKB writer's rule (2 for lines, 4 for
// rings).
func snapPoints[P ~[]orb.Point](pts P, f snapFactors, minPoints int) P {
	out, left := 0, len(pts)
	for i, p := range pts {
		p = snapPoint(p, f)
		if i > 0 && p == pts[out-1] && left > minPoints {
			left--
			continue
		}
		pts[out] = p
		out++
	}
	return pts[:out]
}
