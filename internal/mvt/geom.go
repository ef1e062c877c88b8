package mvt

import (
	"math"
	"slices"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/clip"
	"github.com/paulmach/orb/planar"
)

// geomType is a feature's GeomType in the tile.
type geomType uint32

// GeomType values of vector_tile.proto; geomUnknown marks a geometry that
// left nothing in the tile.
const (
	geomUnknown geomType = iota
	geomPoint
	geomLine
	geomPolygon
)

// Command ids of the geometry encoding.
const (
	cmdMoveTo    = 1
	cmdLineTo    = 2
	cmdClosePath = 7
)

// transform maps map units to tile coordinates (y down).
type transform struct {
	minX, maxY float64
	sx, sy     float64
}

func (t transform) apply(p orb.Point) orb.Point {
	return orb.Point{(p[0] - t.minX) * t.sx, (t.maxY - p[1]) * t.sy}
}

// ipt is a point in integer tile coordinates.
type ipt struct{ x, y int32 }

// geomBuilder turns geometries into command streams. It keeps its buffers
// between features; one builder serves one Encode call.
type geomBuilder struct {
	box    orb.Bound
	tol2   float64 // the square of the simplification tolerance; 0: none
	cmds   []uint32
	cx, cy int32
	path   []orb.Point // the current path in tile coordinates
	pts    []ipt       // the current path quantised
	keep   []bool      // simplify's marks
	stack  []int       // simplify's spans
	edges  []sweepEdge // scratch of the simplicity check
	active []sweepEdge
	keys   []uint64
}

func newGeomBuilder(box orb.Bound, tolerance float64) *geomBuilder {
	return &geomBuilder{box: box, tol2: tolerance * tolerance}
}

// simplify is Douglas-Peucker in place (orb/simplify's, the same points kept) with the
// builder's buffers: it keeps the ends and, span by span, the point farthest from the span's
// chord while that is farther than the tolerance.
func (g *geomBuilder) simplify(ls []orb.Point) []orb.Point {
	n := len(ls)
	if g.tol2 == 0 || n <= 2 {
		return ls
	}
	keep := slices.Grow(g.keep[:0], n)[:n]
	clear(keep)
	keep[0], keep[n-1] = true, true
	stack := append(g.stack[:0], 0, n-1)
	for len(stack) > 0 {
		start, end := stack[len(stack)-2], stack[len(stack)-1]
		far, at := 0.0, 0
		for i := start + 1; i < end; i++ {
			if d := planar.DistanceFromSegmentSquared(ls[start], ls[end], ls[i]); d > far {
				far, at = d, i
			}
		}
		if far > g.tol2 {
			keep[at] = true
			stack[len(stack)-1] = at
			stack = append(stack, at, end)
		} else {
			stack = stack[:len(stack)-2]
		}
	}
	g.keep, g.stack = keep, stack
	out := ls[:0]
	for i, k := range keep {
		if k {
			out = append(out, ls[i])
		}
	}
	return out
}

// build encodes geom (in map units); the commands are valid until the next
// call. geomUnknown means nothing is left of it in the tile.
func (g *geomBuilder) build(geom orb.Geometry, tr transform) (geomType, []uint32) {
	g.cmds, g.cx, g.cy = g.cmds[:0], 0, 0
	var gt geomType
	switch geom := geom.(type) {
	case orb.Point:
		gt = g.points([]orb.Point{geom}, tr)
	case orb.MultiPoint:
		gt = g.points(geom, tr)
	case orb.LineString:
		gt = g.line(geom, tr)
	case orb.MultiLineString:
		gt = eachPart(geom, tr, g.line, geomLine)
	case orb.Ring:
		gt = g.polygon(orb.Polygon{geom}, tr)
	case orb.Bound:
		gt = g.polygon(geom.ToPolygon(), tr)
	case orb.Polygon:
		gt = g.polygon(geom, tr)
	case orb.MultiPolygon:
		gt = eachPart(geom, tr, g.polygon, geomPolygon)
	}
	// nil, an empty geometry and a Collection (MVT has no mixed type).
	return gt, g.cmds
}

// eachPart adds every part of a multi-geometry with add; the geometry is of type kind when
// at least one part drew, else geomUnknown.
func eachPart[P any](parts []P, tr transform, add func(P, transform) geomType, kind geomType) geomType {
	gt := geomUnknown
	for _, p := range parts {
		if add(p, tr) != geomUnknown {
			gt = kind
		}
	}
	return gt
}

func (g *geomBuilder) points(ps []orb.Point, tr transform) geomType {
	pts := g.pts[:0]
	for _, p := range ps {
		q := tr.apply(p)
		if !g.box.Contains(q) {
			continue
		}
		ip := quantise(q)
		if len(pts) > 0 && pts[len(pts)-1] == ip {
			continue
		}
		pts = append(pts, ip)
	}
	g.pts = pts
	if len(pts) == 0 {
		return geomUnknown
	}
	g.command(cmdMoveTo, len(pts))
	g.params(pts)
	return geomPoint
}

// toTile copies a path into g.path in tile coordinates, with its bound.
func (g *geomBuilder) toTile(ps []orb.Point, tr transform) ([]orb.Point, orb.Bound) {
	path := g.path[:0]
	b := orb.Bound{Min: orb.Point{math.Inf(1), math.Inf(1)}, Max: orb.Point{math.Inf(-1), math.Inf(-1)}}
	for _, p := range ps {
		q := tr.apply(p)
		b.Min[0], b.Min[1] = min(b.Min[0], q[0]), min(b.Min[1], q[1])
		b.Max[0], b.Max[1] = max(b.Max[0], q[0]), max(b.Max[1], q[1])
		path = append(path, q)
	}
	g.path = path
	return path, b
}

func (g *geomBuilder) inside(b orb.Bound) bool {
	return b.Min[0] >= g.box.Min[0] && b.Min[1] >= g.box.Min[1] && b.Max[0] <= g.box.Max[0] && b.Max[1] <= g.box.Max[1]
}

func (g *geomBuilder) line(ls orb.LineString, tr transform) geomType {
	if len(ls) < 2 {
		return geomUnknown
	}
	path, b := g.toTile(ls, tr)
	if !g.box.Intersects(b) {
		return geomUnknown
	}
	parts := orb.MultiLineString{orb.LineString(path)}
	if !g.inside(b) {
		parts = clip.LineString(g.box, orb.LineString(path))
	}
	gt := geomUnknown
	for _, part := range parts {
		part = g.simplify(part)
		pts := g.quantiseLine(part)
		if len(pts) < 2 {
			continue
		}
		g.command(cmdMoveTo, 1)
		g.params(pts[:1])
		g.command(cmdLineTo, len(pts)-1)
		g.params(pts[1:])
		gt = geomLine
	}
	return gt
}

// polygon encodes one polygon: its exterior, then its holes. A polygon
// whose exterior leaves nothing is dropped with its holes. Rings that are
// not simple once quantised are cut into simple ones (rings.go): pieces of
// the exterior become exteriors, each followed by the holes inside it, and
// pieces of a hole wound against it (islands in the hole) exteriors after
// them.
func (g *geomBuilder) polygon(p orb.Polygon, tr transform) geomType {
	if len(p) == 0 {
		return geomUnknown
	}
	ext := g.prepare(p[0], tr)
	if ext == nil {
		return geomUnknown
	}
	if area2(ext) == 0 || !g.simple(ext) {
		return g.polygonPieces(ext, p[1:], tr)
	}
	g.writeRing(ext, true)
	var islands [][]ipt
	for _, h := range p[1:] {
		pts := g.prepare(h, tr)
		switch {
		case pts == nil:
		case area2(pts) != 0 && g.simple(pts):
			g.writeRing(pts, false)
		default:
			loops := g.fixRing(pts, nil)
			s := sign(largest(loops))
			for _, l := range loops {
				if sign(l) == s {
					g.writeRing(l, false)
				} else {
					islands = append(islands, l)
				}
			}
		}
	}
	for _, l := range islands {
		g.writeRing(l, true)
	}
	return geomPolygon
}

// polygonPieces encodes a polygon whose exterior ext is not simple: its
// loops wound as the largest one are exteriors, the others holes. A hole
// goes after the first exterior it lies in; a loop of the exterior that
// lies in none becomes an exterior itself (the other lobe of a bow tie),
// an interior ring that lies in none is dropped.
func (g *geomBuilder) polygonPieces(ext []ipt, interiors []orb.Ring, tr transform) geomType {
	loops := g.fixRing(ext, nil)
	if len(loops) == 0 {
		return geomUnknown
	}
	s := sign(largest(loops))
	var outers, holes, islands [][]ipt
	for _, l := range loops {
		if sign(l) == s {
			outers = append(outers, l)
		} else {
			holes = append(holes, l)
		}
	}
	fromExt := len(holes)
	for _, h := range interiors {
		pts := g.prepare(h, tr)
		switch {
		case pts == nil:
		case area2(pts) != 0 && g.simple(pts):
			holes = append(holes, slices.Clone(pts))
		default:
			hl := g.fixRing(pts, nil)
			hs := sign(largest(hl))
			for _, l := range hl {
				if sign(l) == hs {
					holes = append(holes, l)
				} else {
					islands = append(islands, l)
				}
			}
		}
	}
	done := make([]bool, len(holes))
	for _, o := range outers {
		g.writeRing(o, true)
		for i, h := range holes {
			if !done[i] && within(o, h) {
				g.writeRing(h, false)
				done[i] = true
			}
		}
	}
	for i, h := range holes[:fromExt] {
		if !done[i] {
			g.writeRing(h, true)
		}
	}
	for _, l := range islands {
		g.writeRing(l, true)
	}
	return geomPolygon
}

// largest is the loop of the largest area.
func largest(loops [][]ipt) []ipt {
	var best []ipt
	var ba int64
	for _, l := range loops {
		if a := area2(l); max(a, -a) > ba {
			best, ba = l, max(a, -a)
		}
	}
	return best
}

// prepare clips, simplifies and quantises one ring; the result, valid
// until the next call, is nil when nothing of the ring is left.
func (g *geomBuilder) prepare(r orb.Ring, tr transform) []ipt {
	if len(r) < 3 {
		return nil
	}
	path, b := g.toTile(r, tr)
	if !g.box.Intersects(b) {
		return nil
	}
	ring := orb.Ring(path)
	if !g.inside(b) {
		// clip.Ring uses its input as scratch space: path is ours.
		ring = clip.Ring(g.box, ring)
	}
	if len(ring) > 4 {
		ring = g.simplify(ring)
	}
	// A ring of zero area is not dropped here: a bow tie has two lobes.
	return g.quantiseRing(ring)
}

// writeRing writes a simple ring wound as an exterior or an interior.
func (g *geomBuilder) writeRing(pts []ipt, exterior bool) {
	if (area2(pts) > 0) != exterior {
		slices.Reverse(pts[1:])
	}
	g.command(cmdMoveTo, 1)
	g.params(pts[:1])
	g.command(cmdLineTo, len(pts)-1)
	g.params(pts[1:])
	g.command(cmdClosePath, 1)
}

func quantise(p orb.Point) ipt {
	return ipt{int32(math.Round(p[0])), int32(math.Round(p[1]))}
}

// cross is the cross product of ab and bc (twice the signed area of abc).
func cross(a, b, c ipt) int64 {
	return int64(b.x-a.x)*int64(c.y-b.y) - int64(b.y-a.y)*int64(c.x-b.x)
}

// quantiseLine rounds a line and drops repeated points and points in the
// middle of a straight run; a backtrack is kept, since it is drawn.
func (g *geomBuilder) quantiseLine(ls orb.LineString) []ipt {
	pts := g.pts[:0]
	for _, p := range ls {
		q := quantise(p)
		n := len(pts)
		if n > 0 && pts[n-1] == q {
			continue
		}
		if n >= 2 {
			a, b := pts[n-2], pts[n-1]
			dot := int64(b.x-a.x)*int64(q.x-b.x) + int64(b.y-a.y)*int64(q.y-b.y)
			if cross(a, b, q) == 0 && dot > 0 {
				pts[n-1] = q
				continue
			}
		}
		pts = append(pts, q)
	}
	g.pts = pts
	return pts
}

// quantiseRing rounds a ring (open: without its closing point) and drops
// repeated points, collinear points and zero-width spikes, across the
// ring's seam too (cleanRing).
func (g *geomBuilder) quantiseRing(r orb.Ring) []ipt {
	pts := g.pts[:0]
	for _, p := range r {
		pts = append(pts, quantise(p))
	}
	g.pts = pts
	return cleanRing(pts)
}

// area2 is twice the ring's area by the surveyor's formula, in tile
// coordinates: positive for an exterior ring as MVT 2.1 §4.3.4.4 wants.
func area2(pts []ipt) int64 {
	var s int64
	for i, p := range pts {
		q := pts[(i+1)%len(pts)]
		s += int64(p.x)*int64(q.y) - int64(q.x)*int64(p.y)
	}
	return s
}

func (g *geomBuilder) command(id, count int) {
	g.cmds = append(g.cmds, uint32(count)<<3|uint32(id))
}

func (g *geomBuilder) params(pts []ipt) {
	for _, p := range pts {
		dx, dy := p.x-g.cx, p.y-g.cy
		g.cmds = append(g.cmds, uint32((dx<<1)^(dx>>31)), uint32((dy<<1)^(dy>>31)))
		g.cx, g.cy = p.x, p.y
	}
}
