package render

import (
	"math"

	"github.com/paulmach/orb"
)

// simplifyTol is the generalisation tolerance in pixels: a vertex closer than this to the last kept
// vertex is dropped.
const simplifyTol = 0.5

// dpTol is the tolerance in pixels of the second generalisation pass (simplifyLine), which drops
// vertices that lie almost on the line between their neighbours; a quarter pixel is invisible after
// anti-aliasing.
const dpTol = 0.25

// pathBuf is a surface's current path, already transformed to surface units: subpaths of one
// point buffer. Its NewPath and ClosePath implement Surface's; the surfaces' MoveTo and LineTo
// transform their point and call moveTo and lineTo.
type pathBuf struct {
	pts  []pathPoint
	subs []subpath
}

// NewPath implements Surface.
func (p *pathBuf) NewPath() {
	p.pts = p.pts[:0]
	p.subs = p.subs[:0]
}

// ClosePath implements Surface.
func (p *pathBuf) ClosePath() {
	if n := len(p.subs); n > 0 {
		p.subs[n-1].closed = true
	}
}

// moveTo starts a subpath at (x, y).
func (p *pathBuf) moveTo(x, y float64) {
	p.subs = append(p.subs, subpath{start: len(p.pts), end: len(p.pts) + 1})
	p.pts = append(p.pts, pathPoint{x, y})
}

// lineTo extends the current subpath to (x, y), or starts one there when there is none.
func (p *pathBuf) lineTo(x, y float64) {
	if len(p.subs) == 0 {
		p.moveTo(x, y)
		return
	}
	p.pts = append(p.pts, pathPoint{x, y})
	p.subs[len(p.subs)-1].end = len(p.pts)
}

// pixelPath is geometry transformed to pixels, generalised and clipped: rings and lines as subpaths of
// one point buffer, plus polygon parts (ranges of subpaths, exterior ring first) for labelling.
type pixelPath struct {
	pts   []pathPoint
	subs  []subpath
	polys []polyRef
	tmp   []pathPoint
	tmp2  []pathPoint
	tmp3  []pathPoint
}

type polyRef struct{ first, n int } // subs[first : first+n]

func (p *pixelPath) reset() {
	p.pts, p.subs, p.polys = p.pts[:0], p.subs[:0], p.polys[:0]
}

// clipRect is an axis-aligned rectangle in pixels.
type clipRect struct{ x0, y0, x1, y1 float64 }

func (r clipRect) contains(x0, y0, x1, y1 float64) bool {
	return x0 >= r.x0 && y0 >= r.y0 && x1 <= r.x1 && y1 <= r.y1
}

func (r clipRect) disjoint(x0, y0, x1, y1 float64) bool {
	return x1 < r.x0 || y1 < r.y0 || x0 > r.x1 || y0 > r.y1
}

// transformer converts world geometry to pixel paths.
type transformer struct {
	m     Matrix
	clip  clipRect
	tol2  float64 // squared radial tolerance
	dpTol float64 // tolerance of simplifyLine; 0 skips that pass
}

// project transforms pts into dst, dropping vertices within the tolerance of the previous kept one
// (the last vertex is always kept), and returns dst with the pixel bounding box.
func (t *transformer) project(dst []pathPoint, pts []orb.Point) ([]pathPoint, [4]float64) {
	m := t.m
	bb := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	var lx, ly float64
	last := len(pts) - 1
	for i, p := range pts {
		x := m.XX*p[0] + m.XY*p[1] + m.X0
		y := m.YX*p[0] + m.YY*p[1] + m.Y0
		if i > 0 && i < last {
			if dx, dy := x-lx, y-ly; dx*dx+dy*dy < t.tol2 {
				continue
			}
		}
		dst = append(dst, pathPoint{x, y})
		lx, ly = x, y
		bb[0], bb[1] = min(bb[0], x), min(bb[1], y)
		bb[2], bb[3] = max(bb[2], x), max(bb[3], y)
	}
	if t.dpTol > 0 {
		dst = simplifyLine(dst, t.dpTol)
	}
	return dst, bb
}

// simplifyLine removes, in place, vertices that lie within tol pixels of the straight line between
// the last kept vertex and a later one, looking at most maxRun vertices ahead (a bounded, linear-time
// cousin of Douglas–Peucker). The first and last vertices are kept.
func simplifyLine(pts []pathPoint, tol float64) []pathPoint {
	const maxRun = 16
	n := len(pts)
	if n <= 3 {
		return pts
	}
	tol2 := tol * tol
	out := 1 // pts[:out] is the result so far; pts[out-1] is the anchor
	anchor := pts[0]
	for i, j := 1, 2; j < n; j++ {
		// Can pts[i:j] (the points after the anchor) be dropped for the segment anchor→pts[j]?
		b := pts[j]
		dx, dy := b.x-anchor.x, b.y-anchor.y
		l2 := dx*dx + dy*dy
		ok := j-i < maxRun && l2 > 0
		for k := i; ok && k < j; k++ {
			c := (pts[k].x-anchor.x)*dy - (pts[k].y-anchor.y)*dx
			ok = c*c <= tol2*l2
		}
		if !ok {
			// Keep pts[j-1] and restart from it.
			anchor = pts[j-1]
			pts[out] = anchor
			out++
			i = j
		}
	}
	pts[out] = pts[n-1]
	return pts[:out+1]
}

// projectAll transforms pts into dst without generalising.
func (t *transformer) projectAll(dst []pathPoint, pts []orb.Point) []pathPoint {
	for _, p := range pts {
		x, y := t.m.Apply(p[0], p[1])
		dst = append(dst, pathPoint{x, y})
	}
	return dst
}

// addGeometry appends g to out. Polygon exteriors are oriented with positive signed area (in pixel
// space, y down) and holes negative, so non-zero filling draws holes.
func (t *transformer) addGeometry(out *pixelPath, g orb.Geometry) {
	switch g := g.(type) {
	case orb.Polygon:
		t.addPolygon(out, g)
	case orb.MultiPolygon:
		for _, p := range g {
			t.addPolygon(out, p)
		}
	case orb.LineString:
		t.addLine(out, g)
	case orb.MultiLineString:
		for _, l := range g {
			t.addLine(out, l)
		}
	case orb.Ring:
		t.addPolygon(out, orb.Polygon{g})
	case orb.Bound:
		t.addPolygon(out, g.ToPolygon())
	case orb.Collection:
		for _, c := range g {
			t.addGeometry(out, c)
		}
	}
	// Points are drawn as markers, not paths.
}

func (t *transformer) addPolygon(out *pixelPath, p orb.Polygon) {
	first := len(out.subs)
	for i, ring := range p {
		if len(ring) < 3 {
			if i == 0 {
				return
			}
			continue
		}
		var bb [4]float64
		out.tmp, bb = t.project(out.tmp[:0], ring)
		if t.clip.disjoint(bb[0], bb[1], bb[2], bb[3]) {
			if i == 0 {
				return // exterior outside: so are the holes
			}
			continue
		}
		pts := out.tmp
		if n := len(pts); n > 1 && pts[0] == pts[n-1] {
			pts = pts[:n-1]
		}
		if len(pts) < 3 && len(ring) > 3 {
			// A ring smaller than the tolerance: keep it whole so it still shows as a dot.
			out.tmp = t.projectAll(out.tmp[:0], ring[:len(ring)-1])
			pts = out.tmp
		}
		if !t.clip.contains(bb[0], bb[1], bb[2], bb[3]) {
			out.tmp2, out.tmp3 = clipPolygon(out.tmp2[:0], out.tmp3[:0], pts, t.clip)
			pts = out.tmp2
		}
		if len(pts) < 3 {
			continue
		}
		a := signedArea(pts)
		if a == 0 {
			continue
		}
		start := len(out.pts)
		out.pts = append(out.pts, pts...)
		if (a > 0) != (i == 0) {
			reversePoints(out.pts[start:])
		}
		out.subs = append(out.subs, subpath{start: start, end: len(out.pts), closed: true})
	}
	if n := len(out.subs) - first; n > 0 {
		out.polys = append(out.polys, polyRef{first, n})
	}
}

func (t *transformer) addLine(out *pixelPath, l orb.LineString) {
	if len(l) < 2 {
		return
	}
	var bb [4]float64
	out.tmp, bb = t.project(out.tmp[:0], l)
	if t.clip.disjoint(bb[0], bb[1], bb[2], bb[3]) {
		return
	}
	if t.clip.contains(bb[0], bb[1], bb[2], bb[3]) {
		start := len(out.pts)
		out.pts = append(out.pts, out.tmp...)
		out.subs = append(out.subs, subpath{start: start, end: len(out.pts)})
		return
	}
	// Clip each segment; start a new subpath wherever the line leaves the rectangle.
	open := false
	for i := 0; i+1 < len(out.tmp); i++ {
		a, b := out.tmp[i], out.tmp[i+1]
		ca, cb, ok := clipSegment(a, b, t.clip)
		if !ok {
			open = false
			continue
		}
		if !open || out.pts[len(out.pts)-1] != ca {
			out.subs = append(out.subs, subpath{start: len(out.pts), end: len(out.pts)})
			out.pts = append(out.pts, ca)
		}
		out.pts = append(out.pts, cb)
		out.subs[len(out.subs)-1].end = len(out.pts)
		open = cb == b
	}
}

// signedArea is twice the signed area of the ring (positive when clockwise on screen, y down).
func signedArea(pts []pathPoint) float64 {
	var a float64
	j := len(pts) - 1
	for i := range pts {
		a += (pts[j].x - pts[i].x) * (pts[j].y + pts[i].y)
		j = i
	}
	return a
}

func reversePoints(p []pathPoint) {
	for i, j := 0, len(p)-1; i < j; i, j = i+1, j-1 {
		p[i], p[j] = p[j], p[i]
	}
}

// clipPolygon clips a closed ring to r (Sutherland–Hodgman). The result may run along r's edges, which
// is right for filling; the renderer's clip rectangle is larger than the image by more than the stroke
// width, so those edges are never seen.
// dst and buf are scratch buffers (reused by the caller); the result is one of them, the other is
// returned second.
func clipPolygon(dst, buf, pts []pathPoint, r clipRect) ([]pathPoint, []pathPoint) {
	// Four passes, ping-ponging between two buffers.
	in := pts
	for edge := 0; edge < 4; edge++ {
		var out []pathPoint
		if edge%2 == 0 {
			out = dst[:0]
		} else {
			out = buf[:0]
		}
		if len(in) == 0 {
			return dst[:0], buf
		}
		prev := in[len(in)-1]
		pin := inside(prev, r, edge)
		for _, p := range in {
			pi := inside(p, r, edge)
			if pi != pin {
				out = append(out, intersect(prev, p, r, edge))
			}
			if pi {
				out = append(out, p)
			}
			prev, pin = p, pi
		}
		if edge%2 == 0 {
			dst = out
		} else {
			buf = out
		}
		in = out
	}
	return buf, dst
}

func inside(p pathPoint, r clipRect, edge int) bool {
	switch edge {
	case 0:
		return p.x >= r.x0
	case 1:
		return p.x <= r.x1
	case 2:
		return p.y >= r.y0
	default:
		return p.y <= r.y1
	}
}

func intersect(a, b pathPoint, r clipRect, edge int) pathPoint {
	switch edge {
	case 0, 1:
		x := r.x0
		if edge == 1 {
			x = r.x1
		}
		t := (x - a.x) / (b.x - a.x)
		return pathPoint{x, a.y + t*(b.y-a.y)}
	default:
		y := r.y0
		if edge == 3 {
			y = r.y1
		}
		t := (y - a.y) / (b.y - a.y)
		return pathPoint{a.x + t*(b.x-a.x), y}
	}
}

// clipSegment clips a→b to r (Liang–Barsky).
func clipSegment(a, b pathPoint, r clipRect) (pathPoint, pathPoint, bool) {
	t0, t1 := 0.0, 1.0
	dx, dy := b.x-a.x, b.y-a.y
	for _, c := range [4][2]float64{{-dx, a.x - r.x0}, {dx, r.x1 - a.x}, {-dy, a.y - r.y0}, {dy, r.y1 - a.y}} {
		p, q := c[0], c[1]
		if p == 0 {
			if q < 0 {
				return a, b, false
			}
			continue
		}
		t := q / p
		if p < 0 {
			if t > t1 {
				return a, b, false
			}
			t0 = max(t0, t)
		} else {
			if t < t0 {
				return a, b, false
			}
			t1 = min(t1, t)
		}
	}
	ca, cb := a, b
	if t0 > 0 {
		ca = pathPoint{a.x + t0*dx, a.y + t0*dy}
	}
	if t1 < 1 {
		cb = pathPoint{a.x + t1*dx, a.y + t1*dy}
	}
	return ca, cb, true
}
