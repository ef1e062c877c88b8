package render

import (
	"image"
	"image/color"
	"math"
	"strconv"
)

// vecPath is the state the vector surfaces (SVG, PDF) share: the current transform and the current
// path, kept in surface units after the transform, as GGSurface keeps them.
type vecPath struct {
	m     Matrix
	stack []Matrix
	pathBuf
	fonts *Fonts
	w, h  int
}

func newVecPath(w, h int, fonts *Fonts) vecPath {
	if fonts == nil {
		var err error
		if fonts, err = NewFonts(); err != nil {
			panic(err) // the embedded font is valid; see TestFonts
		}
	}
	return vecPath{m: Identity(), fonts: fonts, w: w, h: h}
}

func (p *vecPath) Size() (int, int) { return p.w, p.h }

func (p *vecPath) Push(m Matrix) {
	p.stack = append(p.stack, p.m)
	p.m = m.Then(p.m)
}

func (p *vecPath) Pop() {
	if n := len(p.stack); n > 0 {
		p.m = p.stack[n-1]
		p.stack = p.stack[:n-1]
	}
}

func (p *vecPath) MoveTo(x, y float64) { p.moveTo(p.m.Apply(x, y)) }

func (p *vecPath) LineTo(x, y float64) { p.lineTo(p.m.Apply(x, y)) }

// MeasureText measures with the embedded font, as the raster backend does, so labels are placed
// identically on every surface.
func (p *vecPath) MeasureText(str string, t TextStyle) TextMetrics {
	if t.Size <= 0 {
		return TextMetrics{}
	}
	w, a, d := p.fonts.face(t).measure(str)
	return TextMetrics{Width: w, Ascent: a, Descent: d}
}

// decorationQuads appends, for each glyph of run, the corners of its underline and strikethrough
// (anticlockwise on screen), in surface units after the current transform: vector surfaces draw them
// as paths, so they follow curved labels as the raster's do.
func (p *vecPath) decorationQuads(dst [][4]pathPoint, run []Glyph, t TextStyle) [][4]pathPoint {
	bands, nb := decorationBands(t.FontStyle, t.Size)
	if nb == 0 {
		return dst
	}
	v := variantOf(t.Font, t.FontStyle)
	for _, g := range run {
		adv := p.fonts.outline(v, g.Rune).adv * t.Size
		x, y := p.m.Apply(g.X, g.Y)
		sin, cos := sincosDeg(g.Angle)
		pt := func(ex, ey float64) pathPoint { return pathPoint{x + ex*cos + ey*sin, y + ey*cos - ex*sin} }
		for _, b := range bands[:nb] {
			y0, y1 := b[0]*t.Size, b[1]*t.Size
			dst = append(dst, [4]pathPoint{pt(0, y0), pt(0, y1), pt(adv, y1), pt(adv, y0)})
		}
	}
	return dst
}

// markerShape returns the outline of a marker, in surface units, and whether it is filled (crosses
// are lines, drawn with the fill colour when there is no outline).
func (p *vecPath) markerShape(x, y float64, m MarkerStyle, size, angle float64, fill color.NRGBA, stroke StrokeStyle) ([]pathPoint, []subpath, bool, StrokeStyle) {
	x, y = p.m.Apply(x, y)
	size *= p.m.lineScale()
	pts, subs := markerPath(nil, nil, x, y, m, size)
	rotateAbout(pts, x, y, angle)
	filled := m != MarkerCross && m != MarkerX
	if !filled && (stroke.Color.A == 0 || stroke.Width <= 0) {
		stroke = StrokeStyle{Color: fill, Width: max(1, size/8)}
	}
	return pts, subs, filled, stroke
}

// imageMatrix returns the transform from image pixels of img to surface units for DrawImage.
func (p *vecPath) imageMatrix(img image.Image, x, y, w, h float64) Matrix {
	sb := img.Bounds()
	m := Matrix{XX: w / float64(sb.Dx()), YY: h / float64(sb.Dy())}
	m.X0, m.Y0 = x, y
	return m.Then(p.m)
}

// fmtNum writes f with at most 3 decimals and no trailing zeros.
func fmtNum(b []byte, f float64) []byte {
	if f > -0.0005 && f < 0.0005 {
		return append(b, '0')
	}
	n := len(b)
	b = strconv.AppendFloat(b, f, 'f', 3, 64)
	// trim trailing zeros and point
	i := len(b)
	for i > n && b[i-1] == '0' {
		i--
	}
	if i > n && b[i-1] == '.' {
		i--
	}
	return b[:i]
}

// sincosDeg returns the sine and cosine of an angle in degrees, exact for 0.
func sincosDeg(deg float64) (sin, cos float64) {
	if deg == 0 {
		return 0, 1
	}
	return math.Sincos(deg * math.Pi / 180)
}
