package render

import (
	"cmp"
	"math"
	"slices"
)

type labelKind int

const (
	labelPolygon labelKind = iota
	labelLine
	labelPoint
)

// labelCand is a label waiting for placement, with its anchor in pixels.
type labelCand struct {
	text     string
	style    TextStyle
	kind     labelKind
	x, y     float64
	offset   float64 // point labels: distance from the point
	priority int
	weight   float64 // area or length in pixels: bigger features are placed first
	overlap  bool
	angle    float64 // line labels: direction of the baseline in radians, on screen (y down)
	// The visible polygon part (image-clipped rings) in the owning labeller's buffer, so a polygon
	// label cut by the image edge can be moved inside while its centre stays in the polygon.
	ringStart, ringEnd int
}

// labeller collects label candidates while layers are drawn and places them afterwards.
type labeller struct {
	cands  []labelCand
	pts    []pathPoint // polygon label rings, referenced by subs
	subs   []subpath
	placed []labelBox
	clip   []pathPoint
	clip2  []pathPoint
	simp   []pathPoint
	queue  cellQueue
}

// ringInside reports whether every point of ring is inside r.
func ringInside(ring []pathPoint, r clipRect) bool {
	for _, p := range ring {
		if p.x < r.x0 || p.y < r.y0 || p.x > r.x1 || p.y > r.y1 {
			return false
		}
	}
	return true
}

type labelBox struct{ x0, y0, x1, y1 float64 }

func (b labelBox) overlaps(o labelBox) bool {
	return b.x0 < o.x1 && o.x0 < b.x1 && b.y0 < o.y1 && o.y0 < b.y1
}

func (lb *labeller) reset() {
	lb.cands, lb.pts, lb.subs, lb.placed = lb.cands[:0], lb.pts[:0], lb.subs[:0], lb.placed[:0]
}

// addPolygon adds a label for the largest part among path.polys[firstPoly:], at an interior point of
// that part's area inside the image.
func (lb *labeller) addPolygon(c labelCand, path *pixelPath, firstPoly int, img clipRect) {
	best, bestA := -1, 0.0
	for i := firstPoly; i < len(path.polys); i++ {
		pr := path.polys[i]
		ext := path.subs[pr.first]
		if a := math.Abs(signedArea(path.pts[ext.start:ext.end])) / 2; a > bestA {
			best, bestA = i, a
		}
	}
	if best < 0 {
		return
	}
	pr := path.polys[best]
	ringStart := len(lb.subs)
	// Coarser outlines are plenty to find a label point: decimate to about 1/12 of the part's size.
	tol := max(1.5, math.Sqrt(bestA)/12)
	for k := pr.first; k < pr.first+pr.n; k++ {
		sp := path.subs[k]
		ring := path.pts[sp.start:sp.end]
		if !ringInside(ring, img) {
			lb.clip, lb.clip2 = clipPolygon(lb.clip[:0], lb.clip2[:0], ring, img)
			ring = lb.clip
		}
		lb.simp = decimate(lb.simp[:0], ring, tol)
		if len(lb.simp) < 3 && k == pr.first {
			lb.simp = append(lb.simp[:0], ring...)
		}
		if len(lb.simp) < 3 {
			if k == pr.first {
				lb.subs = lb.subs[:ringStart]
				return
			}
			continue
		}
		start := len(lb.pts)
		lb.pts = append(lb.pts, lb.simp...)
		lb.subs = append(lb.subs, subpath{start: start, end: len(lb.pts), closed: true})
	}
	rings := lb.subs[ringStart:]
	if len(rings) == 0 {
		return
	}
	ext := lb.pts[rings[0].start:rings[0].end]
	area := math.Abs(signedArea(ext)) / 2
	var p pathPoint
	if area < 4 {
		// Too small to search: the middle of its box is as good as any point.
		x0, y0, x1, y1 := ext[0].x, ext[0].y, ext[0].x, ext[0].y
		for _, q := range ext {
			x0, x1, y0, y1 = min(x0, q.x), max(x1, q.x), min(y0, q.y), max(y1, q.y)
		}
		p = pathPoint{(x0 + x1) / 2, (y0 + y1) / 2}
	} else {
		p, _ = interiorPoint(lb.pts, rings, 1, &lb.queue)
	}
	c.kind, c.x, c.y, c.weight = labelPolygon, p.x, p.y, area
	c.ringStart, c.ringEnd = ringStart, len(lb.subs)
	lb.cands = append(lb.cands, c)
}

// addLine adds a label at the middle of the longest line among path.subs[firstSub:].
func (lb *labeller) addLine(c labelCand, path *pixelPath, firstSub int, img clipRect) {
	best, bestL := -1, 0.0
	for i := firstSub; i < len(path.subs); i++ {
		sp := path.subs[i]
		if l := lineLength(path.pts[sp.start:sp.end]); l > bestL {
			best, bestL = i, l
		}
	}
	if best < 0 {
		return
	}
	sp := path.subs[best]
	line := path.pts[sp.start:sp.end]
	half, acc := bestL/2, 0.0
	for i := 0; i+1 < len(line); i++ {
		a, b := line[i], line[i+1]
		l := math.Hypot(b.x-a.x, b.y-a.y)
		if acc+l >= half && l > 0 {
			t := (half - acc) / l
			c.x, c.y = a.x+t*(b.x-a.x), a.y+t*(b.y-a.y)
			break
		}
		acc += l
	}
	if c.x < img.x0 || c.x > img.x1 || c.y < img.y0 || c.y > img.y1 {
		return
	}
	// The label follows the line's general direction around its middle, kept upright.
	p0, p1 := pointAlong(line, max(0, half-20)), pointAlong(line, min(bestL, half+20))
	if dx, dy := p1.x-p0.x, p1.y-p0.y; dx != 0 || dy != 0 {
		if dx < 0 {
			dx, dy = -dx, -dy
		}
		c.angle = math.Atan2(dy, dx)
	}
	c.kind, c.weight = labelLine, bestL
	lb.cands = append(lb.cands, c)
}

// pointAlong returns the point at distance d along line.
func pointAlong(line []pathPoint, d float64) pathPoint {
	acc := 0.0
	for i := 0; i+1 < len(line); i++ {
		a, b := line[i], line[i+1]
		l := math.Hypot(b.x-a.x, b.y-a.y)
		if acc+l >= d && l > 0 {
			t := (d - acc) / l
			return pathPoint{a.x + t*(b.x-a.x), a.y + t*(b.y-a.y)}
		}
		acc += l
	}
	return line[len(line)-1]
}

// addPoint adds a label beside the point (x, y).
func (lb *labeller) addPoint(c labelCand, x, y float64) {
	c.kind, c.x, c.y = labelPoint, x, y
	lb.cands = append(lb.cands, c)
}

// place draws the labels that fit: highest priority first, then largest feature first; each label
// inside the image and, unless it allows overlap, clear of every label placed before it.
func (lb *labeller) place(s Surface, width, height int) {
	slices.SortStableFunc(lb.cands, func(a, b labelCand) int {
		if a.priority != b.priority {
			return cmp.Compare(b.priority, a.priority)
		}
		return cmp.Compare(b.weight, a.weight)
	})
	W, H := float64(width), float64(height)
	for i := range lb.cands {
		c := &lb.cands[i]
		m := s.MeasureText(c.text, c.style)
		if m.Width <= 0 {
			continue
		}
		pad := 0.0
		if c.style.Halo.A > 0 {
			pad = c.style.HaloWidth
		}
		// Box of text whose baseline starts at (tx, ty).
		box := func(tx, ty float64) labelBox {
			return labelBox{tx - pad, ty - m.Ascent - pad, tx + m.Width + pad, ty + m.Descent + pad}
		}
		capH := m.Ascent - m.Descent // point labels centre the ink box on the anchor row
		fits := func(b labelBox) bool {
			if !(b.x0 >= 0 && b.y0 >= 0 && b.x1 <= W && b.y1 <= H) { // false for NaN too
				return false
			}
			if c.overlap {
				return true
			}
			for _, o := range lb.placed {
				if b.overlaps(o) {
					return false
				}
			}
			return true
		}
		var tx, ty float64
		ok := false
		style := c.style
		switch {
		case c.kind == labelLine && math.Abs(c.angle) > 0.02:
			// Rotated along the line: the baseline starts half a width back along the direction and
			// the ink is centred on the anchor; collisions use the rotated box's bounding box.
			cos, sin := math.Cos(c.angle), math.Sin(c.angle)
			nx, ny := sin, -cos // "up" for the text
			mid := (m.Ascent - m.Descent) / 2
			tx = c.x - cos*m.Width/2 - nx*mid
			ty = c.y - sin*m.Width/2 - ny*mid
			b := labelBox{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
			for _, along := range [2]float64{-pad, m.Width + pad} {
				for _, up := range [2]float64{-m.Descent - pad, m.Ascent + pad} {
					x, y := tx+cos*along+nx*up, ty+sin*along+ny*up
					b = labelBox{min(b.x0, x), min(b.y0, y), max(b.x1, x), max(b.y1, y)}
				}
			}
			if ok = fits(b); ok {
				style.Angle = -c.angle * 180 / math.Pi
				lb.placed = append(lb.placed, b)
				s.Text(c.text, tx, ty, style)
			}
			continue
		case c.kind == labelPoint:
			off := c.offset
			for _, d := range [...][2]float64{{1, 0}, {1, -1}, {1, 1}, {-1, 0}, {-1, -1}, {-1, 1}, {0, -1}, {0, 1}} {
				tx = c.x + d[0]*off - m.Width/2 + d[0]*m.Width/2
				ty = c.y + capH/2 + d[1]*(off+capH/2+pad)
				if d[0] != 0 && d[1] != 0 {
					ty = c.y + capH/2 + d[1]*(off*0.7+capH/2)
					tx = c.x + d[0]*off*0.7 - m.Width/2 + d[0]*m.Width/2
				}
				if ok = fits(box(tx, ty)); ok {
					break
				}
			}
		default:
			// The anchor first, then nearby positions whose centre stays inside the polygon; a label cut
			// by the image edge is moved inside if its centre stays in the polygon.
			th := m.Ascent + m.Descent
			// Offsets tried, in label widths and heights.
			shifts := [...][2]float64{{0, 0}, {-0.25, 0}, {0.25, 0}, {0, -1}, {0, 1}, {-0.25, -1}, {0.25, -1}, {-0.25, 1}, {0.25, 1}, {-0.5, 0}, {0.5, 0}}
			for k, d := range shifts {
				dx, dy := d[0]*m.Width, d[1]*th
				if k > 0 && (c.kind != labelPolygon || !pointInRings(lb.pts, lb.subs[c.ringStart:c.ringEnd], c.x+dx, c.y+dy)) {
					continue
				}
				tx, ty = c.x+dx-m.Width/2, c.y+dy+(m.Ascent-m.Descent)/2
				b := box(tx, ty)
				if ex, ey := shiftInside(b.x0, b.x1, W), shiftInside(b.y0, b.y1, H); ex != 0 || ey != 0 {
					if c.kind == labelPolygon && pointInRings(lb.pts, lb.subs[c.ringStart:c.ringEnd], c.x+dx+ex, c.y+dy+ey) {
						tx, ty = tx+ex, ty+ey
						b = box(tx, ty)
					}
				}
				if ok = fits(b); ok {
					break
				}
			}
		}
		if !ok {
			continue
		}
		lb.placed = append(lb.placed, box(tx, ty))
		s.Text(c.text, tx, ty, c.style)
	}
}

// shiftInside returns how far to move [lo, hi] to fit in [0, size], or 0 if it cannot fit.
func shiftInside(lo, hi, size float64) float64 {
	switch {
	case hi-lo > size:
		return 0
	case lo < 0:
		return -lo
	case hi > size:
		return size - hi
	}
	return 0
}

func lineLength(pts []pathPoint) float64 {
	var l float64
	for i := 0; i+1 < len(pts); i++ {
		l += math.Hypot(pts[i+1].x-pts[i].x, pts[i+1].y-pts[i].y)
	}
	return l
}

// decimate drops vertices closer than tol to the last kept one.
func decimate(dst, pts []pathPoint, tol float64) []pathPoint {
	t2 := tol * tol
	for i, p := range pts {
		if i > 0 && i < len(pts)-1 {
			l := dst[len(dst)-1]
			if dx, dy := p.x-l.x, p.y-l.y; dx*dx+dy*dy < t2 {
				continue
			}
		}
		dst = append(dst, p)
	}
	return dst
}
