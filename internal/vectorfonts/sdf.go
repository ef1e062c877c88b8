package vectorfonts

import (
	"image"
	"math"

	"github.com/mapfarm/mapfarm/internal/render"
	"golang.org/x/image/font"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"golang.org/x/image/vector"
	"google.golang.org/protobuf/encoding/protowire"
)

// Glyph is one glyph of a range, in pixels at FontSize, as the protocol buffer holds it.
type Glyph struct {
	ID            rune
	Width, Height int // the ink box
	Left          int // from the pen position to the ink box's left edge
	// Top is the ink box's top edge above the baseline, less the font's ascent rounded up (as
	// Mapbox's fontnik writes it, which MapLibre's text layout assumes).
	Top int
	// Advance is the pen's advance, rounded down.
	Advance int
	// Bitmap is the distance field, (Width+2·Buffer) × (Height+2·Buffer) bytes, rows top down;
	// empty for a glyph without ink (a space).
	Bitmap []byte
}

func (gl *Glyph) encode() []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(gl.ID))
	if len(gl.Bitmap) > 0 {
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendBytes(b, gl.Bitmap)
	}
	for _, f := range []struct {
		num protowire.Number
		v   uint64
	}{
		{3, uint64(gl.Width)}, {4, uint64(gl.Height)},
		{5, protowire.EncodeZigZag(int64(gl.Left))}, {6, protowire.EncodeZigZag(int64(gl.Top))},
		{7, uint64(gl.Advance)},
	} {
		b = protowire.AppendTag(b, f.num, protowire.VarintType)
		b = protowire.AppendVarint(b, f.v)
	}
	return b
}

// drawer draws the glyphs of one font, reusing its buffers.
type drawer struct {
	f      *sfnt.Font
	ppem   fixed.Int26_6
	ascent int
	ras    vector.Rasterizer
	edt    edt
}

func newDrawer(f *sfnt.Font) *drawer {
	d := &drawer{f: f, ppem: fixed.I(FontSize)}
	var buf sfnt.Buffer
	if m, err := f.Metrics(&buf, d.ppem, font.HintingNone); err == nil {
		d.ascent = m.Ascent.Ceil() // FreeType's rounded size metrics, which fontnik reads
	}
	return d
}

// glyph draws r; false when the font has no glyph for it.
func (d *drawer) glyph(buf *sfnt.Buffer, r rune) (Glyph, bool, error) {
	idx, err := d.f.GlyphIndex(buf, r)
	if err != nil || idx == 0 {
		return Glyph{}, false, nil // a code point the font lacks is left out
	}
	bounds, adv, err := d.f.GlyphBounds(buf, idx, d.ppem, font.HintingNone)
	if err != nil {
		return Glyph{}, false, err
	}
	gl := Glyph{ID: r, Advance: adv.Floor()} // whole pixels, truncated as fontnik does
	// sfnt's y grows downwards: Min.Y is the ink's top, negative above the baseline
	x0, y0 := bounds.Min.X.Floor(), bounds.Min.Y.Floor()
	x1, y1 := bounds.Max.X.Ceil(), bounds.Max.Y.Ceil()
	gl.Left, gl.Top = x0, -y0-d.ascent
	if x1 <= x0 || y1 <= y0 {
		return gl, true, nil
	}
	gl.Width, gl.Height = x1-x0, y1-y0
	segs, err := d.f.LoadGlyph(buf, idx, d.ppem, nil)
	if err != nil {
		return Glyph{}, false, err
	}
	w, h := gl.Width+2*Buffer, gl.Height+2*Buffer
	d.ras.Reset(w, h)
	dx, dy := float32(Buffer-x0), float32(Buffer-y0)
	pt := func(p fixed.Point26_6) (float32, float32) {
		return float32(p.X)/64 + dx, float32(p.Y)/64 + dy
	}
	for _, s := range segs {
		render.AddSegment(&d.ras, s.Op, func(i int) (float32, float32) { return pt(s.Args[i]) })
	}
	d.ras.ClosePath()
	alpha := image.NewAlpha(image.Rect(0, 0, w, h))
	d.ras.Draw(alpha, alpha.Bounds(), image.Opaque, image.Point{})
	gl.Bitmap = d.edt.field(alpha.Pix, w, h)
	return gl, true, nil
}

// inf stands for an infinite squared distance; large but safe to add squares to.
const inf = 1e20

// edt computes distance fields, reusing its buffers.
type edt struct {
	outer, inner []float64 // squared distances to the nearest ink / blank
	f, z         []float64
	v            []int
}

// field returns the distance field of a coverage image (one byte a pixel, 255 covered): for each
// pixel, 255 - 255·(d/Radius + Cutoff) clamped to bytes, d the signed distance to the outline,
// negative inside. A partly covered pixel is taken to hold the edge at 0.5 - coverage of a
// pixel from its centre, as TinySDF does.
func (e *edt) field(cov []byte, w, h int) []byte {
	n := w * h
	e.outer = grow(e.outer, n)
	e.inner = grow(e.inner, n)
	m := max(w, h)
	e.f, e.z = grow(e.f, m), grow(e.z, m+1)
	if cap(e.v) < m {
		e.v = make([]int, m)
	}
	e.v = e.v[:m]
	for i, c := range cov {
		a := float64(c) / 255
		switch {
		case c == 255:
			e.outer[i], e.inner[i] = 0, inf
		case c == 0:
			e.outer[i], e.inner[i] = inf, 0
		default:
			d := 0.5 - a
			e.outer[i], e.inner[i] = 0, 0
			if d > 0 {
				e.outer[i] = d * d
			} else {
				e.inner[i] = d * d
			}
		}
	}
	e.transform(e.outer, w, h)
	e.transform(e.inner, w, h)
	out := make([]byte, n)
	for i := range out {
		d := math.Sqrt(e.outer[i]) - math.Sqrt(e.inner[i])
		v := math.Round(255 - 255*(d/Radius+Cutoff))
		out[i] = byte(min(max(v, 0), 255))
	}
	return out
}

// transform replaces each value of the w×h grid by the least squared distance plus value over the
// grid: columns, then rows.
func (e *edt) transform(g []float64, w, h int) {
	for x := range w {
		e.line(g, x, w, h)
	}
	for y := range h {
		e.line(g, y*w, 1, w)
	}
}

// line is the one-dimensional transform of the n values of g from off, stride apart: the lower
// envelope of the parabolas rooted at each value (Felzenszwalb and Huttenlocher, 2012).
func (e *edt) line(g []float64, off, stride, n int) {
	f, z, v := e.f[:n], e.z[:n+1], e.v[:n]
	for q := range n {
		f[q] = g[off+q*stride]
	}
	k := 0
	v[0], z[0], z[1] = 0, -inf, inf
	for q := 1; q < n; q++ {
		fq := f[q] + float64(q*q)
		s := (fq - f[v[k]] - float64(v[k]*v[k])) / float64(2*(q-v[k]))
		for s <= z[k] {
			k--
			s = (fq - f[v[k]] - float64(v[k]*v[k])) / float64(2*(q-v[k]))
		}
		k++
		v[k], z[k], z[k+1] = q, s, inf
	}
	k = 0
	for q := range n {
		for z[k+1] < float64(q) {
			k++
		}
		r := float64(q - v[k])
		g[off+q*stride] = f[v[k]] + r*r
	}
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}
