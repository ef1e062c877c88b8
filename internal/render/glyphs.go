package render

import (
	"image"
	"image/color"
	"image/draw"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
)

// This file draws glyphs from their outlines rather than from cached masks: glyph runs (curved line
// labels, rotated and decorated text) on the raster surface, and character markers, which are glyph
// outlines filled as paths on any surface.

// glyphOutline is a glyph's outline in ems (font size 1), y down, with the pen at the origin.
type glyphOutline struct {
	segs []outlineSeg
	adv  float64
	// The box of the outline's points (control points included); x0 > x1 when the glyph has no ink.
	x0, y0, x1, y1 float64
}

type outlineSeg struct {
	op  sfnt.SegmentOp
	pts [3][2]float64
}

type outlineKey struct {
	variant uint8
	r       rune
}

// outline returns the cached outline of r in the font variant v; a character the font lacks is
// drawn as '?', as text draws it.
func (fs *Fonts) outline(v int, r rune) *glyphOutline {
	k := outlineKey{uint8(v), r}
	if o, ok := fs.outlines.Get(k); ok {
		return o
	}
	fs.mu.Lock()
	defer fs.mu.Unlock()
	o := &glyphOutline{x0: math.Inf(1), y0: math.Inf(1), x1: math.Inf(-1), y1: math.Inf(-1)}
	defer func() { fs.outlines.Add(k, o, int64(len(o.segs))*56+64) }()
	f := fs.fonts[v]
	x, err := f.GlyphIndex(&fs.buf, r)
	if err == nil && x == 0 {
		x, err = f.GlyphIndex(&fs.buf, '?')
	}
	if err != nil {
		return o
	}
	upem := float64(f.UnitsPerEm())
	ppem := fixed.I(int(f.UnitsPerEm())) // outlines in font units, in 26.6
	if adv, err := f.GlyphAdvance(&fs.buf, x, ppem, font.HintingNone); err == nil {
		o.adv = fixedToFloat(adv) / upem
	}
	segs, err := f.LoadGlyph(&fs.buf, x, ppem, nil)
	if err != nil {
		return o
	}
	o.segs = make([]outlineSeg, len(segs))
	for i, sg := range segs {
		o.segs[i].op = sg.Op
		for j := 0; j < segArgs(sg.Op); j++ {
			px, py := fixedToFloat(sg.Args[j].X)/upem, fixedToFloat(sg.Args[j].Y)/upem
			o.segs[i].pts[j] = [2]float64{px, py}
			o.x0, o.y0, o.x1, o.y1 = min(o.x0, px), min(o.y0, py), max(o.x1, px), max(o.y1, py)
		}
	}
	return o
}

// segArgs is the number of points of a segment.
func segArgs(op sfnt.SegmentOp) int {
	switch op {
	case sfnt.SegmentOpQuadTo:
		return 2
	case sfnt.SegmentOpCubeTo:
		return 3
	}
	return 1
}

// Underline and strikethrough bands, in ems below the baseline (y down): about where DejaVu Sans
// and Helvetica put them. A band is at least one pixel thick.
const (
	underlineTop      = 0.075
	strikethroughTop  = -0.3
	decorationEmThick = 0.05
)

// decorationBands returns the vertical extents in ems (y down) of the lines that st draws at size
// pixels: up to two bands.
func decorationBands(st FontStyle, size float64) (bands [2][2]float64, n int) {
	th := max(decorationEmThick, 1/size)
	if st.Underline {
		bands[n] = [2]float64{underlineTop, underlineTop + th}
		n++
	}
	if st.Strikethrough {
		bands[n] = [2]float64{strikethroughTop, strikethroughTop + th}
		n++
	}
	return bands, n
}

// drawRun draws a glyph run into dst from the glyphs' outlines: every glyph (and its decorations)
// is rasterized into one coverage mask, which is composited over its halo as drawText does.
func (fs *Fonts) drawRun(dst *image.RGBA, run []Glyph, t TextStyle, sc *textScratch) {
	if len(run) == 0 || t.Size <= 0 {
		return
	}
	v := variantOf(t.Font, t.FontStyle)
	size := t.Size
	bands, nb := decorationBands(t.FontStyle, size)
	sc.outs = sc.outs[:0]
	bx0, by0, bx1, by1 := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for _, g := range run {
		o := fs.outline(v, g.Rune)
		sc.outs = append(sc.outs, o)
		ex0, ey0, ex1, ey1 := o.x0, o.y0, o.x1, o.y1
		for _, b := range bands[:nb] {
			ex0, ex1 = min(ex0, 0), max(ex1, o.adv)
			ey0, ey1 = min(ey0, b[0]), max(ey1, b[1])
		}
		if !(ex0 <= ex1) {
			continue
		}
		sin, cos := sincosDeg(g.Angle)
		for _, ex := range [2]float64{ex0, ex1} {
			for _, ey := range [2]float64{ey0, ey1} {
				x := g.X + size*(ex*cos+ey*sin)
				y := g.Y + size*(ey*cos-ex*sin)
				bx0, by0, bx1, by1 = min(bx0, x), min(by0, y), max(bx1, x), max(by1, y)
			}
		}
	}
	if !(bx0 <= bx1) || math.IsInf(bx0, 0) || math.IsInf(by0, 0) || math.IsInf(bx1, 0) || math.IsInf(by1, 0) {
		return
	}
	pad := 1
	if t.Halo.A > 0 && t.HaloWidth > 0 {
		pad += int(math.Ceil(t.HaloWidth))
	}
	r := image.Rect(int(math.Floor(bx0))-pad, int(math.Floor(by0))-pad, int(math.Ceil(bx1))+pad, int(math.Ceil(by1))+pad)
	// Only what can show: the image, and around it as far as the halo reaches.
	r = r.Intersect(dst.Bounds().Inset(-pad))
	if r.Empty() {
		return
	}
	w, h := r.Dx(), r.Dy()
	sc.ras.Reset(w, h)
	ox, oy := float64(r.Min.X), float64(r.Min.Y)
	for i, g := range run {
		o := sc.outs[i]
		if len(o.segs) == 0 {
			continue
		}
		sin, cos := sincosDeg(g.Angle)
		gx, gy := g.X-ox, g.Y-oy
		pt := func(p [2]float64) (float32, float32) {
			return float32(gx + size*(p[0]*cos+p[1]*sin)), float32(gy + size*(p[1]*cos-p[0]*sin))
		}
		started := false
		for _, sg := range o.segs {
			if sg.op == sfnt.SegmentOpMoveTo {
				if started {
					sc.ras.ClosePath()
				}
				started = true
			}
			AddSegment(&sc.ras, sg.op, func(i int) (float32, float32) { return pt(sg.pts[i]) })
		}
		if started {
			sc.ras.ClosePath()
		}
	}
	sc.alpha.Pix = resize(sc.alpha.Pix, w*h)
	sc.alpha.Stride = w
	sc.alpha.Rect = image.Rect(0, 0, w, h)
	sc.ras.DrawOp = draw.Src
	sc.ras.Draw(&sc.alpha, sc.alpha.Rect, image.Opaque, image.Point{})
	if nb > 0 {
		// Decorations span each glyph's advance. They are rasterized on their own and drawn over
		// the glyphs' coverage, so where they cross a descender the coverage adds up whatever the
		// winding of the glyph's contours.
		sc.ras.Reset(w, h)
		for i, g := range run {
			sin, cos := sincosDeg(g.Angle)
			gx, gy := g.X-ox, g.Y-oy
			pt := func(ex, ey float64) (float32, float32) {
				return float32(gx + size*(ex*cos+ey*sin)), float32(gy + size*(ey*cos-ex*sin))
			}
			adv := sc.outs[i].adv
			for _, b := range bands[:nb] {
				sc.ras.MoveTo(pt(0, b[0]))
				sc.ras.LineTo(pt(0, b[1]))
				sc.ras.LineTo(pt(adv, b[1]))
				sc.ras.LineTo(pt(adv, b[0]))
				sc.ras.ClosePath()
			}
		}
		sc.ras.DrawOp = draw.Over
		sc.ras.Draw(&sc.alpha, sc.alpha.Rect, image.Opaque, image.Point{})
	}
	sc.compositeText(dst, sc.alpha.Pix, r, t)
}

// DrawCharacter draws the glyph of r in font and st (see Fonts) on s as a filled path: size pixels
// is the font size, the glyph's ink box is centred on (x, y), and it is turned angle degrees
// anticlockwise on screen. It is filled with fill and, when stroke has a colour and a width,
// outlined. This is how character markers are drawn, identically on every surface.
func (fs *Fonts) DrawCharacter(s Surface, r rune, fontName string, st FontStyle, x, y, size, angle float64, fill color.NRGBA, stroke StrokeStyle) {
	if size <= 0 || (fill.A == 0 && (stroke.Color.A == 0 || stroke.Width <= 0)) {
		return
	}
	o := fs.outline(variantOf(fontName, st), r)
	if len(o.segs) == 0 || !(o.x0 <= o.x1) {
		return
	}
	cx, cy := (o.x0+o.x1)/2, (o.y0+o.y1)/2
	sin, cos := sincosDeg(angle)
	pt := func(p [2]float64) (float64, float64) {
		dx, dy := (p[0]-cx)*size, (p[1]-cy)*size
		return x + dx*cos + dy*sin, y + dy*cos - dx*sin
	}
	// Each curve is flattened into 2 to 16 straight pieces, more for bigger glyphs.
	n := max(2, min(16, int(size/8)+2))
	s.NewPath()
	var last [2]float64
	for _, sg := range o.segs {
		switch sg.op {
		case sfnt.SegmentOpMoveTo:
			s.ClosePath()
			s.MoveTo(pt(sg.pts[0]))
		case sfnt.SegmentOpLineTo:
			s.LineTo(pt(sg.pts[0]))
		case sfnt.SegmentOpQuadTo:
			a, b := sg.pts[0], sg.pts[1]
			for i := 1; i <= n; i++ {
				t := float64(i) / float64(n)
				u := 1 - t
				s.LineTo(pt([2]float64{u*u*last[0] + 2*u*t*a[0] + t*t*b[0], u*u*last[1] + 2*u*t*a[1] + t*t*b[1]}))
			}
		case sfnt.SegmentOpCubeTo:
			a, b, c := sg.pts[0], sg.pts[1], sg.pts[2]
			for i := 1; i <= n; i++ {
				t := float64(i) / float64(n)
				u := 1 - t
				s.LineTo(pt([2]float64{
					u*u*u*last[0] + 3*u*u*t*a[0] + 3*u*t*t*b[0] + t*t*t*c[0],
					u*u*u*last[1] + 3*u*u*t*a[1] + 3*u*t*t*b[1] + t*t*t*c[1],
				}))
			}
		}
		last = sg.pts[segArgs(sg.op)-1]
	}
	s.ClosePath()
	if fill.A > 0 {
		s.Fill(fill)
	}
	if stroke.Color.A > 0 && stroke.Width > 0 {
		s.Stroke(stroke)
	}
}

// AddSegment adds one glyph outline segment of operation op (MoveTo, LineTo, QuadTo or
// CubeTo) to ras; pt(i) is its i-th point already in the rasteriser's pixel space. The text
// drawn here and the signed distance glyphs of internal/vectorfonts both trace with it.
func AddSegment(ras *vector.Rasterizer, op sfnt.SegmentOp, pt func(i int) (x, y float32)) {
	switch op {
	case sfnt.SegmentOpMoveTo:
		ras.MoveTo(pt(0))
	case sfnt.SegmentOpLineTo:
		ras.LineTo(pt(0))
	case sfnt.SegmentOpQuadTo:
		ax, ay := pt(0)
		bx, by := pt(1)
		ras.QuadTo(ax, ay, bx, by)
	case sfnt.SegmentOpCubeTo:
		ax, ay := pt(0)
		bx, by := pt(1)
		cx, cy := pt(2)
		ras.CubeTo(ax, ay, bx, by, cx, cy)
	}
}
