package render

import (
	"iter"
	"math"
)

// interiorPoint returns a point well inside the polygon made of rings (exterior first, holes after):
// an approximation of its pole of inaccessibility, the interior point farthest from the outline, found
// to within precision pixels by subdividing square cells best-first. It also returns the distance from
// that point to the outline. Unlike a centroid, it is always inside the polygon.
// q is scratch space.
func interiorPoint(pts []pathPoint, rings []subpath, precision float64, q *cellQueue) (pathPoint, float64) {
	if len(rings) == 0 {
		return pathPoint{}, 0
	}
	ext := pts[rings[0].start:rings[0].end]
	x0, y0, x1, y1 := ext[0].x, ext[0].y, ext[0].x, ext[0].y
	for _, p := range ext {
		x0, x1 = min(x0, p.x), max(x1, p.x)
		y0, y1 = min(y0, p.y), max(y1, p.y)
	}
	w, h := x1-x0, y1-y0
	size := min(w, h)
	// Relative precision is enough for big polygons: a label is many pixels wide anyway.
	precision = max(precision, size/32)
	if size <= precision {
		return pathPoint{(x0 + x1) / 2, (y0 + y1) / 2}, 0
	}
	dist := func(x, y float64) float64 { return ringsDistance(pts, rings, x, y) }

	*q = (*q)[:0]
	half := size / 2
	for x := x0; x < x1; x += size {
		for y := y0; y < y1; y += size {
			q.push(newCell(x+half, y+half, half, dist))
		}
	}
	// Start from the area centroid and the bbox centre, whichever is better.
	best := centroidCell(ext, dist)
	if c := newCell(x0+w/2, y0+h/2, 0, dist); c.d > best.d {
		best = c
	}
	for n := 0; len(*q) > 0 && n < 256; n++ {
		c := q.pop()
		if c.d > best.d {
			best = c
		}
		if c.max-best.d <= precision {
			continue
		}
		h := c.h / 2
		q.push(newCell(c.x-h, c.y-h, h, dist))
		q.push(newCell(c.x+h, c.y-h, h, dist))
		q.push(newCell(c.x-h, c.y+h, h, dist))
		q.push(newCell(c.x+h, c.y+h, h, dist))
	}
	return pathPoint{best.x, best.y}, best.d
}

type cell struct {
	x, y, h float64 // centre, half size
	d       float64 // signed distance from the centre to the outline (positive inside)
	max     float64 // upper bound of the distance within the cell
}

func newCell(x, y, h float64, dist func(x, y float64) float64) cell {
	d := dist(x, y)
	return cell{x: x, y: y, h: h, d: d, max: d + h*math.Sqrt2}
}

func centroidCell(ring []pathPoint, dist func(x, y float64) float64) cell {
	var a, cx, cy float64
	j := len(ring) - 1
	for i := range ring {
		p, q := ring[i], ring[j]
		f := p.x*q.y - q.x*p.y
		cx += (p.x + q.x) * f
		cy += (p.y + q.y) * f
		a += f * 3
		j = i
	}
	if a == 0 {
		return newCell(ring[0].x, ring[0].y, 0, dist)
	}
	return newCell(cx/a, cy/a, 0, dist)
}

// cellQueue is a max-heap of cells by their bound.
type cellQueue []cell

func (q *cellQueue) push(c cell) {
	*q = append(*q, c)
	h := *q
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if h[p].max >= h[i].max {
			break
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func (q *cellQueue) pop() cell {
	h := *q
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < n && h[l].max > h[m].max {
			m = l
		}
		if r < n && h[r].max > h[m].max {
			m = r
		}
		if m == i {
			break
		}
		h[m], h[i] = h[i], h[m]
		i = m
	}
	*q = h
	return top
}

// ringsDistance is the signed distance from (x, y) to the rings' outline: positive inside (even-odd
// rule), negative outside.
func ringsDistance(pts []pathPoint, rings []subpath, x, y float64) float64 {
	in := false
	d2 := math.Inf(1)
	for a, b := range ringEdges(pts, rings) {
		if crossesRightOf(a, b, x, y) {
			in = !in
		}
		d2 = min(d2, segDist2(x, y, a, b))
	}
	d := math.Sqrt(d2)
	if in {
		return d
	}
	return -d
}

// pointInRings reports whether (x, y) is inside the rings (even-odd rule).
func pointInRings(pts []pathPoint, rings []subpath, x, y float64) bool {
	in := false
	for a, b := range ringEdges(pts, rings) {
		if crossesRightOf(a, b, x, y) {
			in = !in
		}
	}
	return in
}

// ringEdges yields every edge (a, b) of the closed rings, each ring's closing edge first.
func ringEdges(pts []pathPoint, rings []subpath) iter.Seq2[pathPoint, pathPoint] {
	return func(yield func(a, b pathPoint) bool) {
		for _, r := range rings {
			ring := pts[r.start:r.end]
			j := len(ring) - 1
			for i := range ring {
				if !yield(ring[i], ring[j]) {
					return
				}
				j = i
			}
		}
	}
}

// crossesRightOf reports whether the edge (a, b) crosses the ray from (x, y) to the right: the
// even-odd test's step.
func crossesRightOf(a, b pathPoint, x, y float64) bool {
	return (a.y > y) != (b.y > y) && x < (b.x-a.x)*(y-a.y)/(b.y-a.y)+a.x
}

func segDist2(x, y float64, a, b pathPoint) float64 {
	dx, dy := b.x-a.x, b.y-a.y
	px, py := a.x, a.y
	if dx != 0 || dy != 0 {
		t := ((x-a.x)*dx + (y-a.y)*dy) / (dx*dx + dy*dy)
		if t > 1 {
			px, py = b.x, b.y
		} else if t > 0 {
			px, py = a.x+dx*t, a.y+dy*t
		}
	}
	dx, dy = x-px, y-py
	return dx*dx + dy*dy
}
