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
	text  string
	style TextStyle
	kind  labelKind
	x, y  float64
	// offset: point labels, the distance from the point; line labels above or below the line, the
	// gap between the line and the ink; polygon labels placed outside, the distance from the anchor.
	offset   float64
	repeat   float64 // line labels: the repeat distance in pixels, 0 for one label
	angle    float64 // polygon labels turned to the polygon's main direction: degrees anticlockwise
	place    *LabelPlacement
	layer    int // the labeller's number for the layer, for RemoveDuplicates
	priority int
	weight   float64 // area or length in pixels: bigger features are placed first
	overlap  bool
	// Polygons: the visible part (image-clipped rings) in the owning labeller's buffer, so a polygon
	// label cut by the image edge can be moved inside while its centre stays in the polygon. Lines:
	// the line (one subpath) the label follows.
	ringStart, ringEnd int
}

// labeller collects label candidates while layers are drawn and places them afterwards.
type labeller struct {
	cands []labelCand
	pts   []pathPoint // polygon label rings and label lines, referenced by subs
	subs  []subpath
	// placed holds the boxes of the labels drawn so far (one per glyph for line labels), owner the
	// index of the label each belongs to, grid indexes them for collision tests.
	placed []labelBox
	owner  []int
	grid   boxGrid
	clip   []pathPoint
	clip2  []pathPoint
	simp   []pathPoint
	queue  cellQueue
	// line labels
	cum   []float64 // distance along the line at each vertex
	adv   []float64 // advance of each character
	run   []Glyph
	boxes []labelBox
	// layers counts the layers that added labels (labelCand.layer); seen holds the texts placed
	// per layer, for RemoveDuplicates.
	layers int
	seen   map[dupKey]struct{}
}

// dupKey is a label text placed by a layer.
type dupKey struct {
	layer int
	text  string
}

// placement returns the candidate's placement options (the zero value when its style has none).
func (c *labelCand) placement() LabelPlacement {
	if c.place == nil {
		return LabelPlacement{}
	}
	return *c.place
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
	lb.cands, lb.pts, lb.subs, lb.placed, lb.owner = lb.cands[:0], lb.pts[:0], lb.subs[:0], lb.placed[:0], lb.owner[:0]
	lb.layers = 0
	clear(lb.seen)
}

// nextLayer returns the number of the next layer that adds labels.
func (lb *labeller) nextLayer() int {
	lb.layers++
	return lb.layers
}

// boxGrid indexes label boxes by the cells of a uniform grid over the image they touch, so a
// collision test looks at nearby boxes only (line labels add a box per glyph).
type boxGrid struct {
	nx, ny int
	cells  [][]int32 // indexes into the boxes
}

// gridCell is the side of a boxGrid cell in pixels.
const gridCell = 64

func (g *boxGrid) reset(width, height int) {
	g.nx, g.ny = max(1, (width+gridCell-1)/gridCell), max(1, (height+gridCell-1)/gridCell)
	n := g.nx * g.ny
	if cap(g.cells) < n {
		g.cells = make([][]int32, n)
	}
	g.cells = g.cells[:n]
	for i := range g.cells {
		g.cells[i] = g.cells[i][:0]
	}
}

// span returns the cells b touches (b is inside the image).
func (g *boxGrid) span(b labelBox) (cx0, cy0, cx1, cy1 int) {
	cell := func(v float64, n int) int { return max(0, min(n-1, int(v)/gridCell)) }
	return cell(b.x0, g.nx), cell(b.y0, g.ny), cell(b.x1, g.nx), cell(b.y1, g.ny)
}

// hits reports whether b overlaps any of boxes indexed.
func (g *boxGrid) hits(b labelBox, boxes []labelBox) bool {
	cx0, cy0, cx1, cy1 := g.span(b)
	for cy := cy0; cy <= cy1; cy++ {
		for _, cell := range g.cells[cy*g.nx+cx0 : cy*g.nx+cx1+1] {
			for _, j := range cell {
				if b.overlaps(boxes[j]) {
					return true
				}
			}
		}
	}
	return false
}

// add indexes boxes[i].
func (g *boxGrid) add(i int, b labelBox) {
	cx0, cy0, cx1, cy1 := g.span(b)
	for cy := cy0; cy <= cy1; cy++ {
		for cx := cx0; cx <= cx1; cx++ {
			g.cells[cy*g.nx+cx] = append(g.cells[cy*g.nx+cx], int32(i))
		}
	}
}

// addBox records a placed box of label owner.
func (lb *labeller) addBox(b labelBox, owner int) {
	lb.grid.add(len(lb.placed), b)
	lb.placed = append(lb.placed, b)
	lb.owner = append(lb.owner, owner)
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
	if c.place != nil && c.place.PolygonOutside {
		// Placed outside, the label keeps c.offset clear of the part's box on the side it is on.
		x0, y0, x1, y1 := ext[0].x, ext[0].y, ext[0].x, ext[0].y
		for _, q := range ext {
			x0, x1, y0, y1 = min(x0, q.x), max(x1, q.x), min(y0, q.y), max(y1, q.y)
		}
		c.offset += max(x1-x0, y1-y0) / 2
	}
	c.kind, c.x, c.y, c.weight = labelPolygon, p.x, p.y, area
	c.ringStart, c.ringEnd = ringStart, len(lb.subs)
	if c.place != nil && c.place.PolygonStraight {
		c.angle = mainDirection(ext)
	}
	lb.cands = append(lb.cands, c)
}

// addLine adds a label along the longest line among path.subs[firstSub:], or along each of them
// when the placement labels every part; its position is chosen when labels are placed.
func (lb *labeller) addLine(c labelCand, path *pixelPath, firstSub int) {
	best, bestL := -1, 0.0
	for i := firstSub; i < len(path.subs); i++ {
		sp := path.subs[i]
		l := lineLength(path.pts[sp.start:sp.end])
		if c.place != nil && c.place.LineAllParts && l > 0 {
			lb.addLinePart(c, path, i, l)
			continue
		}
		if l > bestL {
			best, bestL = i, l
		}
	}
	if best >= 0 {
		lb.addLinePart(c, path, best, bestL)
	}
}

// addLinePart adds a label along path.subs[i], of length l.
func (lb *labeller) addLinePart(c labelCand, path *pixelPath, i int, bestL float64) {
	sp := path.subs[i]
	start := len(lb.pts)
	lb.pts = append(lb.pts, path.pts[sp.start:sp.end]...)
	// Glyphs follow the line's general shape, not its pixel-level wiggles.
	lb.pts = append(lb.pts[:start], simplifyLine(lb.pts[start:], lineLabelTol)...)
	lb.subs = append(lb.subs, subpath{start: start, end: len(lb.pts)})
	c.kind, c.weight = labelLine, bestL
	c.ringStart, c.ringEnd = len(lb.subs)-1, len(lb.subs)
	lb.cands = append(lb.cands, c)
}

// addPoint adds a label beside the point (x, y).
func (lb *labeller) addPoint(c labelCand, x, y float64) {
	c.kind, c.x, c.y = labelPoint, x, y
	lb.cands = append(lb.cands, c)
}

// place draws the labels that fit: highest priority first, then largest feature first; each label
// inside the image and, unless it allows overlap, clear of every label placed before it. fonts gives
// the glyph advances of line labels (the surfaces measure with the same fonts).
func (lb *labeller) place(s Surface, fonts *Fonts, width, height int) {
	slices.SortStableFunc(lb.cands, func(a, b labelCand) int {
		if a.priority != b.priority {
			return cmp.Compare(b.priority, a.priority)
		}
		return cmp.Compare(b.weight, a.weight)
	})
	lb.grid.reset(width, height)
	W, H := float64(width), float64(height)
	for i := range lb.cands {
		c := &lb.cands[i]
		pl := c.placement()
		if pl.RemoveDuplicates {
			if _, dup := lb.seen[dupKey{c.layer, c.text}]; dup {
				continue
			}
		}
		m := s.MeasureText(c.text, c.style)
		if m.Width <= 0 {
			continue
		}
		pad := 0.0
		if c.style.Halo.A > 0 {
			pad = c.style.HaloWidth
		}
		var ok bool
		switch c.kind {
		case labelLine:
			ok = lb.placeLine(s, fonts, c, i, m, pad, W, H)
		case labelPoint:
			ok = lb.placePoint(s, c, i, pl.Points, m, pad, W, H)
		default:
			ok = lb.placePolygon(s, c, i, m, pad, W, H)
			if !ok && pl.PolygonOutside {
				ok = lb.placePoint(s, c, i, nil, m, pad, W, H)
			}
		}
		if ok && pl.RemoveDuplicates {
			if lb.seen == nil {
				lb.seen = map[dupKey]struct{}{}
			}
			lb.seen[dupKey{c.layer, c.text}] = struct{}{}
		}
	}
}

// textBox is the box of text of metrics m whose baseline starts at (tx, ty), grown by pad.
func textBox(m TextMetrics, pad, tx, ty float64) labelBox {
	return labelBox{tx - pad, ty - m.Ascent - pad, tx + m.Width + pad, ty + m.Descent + pad}
}

// fits reports whether b is inside the W×H image and, unless c allows overlap, clear of the labels
// placed so far.
func (lb *labeller) fits(c *labelCand, b labelBox, W, H float64) bool {
	if !(b.x0 >= 0 && b.y0 >= 0 && b.x1 <= W && b.y1 <= H) { // false for NaN too
		return false
	}
	return c.overlap || !lb.grid.hits(b, lb.placed)
}

// pointOffsets are the directions of the point positions (x right, y down).
var pointOffsets = [...][2]float64{
	PointRight: {1, 0}, PointAboveRight: {1, -1}, PointBelowRight: {1, 1},
	PointLeft: {-1, 0}, PointAboveLeft: {-1, -1}, PointBelowLeft: {-1, 1},
	PointAbove: {0, -1}, PointBelow: {0, 1}, PointCenter: {0, 0},
}

// defaultPointPositions are tried for point labels whose placement lists none.
var defaultPointPositions = [...]PointPosition{PointRight, PointAboveRight, PointBelowRight, PointLeft, PointAboveLeft, PointBelowLeft, PointAbove, PointBelow}

// placePoint places a label at the first of positions (the default ones when empty) around its
// anchor that fits, c.offset from it: beside it centred on its row, diagonally with the corner of
// the text c.offset·0.7 away on each axis, above or below it centred, or centred on it.
func (lb *labeller) placePoint(s Surface, c *labelCand, owner int, positions []PointPosition, m TextMetrics, pad, W, H float64) bool {
	if len(positions) == 0 {
		positions = defaultPointPositions[:]
	}
	capH := m.Ascent - m.Descent // point labels centre the ink box on the anchor row
	off := c.offset
	for _, p := range positions {
		if p < 0 || int(p) >= len(pointOffsets) {
			continue
		}
		d := pointOffsets[p]
		tx := c.x + d[0]*off - m.Width/2 + d[0]*m.Width/2
		ty := c.y + capH/2 + d[1]*(off+capH/2+pad)
		if d[0] != 0 && d[1] != 0 {
			ty = c.y + capH/2 + d[1]*(off*0.7+capH/2)
			tx = c.x + d[0]*off*0.7 - m.Width/2 + d[0]*m.Width/2
		}
		if b := textBox(m, pad, tx, ty); lb.fits(c, b, W, H) {
			lb.addBox(b, owner)
			s.Text(c.text, tx, ty, c.style)
			return true
		}
	}
	return false
}

// placePolygon places a polygon label at its anchor, or nearby positions whose centre stays inside
// the polygon; a label cut by the image edge is moved inside if its centre stays in the polygon.
// A label turned to the polygon's main direction (c.angle) is tried at the anchor and along that
// direction.
func (lb *labeller) placePolygon(s Surface, c *labelCand, owner int, m TextMetrics, pad, W, H float64) bool {
	rings := lb.subs[c.ringStart:c.ringEnd]
	if c.angle != 0 {
		return lb.placeTurned(s, c, owner, rings, m, pad, W, H)
	}
	th := m.Ascent + m.Descent
	// Offsets tried, in label widths and heights.
	shifts := [...][2]float64{{0, 0}, {-0.25, 0}, {0.25, 0}, {0, -1}, {0, 1}, {-0.25, -1}, {0.25, -1}, {-0.25, 1}, {0.25, 1}, {-0.5, 0}, {0.5, 0}}
	for k, d := range shifts {
		dx, dy := d[0]*m.Width, d[1]*th
		if k > 0 && !pointInRings(lb.pts, rings, c.x+dx, c.y+dy) {
			continue
		}
		tx, ty := c.x+dx-m.Width/2, c.y+dy+(m.Ascent-m.Descent)/2
		b := textBox(m, pad, tx, ty)
		if ex, ey := shiftInside(b.x0, b.x1, W), shiftInside(b.y0, b.y1, H); ex != 0 || ey != 0 {
			if pointInRings(lb.pts, rings, c.x+dx+ex, c.y+dy+ey) {
				tx, ty = tx+ex, ty+ey
				b = textBox(m, pad, tx, ty)
			}
		}
		if lb.fits(c, b, W, H) {
			lb.addBox(b, owner)
			s.Text(c.text, tx, ty, c.style)
			return true
		}
	}
	return false
}

// placeTurned places a polygon label turned by c.angle, its ink centred on the anchor or on points
// a quarter or half of its width along its direction that stay inside the polygon. Its box for
// collisions is the bounding box of the turned text.
func (lb *labeller) placeTurned(s Surface, c *labelCand, owner int, rings []subpath, m TextMetrics, pad, W, H float64) bool {
	sin, cos := sincosDeg(c.angle)
	// On screen (y down) the baseline runs along u = (cos, -sin); the glyphs' up is n = (-sin, -cos).
	ux, uy, nx, ny := cos, -sin, -sin, -cos
	mid := (m.Ascent - m.Descent) / 2
	for k, f := range [...]float64{0, -0.25, 0.25, -0.5, 0.5} {
		cx, cy := c.x+ux*f*m.Width, c.y+uy*f*m.Width
		if k > 0 && !pointInRings(lb.pts, rings, cx, cy) {
			continue
		}
		ox, oy := cx-ux*m.Width/2-nx*mid, cy-uy*m.Width/2-ny*mid
		b := labelBox{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
		for _, along := range [2]float64{-pad, m.Width + pad} {
			for _, up := range [2]float64{-m.Descent - pad, m.Ascent + pad} {
				x, y := ox+ux*along+nx*up, oy+uy*along+ny*up
				b = labelBox{min(b.x0, x), min(b.y0, y), max(b.x1, x), max(b.y1, y)}
			}
		}
		if lb.fits(c, b, W, H) {
			lb.addBox(b, owner)
			st := c.style
			st.Angle = c.angle
			s.Text(c.text, ox, oy, st)
			return true
		}
	}
	return false
}

// mainDirection returns the direction of a ring's longest axis (the principal axis of its outline,
// each edge weighted by its length), in degrees anticlockwise on screen within (-90, 90], so text
// along it reads left to right.
func mainDirection(ring []pathPoint) float64 {
	var sw, mx, my float64
	for i := range ring {
		a, b := ring[i], ring[(i+1)%len(ring)]
		w := math.Hypot(b.x-a.x, b.y-a.y)
		sw, mx, my = sw+w, mx+w*(a.x+b.x)/2, my+w*(a.y+b.y)/2
	}
	if sw <= 0 {
		return 0
	}
	mx, my = mx/sw, my/sw
	var sxx, syy, sxy float64
	for i := range ring {
		a, b := ring[i], ring[(i+1)%len(ring)]
		w := math.Hypot(b.x-a.x, b.y-a.y)
		x, y := (a.x+b.x)/2-mx, (a.y+b.y)/2-my
		sxx, syy, sxy = sxx+w*x*x, syy+w*y*y, sxy+w*x*y
	}
	theta := 0.5 * math.Atan2(2*sxy, sxx-syy) // screen angle, y down
	deg := -theta * 180 / math.Pi
	if deg <= -90 {
		deg += 180
	} else if deg > 90 {
		deg -= 180
	}
	if math.Abs(deg) < 0.5 {
		return 0 // drawn as a horizontal label
	}
	return deg
}

// Line label placement.
const (
	// lineLabelTol generalises label lines (pixels) so glyphs follow the line's shape, not its noise.
	lineLabelTol = 1.0
	// maxGlyphTurn is the largest change of direction between consecutive glyphs of a line label
	// (radians, 30°); a position where the line bends more is not used.
	maxGlyphTurn = math.Pi / 6
	// maxLineCandidates bounds the positions tried along one line.
	maxLineCandidates = 24
	// straightTurn is the largest difference of direction (radians) over a whole label still drawn
	// as straight text.
	straightTurn = 0.01
)

// maxLineRepeats bounds the labels one line gets when its label repeats.
const maxLineRepeats = 64

// placeLine places a line label along its line: each glyph at its own position and angle (or all on
// one straight or horizontal baseline), on the line or beside it, reading left to right. A position
// is used when the line is long enough, bends less than maxGlyphTurn between glyphs (curved
// labels) or stays near the text (straight ones), every glyph's box is inside the image and (unless
// the label allows overlap) clear of the labels placed before. The anchor (the middle of the line's
// visible part, or its start or end) is tried first, then positions further away from it; a
// repeating label is placed the same way once per stretch of its repeat distance. It reports
// whether a label was placed.
func (lb *labeller) placeLine(s Surface, fonts *Fonts, c *labelCand, owner int, m TextMetrics, pad, W, H float64) bool {
	sp := lb.subs[c.ringStart]
	line := lb.pts[sp.start:sp.end]
	if len(line) < 2 {
		return false
	}
	lb.cum = append(lb.cum[:0], 0)
	for i := 1; i < len(line); i++ {
		lb.cum = append(lb.cum, lb.cum[i-1]+math.Hypot(line[i].x-line[i-1].x, line[i].y-line[i-1].y))
	}
	total := lb.cum[len(lb.cum)-1]
	lb.adv = fonts.face(c.style).advances(lb.adv[:0], c.text)
	L := 0.0
	for _, a := range lb.adv {
		L += a
	}
	if L <= 0 || L > total {
		return false
	}
	// The visible part of the line, as distances along it.
	img := clipRect{0, 0, W, H}
	vis0, vis1 := math.Inf(1), math.Inf(-1)
	for i := 0; i+1 < len(line); i++ {
		a, b := line[i], line[i+1]
		if ca, cb, ok := clipSegment(a, b, img); ok {
			vis0 = min(vis0, lb.cum[i]+math.Hypot(ca.x-a.x, ca.y-a.y))
			vis1 = max(vis1, lb.cum[i]+math.Hypot(cb.x-a.x, cb.y-a.y))
		}
	}
	if vis1-vis0 < L {
		return false
	}
	pl := c.placement()
	// The label's middle can be anywhere in [lo, hi].
	lo, hi := vis0+L/2, vis1-L/2
	anchor, dir := (lo+hi)/2, 0.0
	switch pl.LineAnchor {
	case LineStart:
		anchor, dir = lo, 1
	case LineEnd:
		anchor, dir = hi, -1
	}
	if c.repeat <= 0 {
		return lb.lineNear(s, line, c, owner, anchor, lo, hi, dir, L, m, pad, W, H)
	}
	// One label per stretch of the repeat distance (at least the label's length plus a third) of
	// the range of its middle: stretches centred on the anchor and going outwards from it, or from
	// the start or the end onwards.
	R := max(c.repeat, L*4/3)
	placed := false
	if dir == 0 {
		for k := 0; k < 2*maxLineRepeats; k++ {
			j := float64((k + 1) / 2)
			if k%2 == 0 {
				j = -j
			}
			if math.Abs(j)*R-R/2 > (hi-lo)/2 {
				break
			}
			centre := anchor + j*R
			w0, w1 := max(lo, centre-R/2), min(hi, centre+R/2)
			if w0 <= w1 && lb.lineNear(s, line, c, owner, max(w0, min(w1, centre)), w0, w1, 0, L, m, pad, W, H) {
				placed = true
			}
		}
		return placed
	}
	for j := range maxLineRepeats {
		w0, w1 := lo+float64(j)*R, min(hi, lo+float64(j+1)*R)
		from := w0
		if dir < 0 {
			w0, w1 = max(lo, hi-float64(j+1)*R), hi-float64(j)*R
			from = w1
		}
		if w0 > w1 {
			break
		}
		if lb.lineNear(s, line, c, owner, from, w0, w1, dir, L, m, pad, W, H) {
			placed = true
		}
	}
	return placed
}

// lineNear places the label with its middle at centre or the nearest usable position within
// [lo, hi] (only forward when dir > 0, only backward when dir < 0), trying at most
// maxLineCandidates positions, and reports whether it did.
func (lb *labeller) lineNear(s Surface, line []pathPoint, c *labelCand, owner int, centre, lo, hi, dir, L float64, m TextMetrics, pad, W, H float64) bool {
	step := max(L/3, 8)
	for k := 0; k < maxLineCandidates; k++ {
		// Offsets of the label's middle from centre: 0, +step, -step, +2 step, … (or one way).
		off := float64((k+1)/2) * step
		if dir != 0 {
			off = float64(k) * step * dir
		} else if k%2 == 0 {
			off = -off
		}
		mid := centre + off
		if mid > hi+1e-9 || mid < lo-1e-9 {
			if dir != 0 || math.Abs(off) > max(hi-centre, centre-lo) {
				return false // past both ends
			}
			continue
		}
		if !lb.layoutOnLine(line, mid-L/2, L, c, m, pad, W, H) {
			continue
		}
		first := lb.run[0]
		straight := true
		for _, g := range lb.run[1:] {
			straight = straight && math.Abs(g.Angle-first.Angle) < straightTurn*180/math.Pi
		}
		for _, b := range lb.boxes {
			lb.addBox(b, owner)
		}
		if straight {
			// A straight stretch: plain text, one element in vector output.
			st := c.style
			st.Angle = first.Angle
			s.Text(c.text, first.X, first.Y, st)
		} else {
			s.GlyphRun(lb.run, c.style)
		}
		return true
	}
	return false
}

// layoutOnLine lays the label's glyphs (advances lb.adv, total length L) out along line from the
// distance start, into lb.run and their boxes into lb.boxes, and reports whether the position can
// be used (see placeLine).
func (lb *labeller) layoutOnLine(line []pathPoint, start, L float64, c *labelCand, m TextMetrics, pad, W, H float64) bool {
	// Read left to right: when the stretch runs leftwards (or straight down), lay the glyphs out
	// from its other end, backwards along the line.
	p0, p1 := lb.pointAt(line, start), lb.pointAt(line, start+L)
	dir := 1.0
	if dx := p1.x - p0.x; dx < 0 || (dx == 0 && p1.y > p0.y) {
		dir = -1
	}
	pl := c.placement()
	// up moves the baseline from the line towards the glyphs' top: by default the ink is centred
	// on the line; above, its bottom is c.offset above the line; below, its top c.offset below.
	up := -(m.Ascent - m.Descent) / 2
	switch pl.LineSide {
	case LineAbove:
		up = c.offset + m.Descent
	case LineBelow:
		up = -c.offset - m.Ascent
	}
	// Straight and horizontal labels: every glyph on one baseline from b0 along (bx, by).
	var b0 pathPoint
	var bx, by float64
	switch pl.LineOrientation {
	case LineStraight:
		a, b := p0, p1
		if dir < 0 {
			a, b = p1, p0
		}
		chord := math.Hypot(b.x-a.x, b.y-a.y)
		if chord <= 0 {
			return false
		}
		bx, by = (b.x-a.x)/chord, (b.y-a.y)/chord
		// The text is L long on the chord, centred on it.
		b0 = pathPoint{(a.x+b.x)/2 - bx*L/2, (a.y+b.y)/2 - by*L/2}
		// The line must stay within the text's height of the chord.
		tol := max(2, m.Ascent+m.Descent)
		for i := range 9 {
			q := lb.pointAt(line, start+L*float64(i)/8)
			if math.Abs((q.x-a.x)*by-(q.y-a.y)*bx) > tol {
				return false
			}
		}
	case LineHorizontal:
		pm := lb.pointAt(line, start+L/2)
		bx, by = 1, 0
		b0 = pathPoint{pm.x - L/2, pm.y}
	}
	lb.run, lb.boxes = lb.run[:0], lb.boxes[:0]
	d := 0.0
	prev := math.NaN()
	i := 0
	for _, r := range c.text {
		a := lb.adv[i]
		i++
		var q0 pathPoint
		var theta float64
		if pl.LineOrientation != LineCurved {
			q0 = pathPoint{b0.x + bx*d, b0.y + by*d}
			theta = math.Atan2(by, bx)
			d += a
		} else {
			d0, d1 := start+d, start+d+a
			if dir < 0 {
				d0, d1 = start+L-d, start+L-d-a
			}
			d += a
			var q1 pathPoint
			q0, q1 = lb.pointAt(line, d0), lb.pointAt(line, d1)
			theta = prev
			if a > 0 {
				theta = math.Atan2(q1.y-q0.y, q1.x-q0.x)
			}
			if math.IsNaN(theta) {
				theta = math.Atan2(p1.y-p0.y, p1.x-p0.x)
				if dir < 0 {
					theta += math.Pi
				}
			}
			if !math.IsNaN(prev) {
				turn := math.Abs(theta - prev)
				if turn > math.Pi {
					turn = 2*math.Pi - turn
				}
				if turn > maxGlyphTurn {
					return false
				}
			}
			prev = theta
		}
		sin, cos := math.Sincos(theta)
		// u = (cos, sin) along the baseline, n = (sin, -cos) up the glyphs.
		ox, oy := q0.x+sin*up, q0.y-cos*up
		lb.run = append(lb.run, Glyph{Rune: r, X: ox, Y: oy, Angle: -theta * 180 / math.Pi})
		b := labelBox{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
		for _, along := range [2]float64{-pad, a + pad} {
			for _, up := range [2]float64{-m.Descent - pad, m.Ascent + pad} {
				x, y := ox+cos*along+sin*up, oy+sin*along-cos*up
				b = labelBox{min(b.x0, x), min(b.y0, y), max(b.x1, x), max(b.y1, y)}
			}
		}
		if !(b.x0 >= 0 && b.y0 >= 0 && b.x1 <= W && b.y1 <= H) || (!c.overlap && lb.grid.hits(b, lb.placed)) {
			return false
		}
		lb.boxes = append(lb.boxes, b)
	}
	return len(lb.run) > 0
}

// pointAt returns the point at distance d along line, whose vertex distances are lb.cum.
func (lb *labeller) pointAt(line []pathPoint, d float64) pathPoint {
	i, _ := slices.BinarySearch(lb.cum, d)
	switch {
	case i <= 0:
		return line[0]
	case i >= len(line):
		return line[len(line)-1]
	}
	a, b := line[i-1], line[i]
	l := lb.cum[i] - lb.cum[i-1]
	if l <= 0 {
		return b
	}
	t := (d - lb.cum[i-1]) / l
	return pathPoint{a.x + t*(b.x-a.x), a.y + t*(b.y-a.y)}
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
