package render

import (
	"encoding/binary"
	"image"
	"image/color"
	"image/draw"
	"math"
	"math/bits"

	"github.com/fogleman/gg"
	xdraw "golang.org/x/image/draw"
	"golang.org/x/image/math/f64"
	"golang.org/x/image/vector"
)

// fastStrokeMax is the widest stroke, in pixels, drawn by the fast segment rasterizer; wider or dashed
// strokes go through gg's stroker, which draws proper joins and caps.
const fastStrokeMax = 3

// GGSurface is the raster Surface, drawing into an *image.RGBA through a gg.Context.
//
// gg draws wide and dashed strokes and pattern fills. The hot paths bypass gg, whose per-call
// freetype rasterization and per-glyph drawing dominate map rendering otherwise: fills, and strokes
// up to 3 pixels wide (as offset outlines with mitred joins), are rasterized with
// golang.org/x/image/vector in cache-sized tiles and blended straight into the image (see
// rasterBands); horizontal text is composited from cached glyph masks, its halo made by dilating the
// text's mask once; glyph runs (curved labels) and rotated or decorated text are rasterized from the
// glyphs' outlines into one mask, with the same halo. Images are drawn with golang.org/x/image/draw.
// For Renderer.Draw of a large image with a core to spare, the fills and thin strokes are recorded
// and replayed in horizontal bands by two goroutines, with the same bytes (see displayList).
//
// A GGSurface is not safe for concurrent use.
type GGSurface struct {
	img    *image.RGBA
	dc     *gg.Context
	parent []*image.RGBA // images below the open groups
	spare  []*image.RGBA // a group image kept for reuse
	fonts  *Fonts

	m     Matrix
	ident bool
	stack []Matrix

	pathBuf // the current path, in pixels

	raster tileRaster
	list   displayList // operations recorded for a banded replay (see displayList)
	text   textScratch
	tmp    []pathPoint
	tsub   []subpath

	line  []pathPoint
	out   []pathPoint
	osub  []subpath
	boxes [][4]float64

	cov   coverage             // footprints of the current batch (see addFootprint)
	segs  map[segment]struct{} // hairline segments drawn by the current stroke
	drawn []bool
	hl    []pathPoint
}

type pathPoint struct{ x, y float64 }

type subpath struct {
	start, end int // pts[start:end]
	closed     bool
	fillOnly   bool // a ring filled but not outlined (a Feature with its own Outline)
}

// NewGGSurface returns a surface drawing into img with fonts (shared caches; nil parses a new set).
func NewGGSurface(img *image.RGBA, fonts *Fonts) *GGSurface {
	if fonts == nil {
		var err error
		if fonts, err = NewFonts(); err != nil {
			panic(err) // the embedded font is valid; see TestFonts
		}
	}
	s := &GGSurface{fonts: fonts}
	s.reset(img)
	return s
}

// reset points s at img with an identity transform and no path or groups.
func (s *GGSurface) reset(img *image.RGBA) {
	s.img = img
	s.dc = nil
	s.parent = s.parent[:0]
	s.m, s.ident = Identity(), true
	s.stack = s.stack[:0]
	s.NewPath()
	s.record(0)
	if s.cov.hasFill || s.cov.ink {
		// A draw stopped half way: forget what it accumulated.
		clear(s.cov.fill)
		clear(s.cov.depth)
		s.cov.clearRows()
	}
}

// dropSpare forgets the spare group image when it holds more than maxBytes, so that a pooled
// surface does not keep a large render's memory.
func (s *GGSurface) dropSpare(maxBytes int) {
	if s.cov.bytes() > maxBytes {
		s.cov = coverage{}
	}
	for _, g := range s.spare {
		if cap(g.Pix) > maxBytes {
			clear(s.spare)
			s.spare = s.spare[:0]
			return
		}
	}
}

// Image returns the image the surface draws into (the bottom one when groups are open).
func (s *GGSurface) Image() *image.RGBA {
	s.flushList()
	if len(s.parent) > 0 {
		return s.parent[0]
	}
	return s.img
}

// context returns the gg.Context drawing into the current image.
func (s *GGSurface) context() *gg.Context {
	if s.dc == nil {
		s.dc = gg.NewContextForRGBA(s.img)
	}
	return s.dc
}

// Size implements Surface.
func (s *GGSurface) Size() (int, int) { b := s.img.Bounds(); return b.Dx(), b.Dy() }

// Clear implements Surface.
func (s *GGSurface) Clear(c color.NRGBA) {
	s.flushList()
	p := premul(c)
	px := [4]byte{byte(p[0]), byte(p[1]), byte(p[2]), byte(p[3])}
	pix := s.img.Pix
	if len(pix) == 0 {
		return
	}
	if px == [4]byte{} {
		clear(pix)
		return
	}
	copy(pix[:4], px[:])
	for n := 4; n < len(pix); n *= 2 {
		copy(pix[n:], pix[:n])
	}
}

// Push implements Surface.
func (s *GGSurface) Push(m Matrix) {
	s.stack = append(s.stack, s.m)
	s.m = m.Then(s.m)
	s.ident = s.m.IsIdentity()
}

// Pop implements Surface.
func (s *GGSurface) Pop() {
	if n := len(s.stack); n > 0 {
		s.m = s.stack[n-1]
		s.stack = s.stack[:n-1]
		s.ident = s.m.IsIdentity()
	}
}

// MoveTo implements Surface.
func (s *GGSurface) MoveTo(x, y float64) {
	if !s.ident {
		x, y = s.m.Apply(x, y)
	}
	s.moveTo(x, y)
}

// LineTo implements Surface.
func (s *GGSurface) LineTo(x, y float64) {
	if !s.ident {
		x, y = s.m.Apply(x, y)
	}
	s.lineTo(x, y)
}

// Fill implements Surface.
func (s *GGSurface) Fill(c color.NRGBA) { s.fill(s.pts, s.subs, c) }

// FillPattern implements Surface through gg's repeating surface pattern.
func (s *GGSurface) FillPattern(tile image.Image) {
	if len(s.pts) < 3 || tile == nil || tile.Bounds().Empty() {
		return
	}
	s.flushList()
	dc := s.context()
	dc.Push()
	defer dc.Pop()
	dc.Identity()
	dc.NewSubPath()
	for _, sp := range s.subs {
		if !sp.closed && sp.end-sp.start < 3 {
			continue
		}
		for i, p := range s.pts[sp.start:sp.end] {
			if i == 0 {
				dc.MoveTo(p.x, p.y)
			} else {
				dc.LineTo(p.x, p.y)
			}
		}
		dc.ClosePath()
	}
	dc.SetFillRuleWinding()
	dc.SetFillStyle(gg.NewSurfacePattern(tile, gg.RepeatBoth))
	dc.Fill()
}

// Stroke implements Surface.
func (s *GGSurface) Stroke(st StrokeStyle) { s.stroke(s.pts, s.subs, st) }

// pathBounds returns the pixel rectangle covering pts grown by pad, clipped to the image.
func (s *GGSurface) pathBounds(pts []pathPoint, pad float64) image.Rectangle {
	if len(pts) == 0 {
		return image.Rectangle{}
	}
	x0, y0, x1, y1 := pts[0].x, pts[0].y, pts[0].x, pts[0].y
	for _, p := range pts[1:] {
		x0, x1 = min(x0, p.x), max(x1, p.x)
		y0, y1 = min(y0, p.y), max(y1, p.y)
	}
	b := s.img.Bounds()
	if math.IsNaN(x0 + y0 + x1 + y1) {
		return image.Rectangle{}
	}
	r := image.Rect(
		int(math.Floor(max(x0-pad, float64(b.Min.X)-1))), int(math.Floor(max(y0-pad, float64(b.Min.Y)-1))),
		int(math.Ceil(min(x1+pad, float64(b.Max.X)+1)))+1, int(math.Ceil(min(y1+pad, float64(b.Max.Y)+1)))+1,
	)
	return r.Intersect(b)
}

// fill rasterizes the subpaths with the non-zero rule (coverage clamped) into the image.
func (s *GGSurface) fill(pts []pathPoint, subs []subpath, c color.NRGBA) {
	if c.A == 0 || len(pts) < 3 {
		return
	}
	r := s.pathBounds(pts, 0)
	if r.Empty() {
		return
	}
	s.rasterBands(pts, subs, r, c)
}

// rasterTile is the largest side of the pieces rasterBands works in: up to 512 the rasterizer uses
// its fixed-point accumulator, which is an order of magnitude faster here than its floating-point
// one (whose SIMD loop reloads MXCSR on every iteration).
const rasterTile = 512

// rasterBands fills the closed polygons subs of pts (non-zero, coverage clamped) with c, within r:
// straight away, or, when the surface records a display list, once the list is replayed.
func (s *GGSurface) rasterBands(pts []pathPoint, subs []subpath, r image.Rectangle, c color.NRGBA) {
	if s.list.on {
		if s.list.add(pts, subs, r, c) {
			s.flushList()
		}
		return
	}
	s.boxes = appendBoxes(s.boxes[:0], pts, subs)
	s.raster.fill(s.img, pts, subs, s.boxes, r, c, r.Min.Y, r.Max.Y)
}

// appendBoxes appends the bounding box (x0, y0, x1, y1) of each of subs.
func appendBoxes(dst [][4]float64, pts []pathPoint, subs []subpath) [][4]float64 {
	for _, sp := range subs {
		b := [4]float64{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
		for _, p := range pts[sp.start:sp.end] {
			b[0], b[1] = min(b[0], p.x), min(b[1], p.y)
			b[2], b[3] = max(b[2], p.x), max(b[3], p.y)
		}
		dst = append(dst, b)
	}
	return dst
}

// tileRaster is the scratch space of rasterizing polygons in tiles: the rasterizer and the
// coverage mask of a tile. Each goroutine drawing a band of an image has its own.
type tileRaster struct {
	ras  vector.Rasterizer
	mask image.Alpha
}

// fill fills the closed polygons subs of pts (non-zero, coverage clamped), whose bounding boxes
// are boxes, with c into dst, within r, changing only the rows from y0 to y1 (a band of dst).
//
// It works in tiles of at most rasterTile pixels wide and about 128 KiB of coverage cells, so the
// rasterizer runs its fast fixed-point path and its buffer and the mask stay in the CPU cache. Per
// tile, only the polygons whose bounding box reaches it are added (edges above the tile cost a few
// skipped rows, edges below or beside it almost nothing), then the tile is composited. The tiles
// depend on r alone, not on the band: a tile across the band's edge is rasterized whole (each band
// that reaches it does so) and composited within the band, so every pixel gets the coverage it
// gets when the whole of r is drawn at once.
func (t *tileRaster) fill(dst *image.RGBA, pts []pathPoint, subs []subpath, boxes [][4]float64, r image.Rectangle, c color.NRGBA, y0, y1 int) {
	nx := (r.Dx() + rasterTile - 1) / rasterTile
	tileW := (r.Dx() + nx - 1) / nx
	tileH := min(rasterTile, max(8, (32<<10)/max(tileW, 1)))
	ty := r.Min.Y
	if y0 > ty {
		ty += (y0 - ty) / tileH * tileH
	}
	for ; ty < r.Max.Y && ty < y1; ty += tileH {
		for tx := r.Min.X; tx < r.Max.X; tx += tileW {
			tile := image.Rect(tx, ty, min(tx+tileW, r.Max.X), min(ty+tileH, r.Max.Y))
			ox, oy := float64(tile.Min.X), float64(tile.Min.Y)
			x0, ya := ox-1, oy-1
			x1, yb := float64(tile.Max.X)+1, float64(tile.Max.Y)+1
			started := false
			for i, sp := range subs {
				b := boxes[i]
				// Polygons wholly left of the tile still matter: their edges there set the coverage
				// of the rows they cross (clamped to column 0).
				if sp.end-sp.start < 3 || b[3] < ya || b[1] > yb || b[0] > x1 {
					continue
				}
				if b[2] < x0 {
					// Wholly left: its edges cancel out within each row.
					continue
				}
				if !started {
					t.ras.Reset(tile.Dx(), tile.Dy())
					started = true
				}
				p := pts[sp.start]
				t.ras.MoveTo(float32(p.x-ox), float32(p.y-oy))
				for _, p := range pts[sp.start+1 : sp.end] {
					t.ras.LineTo(float32(p.x-ox), float32(p.y-oy))
				}
				t.ras.ClosePath()
			}
			if started {
				t.paint(dst, tile, c, y0, y1)
			}
		}
	}
}

// paint composites colour c through the coverage accumulated in the rasterizer, which covers r,
// into the rows of dst from y0 to y1. The rasterizer writes the coverage into an alpha mask with
// its SIMD accumulator; the blend then skips empty runs eight pixels at a time and stores opaque
// colour directly where coverage is full, which is most of a map's pixels.
func (t *tileRaster) paint(dst *image.RGBA, r image.Rectangle, c color.NRGBA, y0, y1 int) {
	w, h := r.Dx(), r.Dy()
	t.mask.Pix = resize(t.mask.Pix, w*h)
	t.mask.Stride = w
	t.mask.Rect = image.Rect(0, 0, w, h)
	t.ras.DrawOp = draw.Src
	t.ras.Draw(&t.mask, t.mask.Rect, image.Opaque, image.Point{})
	band := r
	band.Min.Y, band.Max.Y = max(r.Min.Y, y0), min(r.Max.Y, y1)
	compositeMask(dst, band, t.mask.Pix[(band.Min.Y-r.Min.Y)*w:], c)
}

// compositeMask blends c over dst in r through mask (r.Dx() bytes a row).
func compositeMask(dst *image.RGBA, r image.Rectangle, mask []byte, c color.NRGBA) {
	w := r.Dx()
	pc := premul(c)
	sc := spreadPremul(pc)
	solid := uint32(c.R) | uint32(c.G)<<8 | uint32(c.B)<<16 | uint32(c.A)<<24
	opaque := c.A == 255
	for y := r.Min.Y; y < r.Max.Y; y++ {
		m := mask[(y-r.Min.Y)*w:][:w:w]
		pix := dst.Pix[dst.PixOffset(r.Min.X, y):][: 4*w : 4*w]
		for x := 0; x < w; {
			if x+8 <= w {
				v := binary.LittleEndian.Uint64(m[x:])
				switch {
				case v == 0:
					x += 8
					continue
				case v == math.MaxUint64 && opaque:
					// Eight pixels wholly inside an opaque shape (most of a fill's mask).
					p := pix[4*x : 4*x+32 : 4*x+32]
					for i := 0; i < 32; i += 4 {
						binary.LittleEndian.PutUint32(p[i:], solid)
					}
					x += 8
					continue
				}
				// The chunk's other pixels, found from their mask bytes (an outline's mask has a
				// few in each chunk it crosses).
				p := pix[4*x : 4*x+32 : 4*x+32]
				for v != 0 {
					i := bits.TrailingZeros64(v) &^ 7 // the lowest non-zero byte's first bit
					a := uint32(v>>i) & 0xFF
					v &^= 0xFF << i
					q := p[i/2 : i/2+4 : i/2+4] // pixel i/8
					if a == 255 && opaque {
						binary.LittleEndian.PutUint32(q, solid)
					} else {
						blendSpread(q, sc, pc[3], a)
					}
				}
				x += 8
				continue
			}
			a := m[x]
			switch {
			case a == 0:
			case a == 255 && opaque:
				binary.LittleEndian.PutUint32(pix[4*x:], solid)
			default:
				blendSpread(pix[4*x:4*x+4:4*x+4], sc, pc[3], uint32(a))
			}
			x++
		}
	}
}

// stroke draws the outline of the subpaths.
func (s *GGSurface) stroke(pts []pathPoint, subs []subpath, st StrokeStyle) {
	if st.Color.A == 0 || st.Width <= 0 || len(pts) == 0 {
		return
	}
	w := st.Width
	if !s.ident {
		w *= s.m.lineScale()
	}
	if w > fastStrokeMax || len(st.Dash) > 0 {
		s.strokeGG(pts, subs, st, w)
		return
	}
	c := st.Color
	hw := w / 2
	r := s.pathBounds(pts, hw+2)
	if r.Empty() {
		return
	}
	s.out, s.osub = s.out[:0], s.osub[:0]
	ext := 0.0
	if st.Cap != CapButt {
		ext = hw
	}
	// Lines of one pixel (up to a quarter more) are centred on pixel centres, so that horizontal and
	// vertical runs come out crisp instead of spread half-and-half over two rows; a subpath that
	// snapping would collapse (a ring to fewer than three points, a line to one) is drawn where it
	// is. Thinner lines (hairlines) are drawn where they are at their true width: snapping them
	// moves their ink by up to half a pixel, which opens a blank column where a gap of about a
	// pixel lies between two outlines that snap away from it.
	//
	// Rasterized together, overlapping hairlines would add up their coverage: a border shared by
	// two polygons would be twice as dark as either outline, neighbours in a dense map a solid
	// mass. So a segment already drawn in this stroke (a shared border, in either direction) is
	// not drawn again, and the rest is composited one subpath at a time, each covering what the
	// ones before left, as an antialiased renderer drawing shape after shape does.
	snap := w >= snapMinWidth && w <= snapMaxWidth
	if w >= snapMinWidth {
		for _, sp := range subs {
			s.appendOutline(pts[sp.start:sp.end], sp.closed, snap, hw, ext)
		}
		s.rasterBands(s.out, s.osub, r, c)
		return
	}
	clear(s.segs)
	if s.segs == nil {
		s.segs = make(map[segment]struct{})
	}
	for _, sp := range subs {
		s.appendHairline(pts[sp.start:sp.end], sp.closed, hw, ext)
		if len(s.out) > 0 {
			if r := s.pathBounds(s.out, 1); !r.Empty() {
				s.rasterBands(s.out, s.osub, r, c)
			}
			s.out, s.osub = s.out[:0], s.osub[:0]
		}
	}
}

// segment is a line segment in 1/256 pixel units, its lesser end first.
type segment [4]int32

func segmentOf(a, b pathPoint) segment {
	q := func(v float64) int32 { return int32(math.Round(max(-1<<22, min(1<<22, v)) * 256)) }
	s := segment{q(a.x), q(a.y), q(b.x), q(b.y)}
	if s[2] < s[0] || s[2] == s[0] && s[3] < s[1] {
		s = segment{s[2], s[3], s[0], s[1]}
	}
	return s
}

// appendHairline appends the outline of the hairline pts (a ring when closed) less the segments
// already in s.segs, which it adds the others to: a ring with none of them is outlined whole, a
// ring or line with some as the runs between them (butt ends where a run stops at a segment drawn
// before; ext at a line's own ends).
func (s *GGSurface) appendHairline(pts []pathPoint, closed bool, hw, ext float64) {
	s.hl = dedupe(s.hl[:0], pts)
	line := s.hl
	n := len(line)
	if n < 2 || closed && n < 3 {
		s.appendOutline(line, closed, false, hw, ext)
		return
	}
	nseg := n - 1
	if closed {
		nseg = n
	}
	// Mark the segments drawn before (s.drawn[i]: segment i, from point i to i+1, is skipped).
	s.drawn = s.drawn[:0]
	skipped := -1
	for i := range nseg {
		k := segmentOf(line[i], line[(i+1)%n])
		_, seen := s.segs[k]
		if !seen {
			s.segs[k] = struct{}{}
		} else if skipped < 0 {
			skipped = i
		}
		s.drawn = append(s.drawn, seen)
	}
	if skipped < 0 {
		s.appendOutline(line, closed, false, hw, ext)
		return
	}
	// Runs of segments not drawn before, starting after a skipped one (a ring's first run may wrap
	// round its start).
	first := 0
	if closed {
		first = skipped + 1
	}
	run := s.tmp[:0]
	flush := func(lineEnd bool) {
		if len(run) >= 2 {
			e := 0.0
			if lineEnd {
				e = ext
			}
			s.appendOutline(run, false, false, hw, e)
		}
		run = run[:0]
	}
	for j := range nseg {
		i := (first + j) % nseg
		if s.drawn[i] {
			flush(false)
			continue
		}
		if len(run) == 0 {
			run = append(run, line[i])
		}
		run = append(run, line[(i+1)%n])
	}
	flush(!closed)
	s.tmp = run[:0]
}

// appendOutline appends to s.out and s.osub the outline of the line pts (a ring when closed) for a
// stroke of half width hw, snapped to pixel centres when snap is set and that does not collapse
// it, its ends extended by ext (caps).
func (s *GGSurface) appendOutline(pts []pathPoint, closed, snap bool, hw, ext float64) {
	s.line = s.line[:0]
	if snap {
		s.line = snapCentres(s.line, pts)
		s.line = dedupe(s.line[:0], s.line)
		if len(s.line) < 2 || closed && len(s.line) < 3 {
			s.line = s.line[:0]
		}
	}
	if len(s.line) == 0 {
		s.line = dedupe(s.line, pts)
	}
	if len(s.line) < 2 {
		if len(s.line) == 1 && (closed || ext > 0) {
			// A ring or a capped line of no length: a dot of the line's width.
			start := len(s.out)
			s.out = dotRing(s.out, s.line[0], hw)
			s.osub = append(s.osub, subpath{start: start, end: len(s.out), closed: true})
		}
		return
	}
	if closed && len(s.line) >= 3 {
		if signedArea(s.line) < 0 {
			reversePoints(s.line)
		}
		start := len(s.out)
		s.out = offsetLine(s.out, s.line, hw, true)
		s.osub = append(s.osub, subpath{start: start, end: len(s.out), closed: true})
		start = len(s.out)
		s.out = offsetLine(s.out, s.line, -hw, true)
		reversePoints(s.out[start:])
		s.osub = append(s.osub, subpath{start: start, end: len(s.out), closed: true})
		return
	}
	// An open line's outline: the left side forward, then the right side back.
	start := len(s.out)
	s.out = offsetLine(s.out, s.line, hw, false)
	n := len(s.out)
	s.out = offsetLine(s.out, s.line, -hw, false)
	reversePoints(s.out[n:])
	if ext > 0 {
		extendEnds(s.out[start:], n-start, s.line, ext)
	}
	s.osub = append(s.osub, subpath{start: start, end: len(s.out), closed: true})
}

// Stroke widths, in pixels, of the lines the fast rasterizer snaps to pixel centres.
const (
	snapMinWidth = 1
	snapMaxWidth = 1.25
)

// dotRing appends a regular octagon of radius r around p (clockwise on screen, as a filled ring
// must be).
func dotRing(dst []pathPoint, p pathPoint, r float64) []pathPoint {
	for i := range 8 {
		a := float64(i) * math.Pi / 4
		dst = append(dst, pathPoint{p.x + r*math.Cos(a), p.y + r*math.Sin(a)})
	}
	return dst
}

// snapCentres appends pts moved to the centres of their pixels.
func snapCentres(dst, pts []pathPoint) []pathPoint {
	for _, p := range pts {
		dst = append(dst, pathPoint{math.Floor(p.x) + 0.5, math.Floor(p.y) + 0.5})
	}
	return dst
}

// dedupe appends pts to dst without consecutive duplicates (and, for rings, without a closing
// duplicate of the first point).
func dedupe(dst, pts []pathPoint) []pathPoint {
	for _, p := range pts {
		if n := len(dst); n > 0 {
			if d := dst[n-1]; math.Abs(d.x-p.x)+math.Abs(d.y-p.y) < 1e-6 {
				continue
			}
		}
		dst = append(dst, p)
	}
	if n := len(dst); n > 2 && math.Abs(dst[0].x-dst[n-1].x)+math.Abs(dst[0].y-dst[n-1].y) < 1e-6 {
		dst = dst[:n-1]
	}
	return dst
}

// miterLimit is the threshold of 1+cos(turn angle) below which joins are bevelled instead of mitred:
// under 0.5, the miter would be longer than twice the half width.
const miterLimit = 0.5

// offsetLine appends the line pts offset by d to its left (negative d: right), with mitred joins
// (bevelled at sharp turns). closed treats pts as a ring.
func offsetLine(dst, pts []pathPoint, d float64, closed bool) []pathPoint {
	n := len(pts)
	normal := func(a, b pathPoint) (float64, float64) {
		dx, dy := b.x-a.x, b.y-a.y
		l := math.Sqrt(dx*dx + dy*dy)
		return -dy / l, dx / l
	}
	for i := 0; i < n; i++ {
		p := pts[i]
		var hasPrev, hasNext bool
		var px, py, nx, ny float64
		if i > 0 || closed {
			px, py = normal(pts[(i-1+n)%n], p)
			hasPrev = true
		}
		if i < n-1 || closed {
			nx, ny = normal(p, pts[(i+1)%n])
			hasNext = true
		}
		switch {
		case !hasPrev:
			dst = append(dst, pathPoint{p.x + nx*d, p.y + ny*d})
		case !hasNext:
			dst = append(dst, pathPoint{p.x + px*d, p.y + py*d})
		default:
			c := 1 + px*nx + py*ny
			if c < miterLimit {
				dst = append(dst, pathPoint{p.x + px*d, p.y + py*d}, pathPoint{p.x + nx*d, p.y + ny*d})
			} else {
				k := d / c
				dst = append(dst, pathPoint{p.x + (px+nx)*k, p.y + (py+ny)*k})
			}
		}
	}
	return dst
}

// extendEnds moves the end points of an open line's outline (left side out[:n], right side reversed
// after it) outwards by ext along the line, for square and (approximately) round caps.
func extendEnds(out []pathPoint, n int, line []pathPoint, ext float64) {
	a, b := line[0], line[1]
	l := math.Hypot(b.x-a.x, b.y-a.y)
	dx, dy := (b.x-a.x)/l*ext, (b.y-a.y)/l*ext
	out[0].x, out[0].y = out[0].x-dx, out[0].y-dy
	last := len(out) - 1
	out[last].x, out[last].y = out[last].x-dx, out[last].y-dy
	a, b = line[len(line)-1], line[len(line)-2]
	l = math.Hypot(b.x-a.x, b.y-a.y)
	dx, dy = (b.x-a.x)/l*ext, (b.y-a.y)/l*ext
	out[n-1].x, out[n-1].y = out[n-1].x-dx, out[n-1].y-dy
	out[n].x, out[n].y = out[n].x-dx, out[n].y-dy
}

// strokeGG strokes through gg, for wide and dashed lines.
func (s *GGSurface) strokeGG(pts []pathPoint, subs []subpath, st StrokeStyle, w float64) {
	s.flushList()
	dc := s.context()
	dc.Push()
	defer dc.Pop()
	dc.Identity()
	dc.NewSubPath()
	dc.ClearPath()
	for _, sp := range subs {
		if sp.end-sp.start < 2 {
			continue
		}
		dc.MoveTo(pts[sp.start].x, pts[sp.start].y)
		for _, p := range pts[sp.start+1 : sp.end] {
			dc.LineTo(p.x, p.y)
		}
		if sp.closed {
			dc.ClosePath()
		}
	}
	dc.SetColor(st.Color)
	dc.SetLineWidth(w)
	switch st.Cap {
	case CapRound:
		dc.SetLineCapRound()
	case CapSquare:
		dc.SetLineCapSquare()
	default:
		dc.SetLineCapButt()
	}
	switch st.Join {
	case JoinBevel:
		dc.SetLineJoinBevel()
	default:
		dc.SetLineJoinRound() // gg has no miter join
	}
	if len(st.Dash) > 0 {
		scale := 1.0
		if !s.ident {
			scale = s.m.lineScale()
		}
		d := make([]float64, len(st.Dash))
		for i, v := range st.Dash {
			d[i] = v * scale
		}
		dc.SetDash(d...)
	} else {
		dc.SetDash()
	}
	dc.Stroke()
}

// Text implements Surface.
func (s *GGSurface) Text(str string, x, y float64, t TextStyle) {
	if t.Size <= 0 || (t.Color.A == 0 && t.Halo.A == 0) {
		return
	}
	s.flushList()
	if !s.ident {
		x, y = s.m.Apply(x, y)
	}
	f := s.fonts.face(t)
	if t.Angle != 0 || t.Underline || t.Strikethrough {
		// Rotated or decorated (rare: graphics): drawn from the glyph outlines.
		s.text.run = f.layout(s.text.run[:0], str, x, y, t.Angle)
		s.fonts.drawRun(s.img, s.text.run, t, &s.text)
		return
	}
	f.drawText(s.img, str, x, y, t, &s.text)
}

// GlyphRun implements Surface, drawing the glyphs from their outlines.
func (s *GGSurface) GlyphRun(run []Glyph, t TextStyle) {
	if t.Size <= 0 || (t.Color.A == 0 && t.Halo.A == 0) || len(run) == 0 {
		return
	}
	s.flushList()
	if !s.ident {
		s.text.run = append(s.text.run[:0], run...)
		for i := range s.text.run {
			g := &s.text.run[i]
			g.X, g.Y = s.m.Apply(g.X, g.Y)
		}
		run = s.text.run
	}
	s.fonts.drawRun(s.img, run, t, &s.text)
}

// MeasureText implements Surface.
func (s *GGSurface) MeasureText(str string, t TextStyle) TextMetrics {
	if t.Size <= 0 {
		return TextMetrics{}
	}
	w, a, d := s.fonts.face(t).measure(str)
	return TextMetrics{Width: w, Ascent: a, Descent: d}
}

// Marker implements Surface.
func (s *GGSurface) Marker(x, y float64, m MarkerStyle, size, angle float64, fill color.NRGBA, stroke StrokeStyle) {
	if size <= 0 {
		return
	}
	if !s.ident {
		x, y = s.m.Apply(x, y)
		size *= s.m.lineScale()
	}
	s.tmp, s.tsub = markerPath(s.tmp[:0], s.tsub[:0], x, y, m, size)
	rotateAbout(s.tmp, x, y, angle)
	if m != MarkerCross && m != MarkerX {
		s.fill(s.tmp, s.tsub, fill)
	} else if stroke.Color.A == 0 || stroke.Width <= 0 {
		// Crosses are lines: draw them with the fill colour when there is no outline.
		stroke = StrokeStyle{Color: fill, Width: max(1, size/8)}
	}
	s.stroke(s.tmp, s.tsub, stroke)
}

// DrawImage implements Surface, with bilinear interpolation.
func (s *GGSurface) DrawImage(img image.Image, x, y, w, h float64) {
	sb := img.Bounds()
	if sb.Empty() || w <= 0 || h <= 0 {
		return
	}
	s.flushList()
	// Source pixel (u, v) → rectangle → current transform.
	m := Matrix{XX: w / float64(sb.Dx()), YY: h / float64(sb.Dy())}
	m.X0, m.Y0 = x-m.XX*float64(sb.Min.X), y-m.YY*float64(sb.Min.Y)
	m = m.Then(s.m)
	xdraw.BiLinear.Transform(s.img, f64.Aff3{m.XX, m.XY, m.X0, m.YX, m.YY, m.Y0}, img, sb, xdraw.Over, nil)
}

// rotateAbout rotates pts by angle degrees anticlockwise on screen (y down) about (x, y).
func rotateAbout(pts []pathPoint, x, y, angle float64) {
	if angle == 0 {
		return
	}
	sin, cos := sincosDeg(angle)
	for i, p := range pts {
		dx, dy := p.x-x, p.y-y
		pts[i] = pathPoint{x + dx*cos + dy*sin, y - dx*sin + dy*cos}
	}
}

// markerPath appends the outline of a marker of width size centred on (x, y).
func markerPath(pts []pathPoint, subs []subpath, x, y float64, m MarkerStyle, size float64) ([]pathPoint, []subpath) {
	r := size / 2
	poly := func(closed bool, p ...pathPoint) {
		subs = append(subs, subpath{start: len(pts), end: len(pts) + len(p), closed: closed})
		pts = append(pts, p...)
	}
	switch m {
	case MarkerSquare:
		poly(true, pathPoint{x - r, y - r}, pathPoint{x + r, y - r}, pathPoint{x + r, y + r}, pathPoint{x - r, y + r})
	case MarkerTriangle:
		h := r * math.Sqrt(3) / 2
		poly(true, pathPoint{x, y - r}, pathPoint{x + r, y + h*2 - r}, pathPoint{x - r, y + h*2 - r})
	case MarkerDiamond:
		poly(true, pathPoint{x, y - r}, pathPoint{x + r, y}, pathPoint{x, y + r}, pathPoint{x - r, y})
	case MarkerCross:
		poly(false, pathPoint{x - r, y}, pathPoint{x + r, y})
		poly(false, pathPoint{x, y - r}, pathPoint{x, y + r})
	case MarkerX:
		d := r / math.Sqrt2
		poly(false, pathPoint{x - d, y - d}, pathPoint{x + d, y + d})
		poly(false, pathPoint{x - d, y + d}, pathPoint{x + d, y - d})
	default: // circle
		n := max(8, min(64, int(size*1.5)))
		start := len(pts)
		for i := 0; i < n; i++ {
			a := 2 * math.Pi * float64(i) / float64(n)
			pts = append(pts, pathPoint{x + r*math.Cos(a), y + r*math.Sin(a)})
		}
		subs = append(subs, subpath{start: start, end: len(pts), closed: true})
	}
	return pts, subs
}

// BeginGroup implements Surface.
func (s *GGSurface) BeginGroup() {
	s.flushList()
	s.parent = append(s.parent, s.img)
	b := s.img.Bounds()
	var g *image.RGBA
	if n := len(s.spare); n > 0 && cap(s.spare[n-1].Pix) >= 4*b.Dx()*b.Dy() {
		g = s.spare[n-1]
		s.spare = s.spare[:n-1]
		g.Pix = g.Pix[:4*b.Dx()*b.Dy()]
		clear(g.Pix)
		g.Stride, g.Rect = 4*b.Dx(), b
	} else {
		g = image.NewRGBA(b)
	}
	s.img = g
	s.dc = nil
}

// EndGroup implements Surface.
func (s *GGSurface) EndGroup(opacity float64) {
	n := len(s.parent)
	if n == 0 {
		return
	}
	s.flushList()
	child := s.img
	s.img = s.parent[n-1]
	s.parent = s.parent[:n-1]
	s.dc = nil
	a := uint8(math.Round(255 * max(0, min(1, opacity))))
	if a == 0 {
		s.spare = append(s.spare[:0], child)
		return
	}
	draw.DrawMask(s.img, s.img.Bounds(), child, child.Bounds().Min, image.NewUniform(color.Alpha{A: a}), image.Point{}, draw.Over)
	s.spare = append(s.spare[:0], child) // keep one for the next group
}

var _ Surface = (*GGSurface)(nil)

// addFootprint accumulates a polygon smaller than a pixel (see coverage) for the next
// compositeFill and compositeStroke: its fill when fill is set, its outline when width (pixels) is
// positive, a dashed one drawn for the fraction duty of its length. It reports false, taking
// nothing, when the surface cannot: its image does not start at (0, 0).
func (s *GGSurface) addFootprint(fp pixelFootprint, fill bool, width, duty float64) bool {
	b := s.img.Bounds()
	if b.Min != (image.Point{}) {
		return false
	}
	if s.cov.w != b.Dx() || s.cov.h != b.Dy() {
		if s.cov.hasFill || s.cov.ink {
			return false
		}
		s.cov.reset(b.Dx(), b.Dy())
	}
	s.cov.add(&fp, fill, width, duty)
	return true
}

// compositeFill blends c where accumulated footprints have fill coverage.
func (s *GGSurface) compositeFill(c color.NRGBA) {
	if s.cov.hasFill {
		s.flushList()
		s.cov.composite(s.img.Pix, s.img.Stride, c, false)
	}
}

// compositeStroke blends c where accumulated footprints have outline coverage.
func (s *GGSurface) compositeStroke(c color.NRGBA) {
	if s.cov.ink {
		s.flushList()
		s.cov.composite(s.img.Pix, s.img.Stride, c, true)
	}
}
